"""Derive ``seccomp-chromium.json`` (the renderer's, in ``compose.yaml``) from Docker's default.

Chromium's own sandbox creates user, pid and network namespaces and chroots into an empty
folder. Docker's default seccomp profile allows ``clone`` with namespace flags, ``unshare``,
``setns`` and ``chroot`` only to containers holding ``CAP_SYS_ADMIN`` / ``CAP_SYS_CHROOT``, which
the renderer never gets (``cap_drop: [ALL]``). This script takes *your* Docker version's default
profile and adds one rule allowing exactly those four calls, so Chromium keeps its sandbox on
without ``--no-sandbox`` and without any capability.

Usage (the default profile ships with moby: ``profiles/seccomp/default.json``)::

    python docker/make_seccomp_profile.py path/to/default.json > docker/seccomp-chromium.json
"""

from __future__ import annotations

import json
import sys
from typing import Any

CHROMIUM_SANDBOX_CALLS = ["clone", "unshare", "setns", "chroot"]


def derive(profile: dict[str, Any]) -> dict[str, Any]:
    """The default profile plus an unconditional allow rule for Chromium's sandbox calls."""
    syscalls = list(profile.get("syscalls") or [])
    syscalls.append(
        {
            "names": CHROMIUM_SANDBOX_CALLS,
            "action": "SCMP_ACT_ALLOW",
            "comment": "regua: Chromium namespace sandbox (user/pid/net namespaces + chroot)",
        }
    )
    return {**profile, "syscalls": syscalls}


def main() -> int:
    """Read the default profile named on the command line, print the derived one."""
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__ or "")
        return 2
    with open(sys.argv[1], encoding="utf-8") as fh:
        profile = json.load(fh)
    json.dump(derive(profile), sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
