"""Hardened parsing, transforms, path data and wheel measurement."""

from __future__ import annotations

import math

import pytest

from judges.perturbation.pathdata import path_points
from judges.perturbation.svg_geometry import bbox, reference_diameter, require_bbox, wheel_diameter
from judges.perturbation.svgtree import (
    apply,
    invert,
    multiply,
    parse_svg,
    parse_transform,
    require_id,
    serialize,
)
from regua.errors import InputError

SVG = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 800 600">{}</svg>'


def test_parser_does_not_expand_entities_or_fetch() -> None:
    evil = (
        '<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY xxe SYSTEM "file:///etc/passwd">'
        '<!ENTITY big "AAAAAAAAAA">]>'
        '<svg xmlns="http://www.w3.org/2000/svg"><text id="t">&xxe;&big;</text></svg>'
    )
    tree = parse_svg(evil)
    out = serialize(tree).decode()
    assert "root:" not in out
    assert "AAAAAAAAAA" not in out


def test_parser_rejects_non_svg_and_garbage() -> None:
    with pytest.raises(InputError, match="not <svg>"):
        parse_svg("<html/>")
    with pytest.raises(InputError, match="well-formed"):
        parse_svg("<svg")


def test_transform_parsing_and_inverse() -> None:
    m = parse_transform("translate(10 20) rotate(90) scale(2, 3)")
    x, y = apply(m, (1.0, 1.0))
    assert (round(x, 6), round(y, 6)) == (10 - 3, 20 + 2)
    back = apply(invert(m), (x, y))
    assert back == pytest.approx((1.0, 1.0))
    assert multiply(m, invert(m)) == pytest.approx((1, 0, 0, 1, 0, 0), abs=1e-9)
    rot = parse_transform("rotate(180 50 50)")
    assert apply(rot, (0.0, 0.0)) == pytest.approx((100.0, 100.0))
    assert parse_transform("skewX(45)")[2] == pytest.approx(1.0)


def test_path_points_cover_arcs_curves_and_relative_commands() -> None:
    pts = path_points("M175 440 a85 85 0 1 0 170 0 a85 85 0 1 0 -170 0 Z")
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    assert min(xs) == pytest.approx(175, abs=0.5) and max(xs) == pytest.approx(345, abs=0.5)
    assert min(ys) == pytest.approx(355, abs=1.0) and max(ys) == pytest.approx(525, abs=1.0)
    compact = path_points("M0 0a10 10 0 1120 0")  # compact arc flags "11"
    assert compact[-1] == pytest.approx((20.0, 0.0))
    hv = path_points("M10 10 h5 v5 H0 V0 l1 1 2 2 z")
    assert hv[:5] == [(10, 10), (15, 10), (15, 15), (0, 15), (0, 0)]
    assert hv[-1] == (10, 10)
    curve = path_points("M0 0 C0 10 10 10 10 0 S20 -10 20 0 Q25 5 30 0 T40 0")
    assert curve[-1] == pytest.approx((40.0, 0.0))
    assert max(p[1] for p in curve) == pytest.approx(7.5)
    assert path_points("M0 0 L10 10 L oops") == [(0, 0), (10, 10)]


@pytest.mark.parametrize(
    "shape",
    [
        '<circle id="wheel-front" cx="100" cy="100" r="50"/>',
        '<ellipse id="wheel-front" cx="100" cy="100" rx="50" ry="50"/>',
        '<path id="wheel-front" d="M50 100 A50 50 0 1 0 150 100 A50 50 0 1 0 50 100Z"/>',
        '<g transform="scale(2)"><circle id="wheel-front" cx="50" cy="50" r="25"/></g>',
        '<g transform="rotate(30 100 100)"><circle id="wheel-front" cx="100" cy="100" r="50"/></g>',
        '<defs><circle id="w" cx="0" cy="0" r="50"/></defs>'
        '<use id="wheel-front" href="#w" x="100" y="100"/>',
    ],
)
def test_wheel_diameter_is_measured_in_root_user_space(shape: str) -> None:
    tree = parse_svg(SVG.format(shape))
    assert wheel_diameter(tree) == pytest.approx(100.0, rel=0.01)
    box = require_bbox(require_id(tree, "wheel-front"))
    assert box.center == pytest.approx((100.0, 100.0), abs=0.6)


def test_reference_diameter_on_the_sample(good_svg: bytes) -> None:
    tree = parse_svg(good_svg)
    assert reference_diameter(tree) == pytest.approx(180.0)
    pedal = require_bbox(require_id(tree, "pedal-left"))
    assert (pedal.x0, pedal.y0, pedal.x1, pedal.y1) == (341, 414, 369, 424)
    assert bbox(require_id(tree, "bicycle")) is not None
    hidden = parse_svg(SVG.format('<rect id="r" width="5" height="5" display="none"/>'))
    assert bbox(require_id(hidden, "r")) is None
    with pytest.raises(InputError):
        reference_diameter(parse_svg(SVG.format("")))


def test_mirror_matrix_maps_ellipse_points() -> None:
    tree = parse_svg(
        SVG.format(
            '<g transform="matrix(-1 0 0 1 800 0)"><rect id="a" x="10" y="0" '
            'width="20" height="10"/></g>'
        )
    )
    box = require_bbox(require_id(tree, "a"))
    assert (box.x0, box.x1) == (770, 790)
    assert math.isclose(box.width, 20)
