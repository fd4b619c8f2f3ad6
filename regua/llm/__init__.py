"""The one model client: every call regua makes to a language model goes through here.

:class:`~regua.llm.call.ModelCall` (turns of text and image parts) →
:func:`~regua.llm.client.call_model` (the provider of :data:`~regua.llm.registry.PROVIDERS`,
retries, ``Retry-After``, the limiter of :mod:`~regua.llm.limits`, the redaction step of
:mod:`~regua.llm.redact`) → :class:`~regua.llm.client.CallResult`. The base-URL rule is
:mod:`~regua.llm.endpoint`, the price table :mod:`~regua.llm.prices`, key variables bound to
endpoints :mod:`~regua.llm.keys`; :mod:`~regua.llm.testing` is a fake model server for tests and
the demo. Judges and generation call the same code; only ``regua.llm`` speaks HTTP to a model.
"""
