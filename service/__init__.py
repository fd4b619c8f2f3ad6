"""regua's service: storage, the pipeline, evaluation, review, reports and their front doors.

Layers, top to bottom (each imports only those below it; ``pyproject.toml``'s import-linter
contracts keep it so): the command line (:mod:`service.cli`), the demo, the HTTP server with its
pages and API (:mod:`service.server`, :mod:`service.web`, :mod:`service.api`), experiments and
generation, the service context, calibration, reports and pairwise ranking, review, the
pipeline, evaluation, access control, the task store and storage. The core it drives (``tasks``,
``checks``, ``render``, ``sandbox``, ``judges``) never imports it.
"""
