"""``Registry[T]``: one duplicate policy by content, one unknown-name error, lazy built-ins and
entry points of installed packages (a real distribution on ``sys.path``)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from regua.errors import ConfigurationError, NotFoundError
from regua.registry import DuplicatePluginError, Registry, UnknownPluginError


def test_same_content_is_a_no_op_and_other_content_is_refused_unless_replaced() -> None:
    reg: Registry[dict[str, int]] = Registry("widget")
    first = reg.register("w", {"size": 1})
    assert reg.register("w", {"size": 1}) is first  # equal content: the registered one stays
    with pytest.raises(DuplicatePluginError, match="widget w is already registered") as err:
        reg.register("w", {"size": 2})
    assert isinstance(err.value, ConfigurationError)
    assert reg.get("w") == {"size": 1}  # the refused one changed nothing
    assert reg.register("w", {"size": 2}, replace=True) == {"size": 2}
    assert reg.get("w") == {"size": 2}


def test_content_key_decides_what_counts_as_the_same() -> None:
    reg: Registry[tuple[str, int]] = Registry("spec", content=lambda s: s[1])
    reg.register("a", ("first", 1))
    assert reg.register("a", ("renamed", 1)) == ("first", 1)  # same key: the same plugin
    with pytest.raises(DuplicatePluginError):
        reg.register("a", ("first", 2))


def test_unknown_name_lists_the_known_ones_and_is_not_found() -> None:
    reg: Registry[int] = Registry("gadget")
    reg.register("b", 2)
    reg.register("a", 1)
    with pytest.raises(UnknownPluginError) as err:
        reg.get("c")
    assert isinstance(err.value, NotFoundError)
    assert str(err.value) == "unknown gadget 'c'; known: a, b"
    assert err.value.known == ["a", "b"]
    assert reg.names() == ["a", "b"] and reg.values() == [2, 1]  # sorted names, order kept
    assert "a" in reg and "c" not in reg and reg.find("c") is None
    reg.unregister("a")
    assert reg.names() == ["b"]


class _AreaError(UnknownPluginError, ConfigurationError):
    """An area keeping its own error family."""


def test_an_area_can_keep_its_error_family() -> None:
    reg: Registry[int] = Registry("kind", unknown=_AreaError)
    with pytest.raises(ConfigurationError, match="unknown kind 'x'; known: \\(none\\)"):
        reg.get("x")


def _plugin_package(root: Path, module: str, body: str) -> None:
    (root / f"{module}.py").write_text(body)


def test_builtins_are_modules_loaded_at_first_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    reg: Registry[str] = Registry("thing", builtins=("regua_test_builtin_things",))
    monkeypatch.setattr(sys.modules[__name__], "REG", reg, raising=False)
    _plugin_package(
        tmp_path,
        "regua_test_builtin_things",
        "from tests.regua.test_registry import REG\nREG.register('bolt', 'a bolt')\n"
        "assert REG.names() == ['bolt']  # reading during the import does not recurse\n",
    )
    assert "regua_test_builtin_things" not in sys.modules  # nothing imported yet
    assert reg.get("bolt") == "a bolt"
    assert reg.names() == ["bolt"]
    monkeypatch.delitem(sys.modules, "regua_test_builtin_things")


def test_entry_points_of_installed_packages_are_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    info = tmp_path / "regua_test_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: regua-test-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[regua.test_things]\nnut = regua_test_plugin_mod:NUT\nbroken = regua_test_missing:X\n"
    )
    _plugin_package(tmp_path, "regua_test_plugin_mod", "NUT = 'a nut'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    reg: Registry[str] = Registry("thing", entry_point_group="regua.test_things")
    assert reg.names() == ["nut"]  # the broken plugin is logged and left out
    assert reg.get("nut") == "a nut"
    monkeypatch.delitem(sys.modules, "regua_test_plugin_mod")
