"""Judge files on disk: the ``REGUA_JUDGES_DIR`` folder, ``regua judges add`` and freezing.

Profiles and panels declared in files are frozen and versioned like tasks: an id, once
registered, keeps its content (the registries refuse another content under it), and the folder
keeps a lock, ``judges.lock.json``, with the content hash of every id ``regua judges add`` put
there. Editing a file after adding it makes the next load fail with the id and both hashes —
a changed profile or panel is a new version, with a new id.

This module reads and writes the given folder only; the service and the CLI decide which
folder (``Settings.judges_dir``).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from judges.default_registry import list_profiles, register_profile
from judges.model import JudgeProfile
from judges.panel import (
    JudgePanel,
    add_lookup_hook,
    get_panel,
    list_panels,
    register_panel,
    remove_lookup_hook,
)
from judges.profiles import FamilySource, JudgeFile, build_panel, parse_judge_text
from regua.errors import ConfigurationError, NotFoundError, read_text
from regua.settings import Settings

log = logging.getLogger(__name__)
LOCK_NAME = "judges.lock.json"
SUFFIXES = (".yaml", ".yml")
_LOCK = threading.RLock()


@dataclass(frozen=True)
class Loaded:
    """What one load registered: profiles and panels with the file each came from."""

    profiles: tuple[tuple[JudgeProfile, str], ...] = ()
    panels: tuple[tuple[JudgePanel, str], ...] = ()

    def sources(self) -> dict[str, str]:
        """Profile or panel id → the file that declared it."""
        out = {p.id: src for p, src in self.profiles}
        out.update({p.id: src for p, src in self.panels})
        return out


_SOURCES: dict[str, str] = {}
"""Id → file of every profile or panel registered from a file in this process."""


def source_of(any_id: str) -> str:
    """Where a profile or panel came from: a file path, or ``builtin``."""
    return _SOURCES.get(any_id, "builtin")


def judge_files(folder: Path) -> list[Path]:
    """The judge files of a folder, sorted by name."""
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix in SUFFIXES)


def read_lock(folder: Path) -> dict[str, dict[str, str]]:
    """The folder's lock: ``{"profiles": {id: hash}, "panels": {id: hash}}``."""
    path = folder / LOCK_NAME
    if not path.exists():
        return {"profiles": {}, "panels": {}}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ConfigurationError(f"{path}: not valid JSON: {exc}") from exc
    return {
        k: {str(i): str(h) for i, h in (data.get(k) or {}).items()} for k in ("profiles", "panels")
    }


def _check_lock(what: str, any_id: str, digest: str, locked: dict[str, str], src: str) -> None:
    pinned = locked.get(any_id)
    if pinned is not None and pinned != digest:
        raise ConfigurationError(
            f"{src}: {what} {any_id} changed since it was added (content hash {digest[:12]}, "
            f"added as {pinned[:12]}); a changed {what} is a new version: give it a new id"
        )


def _refuse_changed(src: str, kind: str, id_: str, registered: str, given: str) -> None:
    """Refuse a file's ``kind`` whose id is registered with another content hash."""
    if registered != given:
        raise ConfigurationError(
            f"{src}: {kind} {id_} is already registered with other content (hash "
            f"{registered[:12]}, file {given[:12]}); a changed {kind} needs a new id"
        )


def _check_registered(profiles: tuple[JudgeProfile, ...], src: str) -> None:
    known = {p.id: p for p in list_profiles()}
    for p in profiles:
        old = known.get(p.id)
        if old is not None:
            _refuse_changed(src, "profile", p.id, old.content_hash(), p.content_hash())


def _check_panel_registered(panel: JudgePanel, src: str) -> None:
    try:
        old = get_panel(panel.id)
    except NotFoundError:
        return
    _refuse_changed(src, "panel", panel.id, old.content_hash(), panel.content_hash())


def _panels_of(
    files: list[JudgeFile],
    lock: dict[str, dict[str, str]],
    families: FamilySource | None,
    lenient: bool,
) -> list[tuple[JudgePanel, str]]:
    known = {p.id for p in list_profiles()} | {p.id for f in files for p in f.profiles}
    out: list[tuple[JudgePanel, str]] = []
    for f in files:
        for doc in f.panels:
            where = f"{f.source}: panel {doc.id}"
            panel = build_panel(doc, where, known, families, lenient=lenient)
            _check_lock("panel", panel.id, panel.content_hash(), lock["panels"], f.source)
            _check_panel_registered(panel, f.source)
            out.append((panel, f.source))
    return out


def register_files(
    files: list[JudgeFile],
    lock: dict[str, dict[str, str]] | None = None,
    families: FamilySource | None = None,
    *,
    lenient: bool = False,
) -> Loaded:
    """Register parsed judge files: their profiles, then their panels (which may name them).

    Everything is checked before anything is registered: a conflict with the lock or with a
    registered id raises :class:`ConfigurationError` and registers nothing. ``families`` gives
    the task families beyond the bundled ones (the configured task store); ``lenient`` takes a
    panel of a family none of them knows as declared (see :func:`judges.profiles.build_panel`).
    """
    lock = lock or {"profiles": {}, "panels": {}}
    with _LOCK:
        profiles = [(p, f.source) for f in files for p in f.profiles]
        for p, src in profiles:
            _check_lock("profile", p.id, p.content_hash(), lock["profiles"], src)
        for f in files:
            _check_registered(f.profiles, f.source)
        panels = _panels_of(files, lock, families, lenient)
        for p, src in profiles:
            register_profile(p)
            _SOURCES[p.id] = src
        for panel, src in panels:
            register_panel(panel)
            _SOURCES[panel.id] = src
    return Loaded(tuple(profiles), tuple(panels))


def parse_file(path: Path) -> JudgeFile:
    """Read and parse one judge file."""
    return parse_judge_text(read_text(path, ConfigurationError), str(path))


def load_judges_dir(
    folder: Path, families: FamilySource | None = None, *, lenient: bool = False
) -> Loaded:
    """Register every judge file of ``folder`` (checked against its lock).

    A missing folder is a configuration error (``REGUA_JUDGES_DIR`` names one that must exist).
    ``lenient``: a panel of a family no known task store has is taken as declared (its family
    was checked when ``regua judges add`` put it there).
    """
    if not folder.is_dir():
        raise ConfigurationError(f"judges folder {folder} does not exist (REGUA_JUDGES_DIR)")
    files = [parse_file(p) for p in judge_files(folder)]
    return register_files(files, read_lock(folder), families, lenient=lenient)


def add_judge_file(path: Path, folder: Path, families: FamilySource | None = None) -> Loaded:
    """``regua judges add``: check a file against the folder and copy it there, locked.

    The folder's files are loaded first (the new file may name their profiles); an id already
    registered or locked with other content, or another file of the same name, is refused and
    nothing is written. Adding the same file again changes nothing. A panel's family must have a
    registered task version: bundled, or in ``families`` (the configured task store).
    """
    folder.mkdir(parents=True, exist_ok=True)
    load_judges_dir(folder, families, lenient=True)
    new = parse_file(path)
    dest = folder / path.name
    text = path.read_text(encoding="utf-8")
    if dest.exists() and dest.read_text(encoding="utf-8") != text:
        raise ConfigurationError(
            f"{dest} already exists with other content; a changed judge file is a new file "
            "with new ids"
        )
    lock = read_lock(folder)
    loaded = register_files([new], lock, families)
    dest.write_text(text, encoding="utf-8")
    for p, _src in loaded.profiles:
        lock["profiles"][p.id] = p.content_hash()
    for panel, _src in loaded.panels:
        lock["panels"][panel.id] = panel.content_hash()
    (folder / LOCK_NAME).write_text(json.dumps(lock, indent=2, sort_keys=True) + "\n", "utf-8")
    return loaded


def require_panel(panel_id: str) -> JudgePanel:
    """A registered panel, or a :class:`NotFoundError` listing the known ones."""
    try:
        return get_panel(panel_id)
    except NotFoundError:
        known = ", ".join(p.id for p in list_panels())
        raise NotFoundError(f"unknown judge panel {panel_id!r}; known: {known}") from None


def load_configured(settings: Settings | None, families: FamilySource | None = None) -> Loaded:
    """Register the judge files of ``settings.judges_dir`` (``REGUA_JUDGES_DIR``), if any."""
    if settings is None or settings.judges_dir is None:
        return Loaded()
    return load_judges_dir(settings.judges_dir, families)


class FolderWatch:
    """Registers what is added to a judges folder while a process runs (no restart needed).

    Installed as a panel lookup hook (:func:`judges.panel.add_lookup_hook`): before a panel is
    looked up, at most every ``interval_s`` seconds, the folder's files are compared (names,
    sizes, modification times) with the last load and, when they changed, loaded again. A file
    that no longer loads (edited by hand after ``regua judges add``) is logged and left out;
    everything registered before stays.
    """

    def __init__(
        self, folder: Path, families: FamilySource | None = None, interval_s: float = 1.0
    ) -> None:
        """Watch ``folder`` (its current content counts as loaded)."""
        self.folder = folder
        self.families = families
        self.interval_s = interval_s
        self._lock = threading.RLock()
        self._busy = False
        self._checked = time.monotonic()
        self._seen = self.signature()

    def signature(self) -> tuple[tuple[str, int, int], ...]:
        """Name, size and modification time of every judge file and the lock."""
        try:
            paths = [*judge_files(self.folder), self.folder / LOCK_NAME]
            stats = [(p.name, p.stat()) for p in paths if p.exists()]
        except OSError:
            return ()
        return tuple((name, st.st_size, st.st_mtime_ns) for name, st in stats)

    def refresh(self, *, force: bool = False) -> Loaded | None:
        """Load the folder again when it changed; what was loaded (None: nothing to do)."""
        if not self._lock.acquire(blocking=False):
            return None  # another thread is loading it now
        try:
            if self._busy or (not force and time.monotonic() - self._checked < self.interval_s):
                return None
            self._checked = time.monotonic()
            seen = self.signature()
            if seen == self._seen:
                return None
            self._busy = True
            try:
                self._seen = seen
                return load_judges_dir(self.folder, self.families, lenient=True)
            except ConfigurationError as exc:
                log.error("judges folder %s not reloaded: %s", self.folder, exc)
                return None
            finally:
                self._busy = False
        finally:
            self._lock.release()


def watch_configured(
    settings: Settings | None, families: FamilySource | None = None
) -> FolderWatch | None:
    """Watch ``REGUA_JUDGES_DIR`` (if set) for judge files added while this process runs.

    Stop with :func:`unwatch`.
    """
    if settings is None or settings.judges_dir is None:
        return None
    watch = FolderWatch(settings.judges_dir, families)
    add_lookup_hook(watch.refresh)
    return watch


def unwatch(watch: FolderWatch | None) -> None:
    """Stop a watch of :func:`watch_configured`."""
    if watch is not None:
        remove_lookup_hook(watch.refresh)
