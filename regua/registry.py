"""``Registry[T]``: the one shape of every extension point (checks, judges, backends, stores, …).

A registry maps names to plugins. Built-ins register exactly like plugins: a registry names the
modules holding its built-ins (each registers itself on import) and, where it has one, an entry
point group of installed packages; both are loaded the first time the registry is read.

One duplicate policy: registering a name again with the same content (the same object, or
equal by the registry's ``content`` key, e.g. a profile's content hash) returns the plugin
already registered; other content under a taken name is refused with
:class:`DuplicatePluginError` unless ``replace=True``. An unknown name raises
:class:`UnknownPluginError` listing the known ones.
"""

from __future__ import annotations

import importlib
import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from importlib.metadata import entry_points
from types import ModuleType
from typing import Generic, TypeVar

from regua.errors import ConfigurationError, NotFoundError

T = TypeVar("T")
log = logging.getLogger("regua.registry")


class UnknownPluginError(NotFoundError):
    """No plugin is registered under a name; the message lists the known names."""

    def __init__(self, what: str, name: str, known: Sequence[str]) -> None:
        """Name what was looked up and everything that is known."""
        self.what, self.name, self.known = what, name, list(known)
        super().__init__(f"unknown {what} {name!r}; known: {', '.join(known) or '(none)'}")


class DuplicatePluginError(ConfigurationError):
    """A name is already registered with other content (give the changed plugin a new name)."""


def _same(a: object, b: object) -> bool:
    return a is b or a == b


class Registry(Generic[T]):
    """Plugins of one kind by name, in registration order (see the module docstring)."""

    def __init__(
        self,
        what: str,
        *,
        builtins: Sequence[str] = (),
        entry_point_group: str | None = None,
        content: Callable[[T], object] | None = None,
        unknown: type[UnknownPluginError] = UnknownPluginError,
    ) -> None:
        """A registry of ``what`` (e.g. ``"sandbox backend"``, used in its error messages).

        Args:
            what: what one plugin is, for messages.
            builtins: modules that register the built-ins when imported (loaded lazily).
            entry_point_group: installed packages' entry points read at first use; an entry
                point naming a module registers itself on import, any other object is
                registered under the entry point's name.
            content: the key two plugins are compared by (default: the plugin itself).
            unknown: the error of an unknown name (a subclass keeping an area's error family).
        """
        self.what = what
        self._builtins = tuple(builtins)
        self._group = entry_point_group
        self._content = content
        self._unknown = unknown
        self._items: dict[str, T] = {}
        self._lock = threading.Lock()
        self._load_lock = threading.RLock()
        self._loaded = not (self._builtins or self._group)
        self._loading = False

    def _key(self, item: T) -> object:
        return item if self._content is None else self._content(item)

    def register(self, name: str, item: T, *, replace: bool = False) -> T:
        """Register ``item`` under ``name`` and return the registered plugin.

        Raises:
            DuplicatePluginError: ``name`` holds other content and ``replace`` is not set.
        """
        with self._lock:
            known = self._items.get(name)
            if known is not None and not replace:
                if _same(self._key(known), self._key(item)):
                    return known
                raise DuplicatePluginError(
                    f"{self.what} {name} is already registered with other content; "
                    f"register a changed {self.what} under a new name (or version)"
                )
            self._items[name] = item
            return item

    def unregister(self, name: str) -> None:
        """Remove ``name`` (nothing happens when it is absent)."""
        with self._lock:
            self._items.pop(name, None)

    def get(self, name: str) -> T:
        """The plugin registered under ``name``.

        Raises:
            UnknownPluginError: nothing is registered under ``name``.
        """
        self.load()
        with self._lock:
            found = self._items.get(name)
            if found is None:
                raise self._unknown(self.what, name, sorted(self._items))
            return found

    def find(self, name: str) -> T | None:
        """The plugin registered under ``name``, or None."""
        self.load()
        with self._lock:
            return self._items.get(name)

    def names(self) -> list[str]:
        """The registered names, sorted."""
        self.load()
        with self._lock:
            return sorted(self._items)

    def items(self) -> list[tuple[str, T]]:
        """(name, plugin) pairs in registration order."""
        self.load()
        with self._lock:
            return list(self._items.items())

    def values(self) -> list[T]:
        """The plugins in registration order."""
        return [item for _name, item in self.items()]

    def __contains__(self, name: object) -> bool:
        """Whether ``name`` is registered."""
        return isinstance(name, str) and self.find(name) is not None

    def __iter__(self) -> Iterator[str]:
        """The registered names, sorted."""
        return iter(self.names())

    def load(self) -> None:
        """Import the built-in modules and read the entry points (once; later calls are free)."""
        if self._loaded:
            return
        # Not under ``_lock``: a module registering itself on import (perhaps imported by
        # another thread) takes ``_lock``; readers of this thread during the import pass.
        with self._load_lock:
            if self._loaded or self._loading:
                return
            self._loading = True
            try:
                for module in self._builtins:
                    importlib.import_module(module)
                if self._group is not None:
                    self._load_entry_points(self._group)
            finally:
                self._loading, self._loaded = False, True

    def _load_entry_points(self, group: str) -> None:
        for point in entry_points(group=group):
            try:
                loaded = point.load()
            except Exception as exc:  # a broken plugin is reported, never a crash of the host
                log.warning(
                    "%s plugin %s (%s) failed to load: %s", self.what, point.name, point.value, exc
                )
                continue
            if not isinstance(loaded, ModuleType):
                self.register(point.name, loaded)
