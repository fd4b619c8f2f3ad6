"""The probe handler: small hostile or introspective jobs that test the sandbox from inside.

Used by the contract suite (``tests/sandbox/test_contract.py``) and ``regua doctor``. A job is
``{"op": name, ...arguments}``; the result is a JSON dict describing what happened. Every op
reports failure as data (``{"ok": False, "error": ...}``) instead of raising, except ``raise``.
"""

from __future__ import annotations

import errno
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from typing import Any

Result = tuple[dict[str, Any], dict[str, bytes]]


def _error(exc: BaseException) -> dict[str, Any]:
    return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}


def op_whoami(job: dict[str, Any]) -> Result:
    """Credentials and capabilities of the worker."""
    del job  # every op is called with the job; this one reads nothing from it
    status = {}
    with open("/proc/self/status") as fh:
        for line in fh:
            key, _, value = line.partition(":")
            if key.startswith(("Cap", "NoNewPrivs", "Seccomp")):
                status[key] = value.strip()
    with open("/proc/self/uid_map") as fh:
        uid_map = fh.read().split()
    result: dict[str, Any] = {"ok": True, "uid": os.getuid(), "euid": os.geteuid()}
    result.update(gid=os.getgid(), groups=os.getgroups(), status=status, uid_map=uid_map)
    result.update(pid=os.getpid(), hostname=socket.gethostname())
    result["processes"] = sum(p.isdigit() for p in os.listdir("/proc"))
    return result, {}


def op_tcp_connect(job: dict[str, Any]) -> Result:
    """Try a TCP connection to ``host``:``port``."""
    try:
        with socket.create_connection((job["host"], int(job["port"])), timeout=2):
            return {"ok": True}, {}
    except OSError as exc:
        return _error(exc), {}


def op_resolve(job: dict[str, Any]) -> Result:
    """Try to resolve ``name``."""
    try:
        infos = socket.getaddrinfo(job["name"], 80, proto=socket.IPPROTO_TCP)
        return {"ok": True, "addresses": sorted({str(i[4][0]) for i in infos})}, {}
    except OSError as exc:
        return _error(exc), {}


def op_interfaces(job: dict[str, Any]) -> Result:
    """Network interfaces and routes visible inside."""
    del job  # every op is called with the job; this one reads nothing from it
    with open("/proc/net/route") as fh:
        routes = fh.read().splitlines()[1:]
    return {"ok": True, "interfaces": [n for _, n in socket.if_nameindex()], "routes": routes}, {}


def op_read_file(job: dict[str, Any]) -> Result:
    """Try to read ``path``."""
    try:
        with open(job["path"], "rb") as fh:
            data = fh.read(4096)
        return {"ok": True, "content": data.decode("utf-8", "replace")}, {}
    except OSError as exc:
        return _error(exc), {}


def op_listdir(job: dict[str, Any]) -> Result:
    """Try to list ``path``."""
    try:
        return {"ok": True, "entries": sorted(os.listdir(job["path"]))}, {}
    except OSError as exc:
        return _error(exc), {}


def op_write_file(job: dict[str, Any]) -> Result:
    """Try to write ``path``."""
    try:
        with open(job["path"], "w") as fh:
            fh.write("x")
        return {"ok": True}, {}
    except OSError as exc:
        return _error(exc), {}


def op_env(job: dict[str, Any]) -> Result:
    """The worker's environment."""
    del job  # every op is called with the job; this one reads nothing from it
    return {"ok": True, "env": dict(os.environ)}, {}


def op_fork_bomb(job: dict[str, Any]) -> Result:
    """Fork sleeping children until the kernel refuses (or ``limit`` is reached)."""
    limit = int(job.get("limit", 100_000))
    children: list[int] = []
    error = None
    while len(children) < limit:
        try:
            pid = os.fork()
        except OSError as exc:
            error = f"{errno.errorcode.get(exc.errno or 0, '?')}: {exc.strerror}"
            break
        if pid == 0:
            time.sleep(60)
            os._exit(0)
        children.append(pid)
    for pid in children:
        os.kill(pid, signal.SIGKILL)
    for pid in children:
        os.waitpid(pid, 0)
    return {"ok": error is None, "forked": len(children), "error": error}, {}


def op_memory_hog(job: dict[str, Any]) -> Result:
    """Allocate ``chunk_mb`` blocks (touched) up to ``target_mb``; report how far it got.

    With ``processes`` > 1 the allocation is spread over that many forked children (each below
    the per-process limit) which then sleep ``hold_s`` seconds, to test the tree RSS watchdog;
    ``rate_mb_s`` paces each child's allocation (0: as fast as it can).
    """
    target = int(job.get("target_mb", 100_000))
    chunk = int(job.get("chunk_mb", 16))
    processes = int(job.get("processes", 1))
    if processes > 1:
        pids = []
        for _ in range(processes):
            pid = os.fork()
            if pid == 0:
                pause = chunk / float(job["rate_mb_s"]) if job.get("rate_mb_s") else 0.0
                held = []
                for _ in range(target // chunk):
                    held.append(bytearray(b"\x01" * (chunk << 20)))
                    time.sleep(pause)
                time.sleep(float(job.get("hold_s", 30)))
                del held
                os._exit(0)
            pids.append(pid)
        for pid in pids:
            os.waitpid(pid, 0)
        return {"ok": True, "allocated_mb": target * processes}, {}
    blocks: list[bytearray] = []
    try:
        while len(blocks) * chunk < target:
            blocks.append(bytearray(b"\x01" * (chunk << 20)))
    except MemoryError:
        return {"ok": False, "allocated_mb": len(blocks) * chunk, "error": "MemoryError"}, {}
    return {"ok": True, "allocated_mb": len(blocks) * chunk}, {}


def op_sleep(job: dict[str, Any]) -> Result:
    """Sleep ``seconds`` (with ``children`` forked children sleeping as long)."""
    seconds = float(job.get("seconds", 1))
    for _ in range(int(job.get("children", 0))):
        if os.fork() == 0:
            time.sleep(seconds)
            os._exit(0)
    time.sleep(seconds)
    return {"ok": True}, {}


def op_write_big_output(job: dict[str, Any]) -> Result:
    """Return a file of ``bytes`` bytes."""
    return {"ok": True}, {"big.bin": b"\x00" * int(job.get("bytes", 1 << 20))}


def op_echo(job: dict[str, Any]) -> Result:
    """Return the job and any ``files`` given as text."""
    files = {k: v.encode() for k, v in (job.get("files") or {}).items()}
    return {"ok": True, "job": job, "pid": os.getpid()}, files


def op_crash(job: dict[str, Any]) -> Result:
    """Kill the worker process itself (a crash mid-job)."""
    del job  # every op is called with the job; this one reads nothing from it
    os.kill(os.getpid(), signal.SIGKILL)
    raise AssertionError("unreachable")


def op_raise(job: dict[str, Any]) -> Result:
    """Raise inside the handler (a handler error, not a crash)."""
    raise RuntimeError(job.get("message", "probe asked to raise"))


def op_chromium(job: dict[str, Any]) -> Result:
    """Start Chromium headless on a data: URL; reports its exit status and stderr tail.

    ``no_sandbox`` adds ``--no-sandbox`` (only for diagnosis; the renderer keeps the sandbox on).
    """
    argv = [job.get("path", "/usr/lib/chromium/chromium"), "--headless", "--disable-gpu"]
    argv += ["--no-first-run", "--user-data-dir=/tmp/probe-profile", "--dump-dom"]
    if job.get("no_sandbox"):
        argv.append("--no-sandbox")
    argv.append("data:text/html,<p id=x>sandboxed</p>")
    try:
        done = subprocess.run(argv, capture_output=True, timeout=float(job.get("timeout", 30)))
    except (OSError, subprocess.TimeoutExpired) as exc:
        return _error(exc), {}
    result: dict[str, Any] = {"ok": done.returncode == 0 and b"sandboxed" in done.stdout}
    result["rc"] = done.returncode
    result["stderr"] = done.stderr.decode("utf-8", "replace")[-3000:]
    return result, {}


def _proc_facts(pid: str) -> dict[str, Any]:
    facts: dict[str, Any] = {"pid": int(pid)}
    with open(f"/proc/{pid}/cmdline", "rb") as fh:
        cmdline = fh.read().replace(b"\0", b" ").split()  # Chromium rewrites its title
    kind = [a for a in cmdline if a.startswith(b"--type=")]
    facts["type"] = kind[0][7:].decode() if kind else "browser"
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            key, _, value = line.partition(":")
            if key in ("Seccomp", "NoNewPrivs", "Uid"):
                facts[key] = value.split()[0]
    for ns in ("user", "pid", "net"):
        try:
            facts[f"ns_{ns}"] = os.readlink(f"/proc/{pid}/ns/{ns}")
        except OSError as exc:
            facts[f"ns_{ns}"] = f"unreadable ({exc.strerror})"
    return facts


def op_chromium_sandbox(job: dict[str, Any]) -> Result:
    """Run headless Chromium until a renderer runs and report how its processes are sandboxed.

    For every Chromium process: type (browser, zygote, renderer, gpu-process, utility), seccomp
    mode (2 = filter), no_new_privs and its user/pid/net namespaces compared with the worker's.
    """
    argv = [job.get("path", "/usr/lib/chromium/chromium"), "--headless", "--disable-gpu"]
    argv += ["--no-first-run", "--user-data-dir=/tmp/probe-profile-2", "--remote-debugging-port=0"]
    argv.append("data:text/html,<p>sandbox check</p>")
    own = {ns: os.readlink(f"/proc/self/ns/{ns}") for ns in ("user", "pid", "net")}
    try:
        proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
    except OSError as exc:
        return _error(exc), {}
    deadline = time.monotonic() + float(job.get("settle_s", 20.0))
    processes: list[dict[str, Any]] = []
    while time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.25)
        processes = []
        for pid in os.listdir("/proc"):
            if pid.isdigit() and int(pid) != os.getpid():
                try:
                    facts = _proc_facts(pid)
                except OSError:
                    continue
                if facts["pid"] == proc.pid or facts["type"] != "browser":
                    processes.append(facts)
        renderers = [p for p in processes if p["type"] == "renderer"]
        if renderers and all(p["Seccomp"] == "2" for p in renderers):
            break  # a renderer applies its seccomp filter a moment after it is forked
    proc.kill()
    stderr = proc.communicate()[1].decode("utf-8", "replace")
    renderers = [p for p in processes if p["type"] == "renderer"]
    sandboxed = bool(renderers) and all(
        p["Seccomp"] == "2" and p["ns_user"] != own["user"] for p in renderers
    )
    result = {"ok": sandboxed, "worker_ns": own, "processes": processes}
    result["stderr_tail"] = stderr[-1500:]
    return result, {}


OPS: dict[str, Callable[[dict[str, Any]], Result]] = {
    name[3:]: func for name, func in globals().items() if name.startswith("op_")
}


class ProbeHandler:
    """Dispatches ``job["op"]`` to the ``op_*`` functions of this module."""

    def __init__(self, config: dict[str, Any]) -> None:
        """Keep the worker's config (the probes need none of it)."""
        self.config = config

    def handle(self, job: dict[str, Any]) -> Result:
        """Run one probe op."""
        op = OPS.get(str(job.get("op")))
        if op is None:
            raise ValueError(f"unknown probe op {job.get('op')!r}; known: {sorted(OPS)}")
        return op(job)

    def close(self) -> None:
        """Nothing to release."""


def create_handler(config: dict[str, Any]) -> ProbeHandler:
    """Factory used by ``sandbox.worker_main``; ``{"refuse": True}`` makes it refuse to serve."""
    if config.get("refuse"):
        raise RuntimeError("probe handler refuses to serve (config.refuse)")
    return ProbeHandler(config)
