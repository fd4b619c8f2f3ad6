"""Type stub of the optional compiled walk (``checks/_walkc.pyx``, built by scripts/setup.sh)."""

from collections.abc import Callable, Iterable

from lxml import etree

def configure(
    plain_names: Iterable[str],
    css_hints: Iterable[str],
    tag_info: Callable[[str], tuple[str, str, str, bool]],
    suspicious: Callable[[str], bool],
) -> None:
    """What the Python walk decides with: its plain names, CSS hints, tag infos, pooled test."""

def walk(
    root: etree._Element, max_elements: int, escaped: bool
) -> tuple[int, list[tuple[etree._Element, bool]], int, int] | None:
    """The shared walk's common case, or None to leave the walk to Python.

    (elements, the elements to inspect in Python each with whether an attribute name is not
    plain, length of the pooled values joined with '"', length of the longest pooled value).
    """
