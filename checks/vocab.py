"""Names the static checks know: dangerous elements, URL-bearing attributes, harmless attributes."""

from __future__ import annotations

import re
from typing import Any, cast

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"
XML_NS = "http://www.w3.org/XML/1998/namespace"
XSLT_NS = "http://www.w3.org/1999/XSL/Transform"

SECURITY_CHECKS = (
    "script",
    "event-handler",
    "javascript-url",
    "external-ref",
    "foreign-object",
    "raster-image",
    "animation",
)

SCRIPT_ELEMENTS = frozenset({"script", "handler", "listener"})
FRAME_ELEMENTS = frozenset({"iframe", "frame", "frameset", "embed", "object", "applet", "portal"})
SMIL_ELEMENTS = frozenset(
    {"animate", "set", "animatetransform", "animatemotion", "animatecolor", "discard"}
)
IMAGE_ELEMENTS = frozenset({"image", "img"})
SMIL_VALUE_ATTRS = ("to", "from", "by", "values")

# Attributes (lower-cased, xlink:/xml: prefixed) whose value is fetched or navigated to.
URL_ATTRS = frozenset(
    [
        "href",
        "xlink:href",
        "src",
        "action",
        "formaction",
        "data",
        "poster",
        "background",
        "codebase",
        "cite",
        "longdesc",
        "lowsrc",
        "dynsrc",
        "usemap",
        "profile",
        "classid",
        "manifest",
        "icon",
        "code",
        "object",
        "movie",
        "xml:base",
        "base",
        "implementation",
        "ping",
        "srcset",
        "imagesrcset",
        "archive",
        "attributionsrc",
        "schemalocation",
    ]
)
LIST_URL_ATTRS = frozenset(
    ["ping", "srcset", "imagesrcset", "archive", "attributionsrc", "schemalocation"]
)

# Attribute names, spelled as lxml reports them, that can neither fetch, run nor animate by
# their name alone. Elements carrying only these take the fast path: their values are still
# inspected, all at once per document, and any suspicious value sends the document through the
# careful per-attribute path.
PLAIN_ATTRS = frozenset(
    [
        "x",
        "y",
        "x1",
        "y1",
        "x2",
        "y2",
        "cx",
        "cy",
        "r",
        "rx",
        "ry",
        "fx",
        "fy",
        "fr",
        "dx",
        "dy",
        "width",
        "height",
        "d",
        "points",
        "transform",
        "fill",
        "stroke",
        "stroke-width",
        "stroke-linecap",
        "stroke-linejoin",
        "stroke-dasharray",
        "stroke-dashoffset",
        "stroke-opacity",
        "stroke-miterlimit",
        "fill-opacity",
        "fill-rule",
        "clip-rule",
        "opacity",
        "id",
        "class",
        "style",
        "viewBox",
        "version",
        "baseProfile",
        "preserveAspectRatio",
        "font-family",
        "font-size",
        "font-weight",
        "font-style",
        "font-variant",
        "font-stretch",
        "text-anchor",
        "dominant-baseline",
        "alignment-baseline",
        "baseline-shift",
        "letter-spacing",
        "word-spacing",
        "text-decoration",
        "writing-mode",
        "direction",
        "unicode-bidi",
        "rotate",
        "textLength",
        "lengthAdjust",
        "startOffset",
        "offset",
        "stop-color",
        "stop-opacity",
        "gradientUnits",
        "gradientTransform",
        "spreadMethod",
        "patternUnits",
        "patternContentUnits",
        "patternTransform",
        "filterUnits",
        "primitiveUnits",
        "stdDeviation",
        "in",
        "in2",
        "result",
        "mode",
        "operator",
        "k1",
        "k2",
        "k3",
        "k4",
        "flood-color",
        "flood-opacity",
        "lighting-color",
        "type",
        "visibility",
        "display",
        "overflow",
        "color",
        "markerWidth",
        "markerHeight",
        "refX",
        "refY",
        "orient",
        "markerUnits",
        "clipPathUnits",
        "maskUnits",
        "maskContentUnits",
        "pathLength",
        "shape-rendering",
        "text-rendering",
        "image-rendering",
        "color-interpolation",
        "color-interpolation-filters",
        "vector-effect",
        "paint-order",
        "mix-blend-mode",
        "isolation",
        "clip-path",
        "mask",
        "filter",
        "marker-start",
        "marker-mid",
        "marker-end",
        "numOctaves",
        "baseFrequency",
        "seed",
        "stitchTiles",
        "scale",
        "xChannelSelector",
        "yChannelSelector",
        "kernelMatrix",
        "order",
        "divisor",
        "bias",
        "targetX",
        "targetY",
        "edgeMode",
        "kernelUnitLength",
        "preserveAlpha",
        "surfaceScale",
        "specularConstant",
        "specularExponent",
        "diffuseConstant",
        "azimuth",
        "elevation",
        "pointsAtX",
        "pointsAtY",
        "pointsAtZ",
        "limitingConeAngle",
        "tableValues",
        "slope",
        "intercept",
        "amplitude",
        "exponent",
        "radius",
        "lang",
        "tabindex",
        "role",
        "focusable",
        "aria-label",
        "aria-hidden",
        "aria-labelledby",
        "aria-describedby",
    ]
) | {f"{{{XML_NS}}}space", f"{{{XML_NS}}}lang"}

# Substrings without which a stylesheet or style= value cannot fetch, animate or run anything.
CSS_HINTS = (
    "url", "\\", "image", "fade", "anim", "transition", "@", "src", "//", "expression",
    "behavior", "binding", "progid", "script",
)  # fmt: skip
LOCAL_URL = re.compile(r"url\(\s{0,8}+['\"]?+#[^)'\"\\\s]{0,256}+['\"]?+\s{0,8}+\)")

# Markup hidden in comments, CDATA, PIs or attribute text is inert for an XML parser but live if
# the SVG is ever parsed as HTML (comment/CDATA confusion, mXSS): flagged as defence in depth.
HIDDEN_TAG = re.compile(r"<\s{0,8}(?:script|iframe|frame|embed|object|portal)\b", re.I)
HIDDEN_HANDLER = re.compile(r"[\s/\"'](on[a-z]+)\s{0,8}=", re.I)


def attr_name(name: str) -> str:
    """Map an lxml attribute name to its lower-cased name, keeping ``xlink:``/``xml:`` prefixes."""
    if name.startswith("{"):
        ns, _, local = name[1:].partition("}")
        if ns == XLINK_NS:
            return "xlink:" + local.lower()
        if ns == XML_NS:
            return "xml:" + local.lower()
        return local.lower()
    return name.lower()


def local_name(tag: str) -> str:
    """``{ns}name`` → ``name``."""
    return tag.rpartition("}")[2]


def src_line(node: Any) -> int | None:
    """Source line of an lxml node (the stubs type it loosely)."""
    line = node.sourceline
    return line if isinstance(line, int) else None


def attr_items(el: Any) -> list[tuple[str, str]]:
    """``el.items()`` typed: lxml parses text, so names and values are ``str``."""
    return cast(list[tuple[str, str]], el.items())


def attr_values(el: Any) -> list[str]:
    """``el.values()`` typed as ``list[str]``."""
    return cast(list[str], el.values())
