"""The sandbox as measured from inside it, and compared with the host.

:func:`measure` runs in the worker (``sandbox.worker_main`` sends it with ``ready``): identity,
capabilities, ``no_new_privs``, hostname, namespace inodes, network interfaces and routes, all
read from ``/proc``. The host turns that into the ``sandbox`` block recorded with every result
(:func:`sandbox_block`): which namespaces differ from the host's own, and what the network is
(``loopback-only`` when ``lo`` is the only interface and no route leaves it), so the render log
says what the sandbox *was*, not what it was meant to be.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

NAMESPACES = ("user", "pid", "net", "ipc", "uts", "mnt", "cgroup")


def namespace_inodes() -> dict[str, int]:
    """Inode of each of this process's namespaces (equal inodes: the same namespace)."""
    out: dict[str, int] = {}
    for name in NAMESPACES:
        try:
            out[name] = os.stat(f"/proc/self/ns/{name}").st_ino
        except OSError:
            continue
    return out


def _status_fields() -> dict[str, str]:
    fields: dict[str, str] = {}
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            key, _, value = line.partition(":")
            fields[key] = value.strip()
    except OSError:
        pass
    return fields


def _interfaces() -> list[str]:
    try:
        lines = Path("/proc/net/dev").read_text().splitlines()[2:]
    except OSError:
        return []
    return sorted(line.split(":", 1)[0].strip() for line in lines if ":" in line)


def _routes() -> list[str]:
    """Routes that do not stay on the loopback interface (IPv4 main table and IPv6)."""
    routes: list[str] = []
    try:
        for line in Path("/proc/net/route").read_text().splitlines()[1:]:
            parts = line.split()
            if parts and parts[0] != "lo":
                routes.append(f"ipv4 {parts[0]} dst {parts[1]} gw {parts[2]}")
    except OSError:
        pass
    try:
        for line in Path("/proc/net/ipv6_route").read_text().splitlines():
            parts = line.split()
            if parts and parts[-1] != "lo":
                routes.append(f"ipv6 {parts[-1]} dst {parts[0]}/{int(parts[1], 16)}")
    except (OSError, ValueError):
        pass
    return routes


def measure() -> dict[str, Any]:
    """What this process sees of its own sandbox (JSON-able)."""
    status = _status_fields()
    return {
        "uid": os.getuid(),
        "gid": os.getgid(),
        "groups": sorted(os.getgroups()),
        "cap_eff": status.get("CapEff"),
        "no_new_privs": status.get("NoNewPrivs") == "1",
        "hostname": socket.gethostname(),
        "namespaces": namespace_inodes(),
        "interfaces": _interfaces(),
        "routes": _routes(),
    }


def network_kind(interfaces: list[str], routes: list[str]) -> str:
    """``none``, ``loopback-only`` or ``interfaces: …`` from what was measured."""
    if not interfaces:
        return "none"
    if interfaces == ["lo"] and not routes:
        return "loopback-only"
    return "interfaces: " + ", ".join(interfaces)


def sandbox_block(backend: str, measured: dict[str, Any] | None) -> dict[str, Any]:
    """The recorded ``sandbox`` block: the backend plus what the worker measured inside."""
    if not measured:
        return {"backend": backend, "measured": False}
    host = namespace_inodes()
    inside = measured.get("namespaces") or {}
    interfaces = [str(i) for i in measured.get("interfaces") or []]
    routes = [str(r) for r in measured.get("routes") or []]
    return {
        "backend": backend,
        "measured": True,
        "uid": measured.get("uid"),
        "gid": measured.get("gid"),
        "groups": measured.get("groups"),
        "cap_eff": measured.get("cap_eff"),
        "no_new_privs": measured.get("no_new_privs"),
        "hostname": measured.get("hostname"),
        "own_namespaces": sorted(n for n, ino in inside.items() if host.get(n) != ino),
        "shared_namespaces": sorted(n for n, ino in inside.items() if host.get(n) == ino),
        "network": network_kind(interfaces, routes),
        "interfaces": interfaces,
        "routes": routes,
    }
