"""Named, versioned prompt templates of the vision judge (what a profile's ``prompt`` names).

A judge profile file names its template by version (``prompt: criterion-json-strict@1``) instead
of pasting the text; the text is frozen here, and a changed text is a new version. The three
stances differ only in one rule line, so several vision judges of one panel can be strict,
balanced and lenient with everything else equal. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping

from judges.vision.prompt import DEFAULT_TEMPLATE, SYSTEM_PROMPT, TEMPLATE_SEPARATOR, USER_TEMPLATE
from regua.errors import ConfigurationError

BALANCED = "criterion-json@1"
"""The built-in vision profiles' template (``vision-llm-openai@1``, ``vision-llm-anthropic@1``)."""

_REPLY_RULE = "- Reply with one JSON object"

STRICT_RULE = (
    '- Answer "pass" only when the frames clearly show every part of the question; when a part '
    'is missing, hidden or only suggested, answer "fail" or "uncertain".'
)
LENIENT_RULE = (
    '- Answer "pass" when the frames show the question is broadly met; answer "fail" only for '
    "a failure you can point to in a frame."
)


def _with_rule(rule: str) -> str:
    """The balanced template with one more rule line before the reply format."""
    head, sep, tail = SYSTEM_PROMPT.partition(_REPLY_RULE)
    assert sep, "the system prompt lost its reply rule"
    return head + rule + "\n" + sep + tail + TEMPLATE_SEPARATOR + USER_TEMPLATE


def template_with_rule(rule: str) -> str:
    """The balanced template with one more rule line (``- ...``) before the reply format.

    How a candidate judge's wording is made (:mod:`judges.candidates`): everything else equal.
    """
    return _with_rule(rule)


TEMPLATES: Mapping[str, str] = {
    BALANCED: DEFAULT_TEMPLATE,
    "criterion-json-strict@1": _with_rule(STRICT_RULE),
    "criterion-json-lenient@1": _with_rule(LENIENT_RULE),
}
"""Template version → template text (system part, ``\\n---\\n``, user part)."""


def template_text(version: str) -> str:
    """The frozen text of a named template version (:class:`ConfigurationError` otherwise)."""
    try:
        return TEMPLATES[version]
    except KeyError:
        known = ", ".join(sorted(TEMPLATES))
        raise ConfigurationError(
            f"unknown prompt template {version!r}; known: {known} (or give prompt_template text)"
        ) from None
