"""requirements.lock (what scripts/setup.sh installs) stays in step with pyproject.toml: every
requirement there is pinned here at a version it allows, and every pin carries its hashes."""

from __future__ import annotations

import re
import tomllib

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from tests.conftest import REPO_ROOT

PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)")
REFRESH = "run `make lock` (scripts/lock.sh) and commit requirements.lock"


def _pins() -> dict[str, tuple[Version, int]]:
    """name -> (pinned version, number of hashes), read from the lock's entries."""
    pins: dict[str, tuple[Version, int]] = {}
    current = ""
    for line in (REPO_ROOT / "requirements.lock").read_text(encoding="utf-8").splitlines():
        if m := PIN.match(line):
            current = canonicalize_name(m.group(1))
            pins[current] = (Version(m.group(2)), 0)
        elif "--hash=sha256:" in line and current:
            version, hashes = pins[current]
            pins[current] = (version, hashes + 1)
    return pins


def _declared() -> list[Requirement]:
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    listed = [
        *project["project"]["dependencies"],
        *project["project"]["optional-dependencies"]["dev"],
        *project["project"]["optional-dependencies"]["inspect"],
        *project["build-system"]["requires"],
    ]
    return [Requirement(text) for text in listed]


def test_every_declared_requirement_is_pinned_within_its_bounds() -> None:
    pins = _pins()
    missing, outside = [], []
    for req in _declared():
        name = canonicalize_name(req.name)
        if name not in pins:
            missing.append(req.name)
        elif not req.specifier.contains(pins[name][0], prereleases=True):
            outside.append(f"{req} (locked {pins[name][0]})")
    assert missing == [], f"not in requirements.lock: {missing}; {REFRESH}"
    assert outside == [], f"locked outside pyproject's bounds: {outside}; {REFRESH}"


def test_every_pin_is_exact_and_hashed() -> None:
    pins = _pins()
    assert len(pins) > 50  # the lock was read (dependencies of dependencies included)
    unhashed = sorted(name for name, (_, hashes) in pins.items() if hashes == 0)
    assert unhashed == [], f"pins without a sha256: {unhashed}; {REFRESH}"
    text = (REPO_ROOT / "requirements.lock").read_text(encoding="utf-8")
    assert "--index-url" not in text and "file://" not in text  # no machine's own indexes
