"""How a render job fails, in words fit for the people who submitted the work.

Playwright's error texts carry the browser's launch log (``<launching> /usr/bin/chromium --flag
...``) and a call log; none of that is the submitter's business, and the command line describes
the sandbox's inside. :func:`public_detail` keeps the first meaningful line only.
:class:`BrowserCrashedError` is raised when the Chromium *browser* process (not a renderer) died
during a job: a failure of the machinery, which the worker reports with cause ``crash`` and
``retire`` so that the host retries the job on a fresh worker.
"""

from __future__ import annotations

import re

from regua.errors import RenderError

DETAIL_MAX = 300
_CUT = re.compile(r"\n\s*(?:Call log:|Browser logs:|=+ logs =+|<launching>)", re.I)
_FLAGS = re.compile(
    r"(?:\S*/)?(?:chromium|chrome|headless_shell)\S*(?:\s+--\S+)+|(?:\s--[\w-]+(?:=\S+)?)+"
)


class BrowserCrashedError(RenderError):
    """The worker's Chromium browser process died during a job (machinery, not the drawing)."""

    cause = "crash"
    retire = True


def public_detail(text: str) -> str:
    """The first line of an error text, without launch logs, call logs or Chromium flags."""
    head = _CUT.split(text, maxsplit=1)[0]
    line = next((ln.strip() for ln in head.splitlines() if ln.strip()), "")
    line = _FLAGS.sub(" [arguments removed]", line)
    return line[:DETAIL_MAX]
