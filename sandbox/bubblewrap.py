"""The ``bubblewrap`` backend: Linux namespaces via Debian's ``bwrap``.

Layout of one sandbox (see ``docs/sandbox.md`` for the reasoning):

- new user, pid, ipc, uts, mount, network (loopback only) and, where possible, cgroup namespaces;
- the process runs as uid/gid 65534 (nobody). When the host process is root, the user namespace
  is prepared by this module with the map ``0→0, 65534→65534``; bwrap sets up the mounts as
  namespace root and ``setpriv`` then drops to 65534 with no capabilities, an empty bounding set
  and ``no_new_privs``, so the sandbox is the *host's* nobody too (not host root renamed). When the
  host process is not root, plain ``bwrap --unshare-user --uid 65534`` is used;
- read-only binds of ``/usr`` (+ the ``/bin``, ``/lib*`` links), the few ``/etc`` pieces Chromium
  and fontconfig need, the Python installation and venv, and the repo's code packages named in
  ``code_packages`` — nothing else of the host (no data folder, database, ``/root`` or ``/home``);
- private tmpfs ``/tmp``, ``/dev/shm`` and ``HOME``; a fresh ``/proc``; a minimal ``/dev``;
- an empty environment plus a short explicit one;
- rlimits set by ``prlimit`` inside the sandbox (``RLIMIT_DATA``, ``CPU``, ``NPROC``, ``NOFILE``);
- killing the outer ``bwrap`` (``--die-with-parent``) tears down the pid namespace, i.e. the whole
  process tree.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from regua.errors import SandboxUnavailableError
from sandbox.backend import register_backend
from sandbox.cgroup import (
    create_memory_cgroup,
    enter_and_exec,
    memory_cgroup_base,
    oom_killed,
    remove_cgroup,
)
from sandbox.cputime import CgroupCpuMeter, TreeCpuMeter, cgroup_cpu_s, pid_ticks
from sandbox.hostproc import SPAWNER, tree_pids
from sandbox.hostproc import tree_rss_bytes as tree_rss_bytes  # re-exported (benchmarks)
from sandbox.limits import SandboxLimits

SANDBOX_UID = 65534
SANDBOX_HOME = "/home/sandbox"
CODE_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CODE_PACKAGES = ("regua", "tasks", "sandbox", "render")
ETC_PIECES = (
    "/etc/fonts",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/alternatives",
    "/etc/chromium",
    "/etc/chromium.d",
    "/etc/localtime",
    "/etc/mime.types",
    "/var/cache/fontconfig",
)
PASSWD = "root:x:0:0:root:/nonexistent:/usr/sbin/nologin\n" + (
    f"nobody:x:{SANDBOX_UID}:{SANDBOX_UID}:nobody:{SANDBOX_HOME}:/usr/sbin/nologin\n"
)
GROUP = f"root:x:0:\nnogroup:x:{SANDBOX_UID}:\n"
HOSTS = "127.0.0.1 localhost\n::1 localhost\n"
STDERR_TAIL_BYTES = 64 * 1024


class BubblewrapProcess:
    """A running bwrap sandbox (implements :class:`sandbox.backend.SandboxProcess`)."""

    def __init__(self, popen: subprocess.Popen[bytes], cgroup: Path | None = None) -> None:
        """Wrap a started bwrap process (in its memory ``cgroup``, if any); drain its stderr."""
        self._popen = popen
        self.cgroup = cgroup
        self._stderr: deque[bytes] = deque()
        self._stderr_size = 0
        self._lock = threading.Lock()
        self._drain = threading.Thread(target=self._drain_stderr, daemon=True)
        self._drain.start()

    def _drain_stderr(self) -> None:
        stream = self._popen.stderr
        assert stream is not None
        while True:
            try:
                chunk = os.read(stream.fileno(), 65536)
            except (OSError, ValueError):
                return
            if not chunk:
                return
            with self._lock:
                self._stderr.append(chunk)
                self._stderr_size += len(chunk)
                while self._stderr_size > STDERR_TAIL_BYTES and len(self._stderr) > 1:
                    self._stderr_size -= len(self._stderr.popleft())

    @property
    def pid(self) -> int:
        """Host pid of the outer bwrap process."""
        return self._popen.pid

    @property
    def stdin(self) -> IO[bytes]:
        """Pipe to the sandboxed program."""
        assert self._popen.stdin is not None
        return self._popen.stdin

    @property
    def stdout(self) -> IO[bytes]:
        """Pipe from the sandboxed program."""
        assert self._popen.stdout is not None
        return self._popen.stdout

    def poll(self) -> int | None:
        """Exit status or ``None``."""
        return self._popen.poll()

    def wait(self, timeout: float | None = None) -> int:
        """Wait for the end of the sandbox."""
        return self._popen.wait(timeout)

    def kill(self) -> None:
        """SIGKILL bwrap's process group; ``--die-with-parent`` takes the pid namespace down."""
        if self._popen.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self._popen.pid, signal.SIGKILL)
        try:
            self._popen.wait(timeout=10)
        except subprocess.TimeoutExpired:  # pragma: no cover - kernel would have to refuse
            self._popen.kill()
        for stream in (self._popen.stdin, self._popen.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        self._drain.join(timeout=2)
        if self._popen.stderr is not None and not self._drain.is_alive():
            with contextlib.suppress(OSError):
                self._popen.stderr.close()
        if self.cgroup is not None:
            remove_cgroup(self.cgroup)
            self.cgroup = None

    def memory_cap_hit(self) -> bool:
        """Whether the kernel killed part of the tree at its cgroup memory cap."""
        return self.cgroup is not None and oom_killed(self.cgroup)

    def tree_rss_bytes(self, precise: bool = False) -> int:
        """Private resident memory of the whole sandbox tree (see :func:`tree_rss_bytes`)."""
        return tree_rss_bytes(self._popen.pid, precise)

    def cpu_meter(self) -> tuple[CgroupCpuMeter | TreeCpuMeter, str]:
        """A meter of the sandbox tree's CPU time from now on: ``cgroup`` (cpu.stat) or ``tree``."""
        if self.cgroup is not None and cgroup_cpu_s(self.cgroup) is not None:
            return CgroupCpuMeter(self.cgroup), "cgroup"
        root = self._popen.pid
        return TreeCpuMeter(lambda: pid_ticks(tree_pids(root))), "tree"

    def stderr_tail(self) -> str:
        """Last bytes of stderr, decoded leniently."""
        with self._lock:
            data = b"".join(self._stderr)
        return data[-STDERR_TAIL_BYTES:].decode("utf-8", "replace")


class BubblewrapBackend:
    """Isolation with bubblewrap (implements :class:`sandbox.backend.SandboxBackend`)."""

    name = "bubblewrap"

    def __init__(self, code_packages: Sequence[str] = DEFAULT_CODE_PACKAGES) -> None:
        """Find ``bwrap`` and note which packages are bound into the sandbox as code."""
        self.bwrap = shutil.which("bwrap")
        self.code_packages = tuple(code_packages)
        self.host_root = os.geteuid() == 0
        self._cgroup_base: dict[str, tuple[Path | None, str]] = {}

    def check(self) -> tuple[bool, str]:
        """Binaries present and user namespaces allowed."""
        needed = {"bwrap": self.bwrap, "prlimit": shutil.which("prlimit")}
        if self.host_root:
            needed.update(unshare=shutil.which("unshare"), setpriv=shutil.which("setpriv"))
        missing = [name for name, path in needed.items() if path is None]
        if missing:
            return False, f"missing binaries: {', '.join(missing)} (Debian: bubblewrap, util-linux)"
        try:
            max_ns = int(Path("/proc/sys/user/max_user_namespaces").read_text())
        except (OSError, ValueError):
            max_ns = 1
        if max_ns == 0:
            return False, "user namespaces are disabled (user.max_user_namespaces = 0)"
        return True, "ok"

    def version(self) -> str:
        """``bubblewrap X.Y.Z`` or an explanation."""
        if self.bwrap is None:
            return "bubblewrap not installed"
        out = subprocess.run([self.bwrap, "--version"], capture_output=True, text=True, check=False)
        return out.stdout.strip() or out.stderr.strip()

    def describe(self) -> dict[str, Any]:
        """What the backend intends (the measured block replaces it once a worker answered)."""
        return {"backend": self.name, "uid": SANDBOX_UID, "network": "loopback-only"}

    def cgroup_base(self, limits: SandboxLimits) -> tuple[Path | None, str]:
        """Where this backend makes each sandbox's memory cgroup (None: the watchdog holds it)."""
        if limits.cgroup not in self._cgroup_base:
            self._cgroup_base[limits.cgroup] = memory_cgroup_base(limits.cgroup)
        return self._cgroup_base[limits.cgroup]

    def memory_cap(self, limits: SandboxLimits) -> str:
        """How a sandbox's whole-tree memory cap is held here, in words."""
        base, why = self.cgroup_base(limits)
        if base is not None:
            return f"cgroup v2 memory.max {limits.memory_mb} MB ({why})"
        return (
            f"watchdog: the tree's private memory sampled every {limits.memory_sample_s:g} s,"
            f" killed past {limits.memory_mb} MB ({why})"
        )

    def python_paths(self) -> list[str]:
        """Folders holding the interpreter and its libraries (bound read-only)."""
        paths = {os.path.realpath(sys.base_prefix), os.path.realpath(sys.prefix)}
        return sorted(p for p in paths if not p.startswith("/usr"))

    def build_argv(
        self, argv: Sequence[str], limits: SandboxLimits, userns_fd: int | None, data_fds: list[int]
    ) -> list[str]:
        """The full bwrap command line (``data_fds``: passwd, group, hosts, in that order)."""
        assert self.bwrap is not None
        args = [self.bwrap, *self._identity_args(userns_fd)]
        args += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-net"]
        args += ["--unshare-cgroup-try", "--hostname", "sandbox"]
        args += ["--die-with-parent", "--new-session"]
        args += self._filesystem_args(limits, data_fds)
        args += self._environment_args()
        args.append("--")
        args += self._inner_command(limits, userns_fd)
        return args + list(argv)

    @staticmethod
    def _identity_args(userns_fd: int | None) -> list[str]:
        """Who the sandbox runs as: root of a prepared user namespace, or a fresh one's nobody."""
        if userns_fd is not None:
            args = ["--userns", str(userns_fd), "--uid", "0", "--gid", "0"]
            args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
            args += ["--cap-add", "CAP_SETPCAP"]
            return args
        return ["--unshare-user", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID)]

    def _filesystem_args(self, limits: SandboxLimits, data_fds: list[int]) -> list[str]:
        """The sandbox's mounts: read-only system and code binds, private tmpfs and /etc data."""
        tmpfs_bytes = str(limits.tmpfs_mb * 1024 * 1024)
        args = ["--ro-bind", "/usr", "/usr"]
        for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
            host = Path("/") / name
            if host.is_symlink():
                args += ["--symlink", os.readlink(host), str(host)]
            elif host.is_dir():
                args += ["--ro-bind", str(host), str(host)]
        # private mounts first, so that binds below them (a checkout under /tmp) stay visible
        args += ["--proc", "/proc", "--dev", "/dev"]
        for tmp in ("/tmp", "/dev/shm", SANDBOX_HOME):
            args += ["--size", tmpfs_bytes, "--perms", "1777", "--tmpfs", tmp]
        binds = [(p, p) for p in ETC_PIECES if os.path.exists(p)]
        binds += [(p, p) for p in self.python_paths()]
        binds += [(str(CODE_ROOT / p), str(CODE_ROOT / p)) for p in self.code_packages]
        binds = [(src, dest) for src, dest in binds if os.path.exists(src)]
        made: set[str] = set()
        for _, dest in [*binds, ("/etc/passwd", "/etc/passwd"), (SANDBOX_HOME, SANDBOX_HOME)]:
            for parent in reversed(Path(dest).parents):
                if str(parent) not in ("/", "/usr") and str(parent) not in made:
                    made.add(str(parent))
                    args += ["--perms", "0755", "--dir", str(parent)]
        for src, dest in binds:
            args += ["--ro-bind", src, dest]
        for fd, dest in zip(data_fds, ("/etc/passwd", "/etc/group", "/etc/hosts"), strict=True):
            args += ["--perms", "0644", "--ro-bind-data", str(fd), dest]
        return args

    def _environment_args(self) -> list[str]:
        """Working directory and a cleared environment holding only what the worker needs."""
        args = ["--chdir", "/tmp", "--clearenv"]
        env = {
            "PATH": "/usr/bin:/bin",
            "HOME": SANDBOX_HOME,
            "TMPDIR": "/tmp",
            "LANG": "C.UTF-8",
            "PYTHONPATH": str(CODE_ROOT),
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONNOUSERSITE": "1",
            "REGUA_SANDBOX_BACKEND": self.name,
        }
        for key, value in env.items():
            args += ["--setenv", key, value]
        return args

    @staticmethod
    def _inner_command(limits: SandboxLimits, userns_fd: int | None) -> list[str]:
        """What runs inside before the worker: dropping to nobody if needed, then the rlimits."""
        args: list[str] = []
        if userns_fd is not None:
            args += ["setpriv", f"--reuid={SANDBOX_UID}", f"--regid={SANDBOX_UID}"]
            args += ["--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs"]
            args.append("--")
        args += [
            "prlimit",
            f"--data={limits.memory_mb * 1024 * 1024}",
            f"--cpu={limits.cpu_s}",
            f"--nproc={limits.max_processes}",
            f"--nofile={limits.max_open_files}",
            "--core=0",
            "--",
        ]
        return args

    def _prepare_userns(self) -> tuple[subprocess.Popen[bytes], int]:
        """A user namespace mapping 0→0 and 65534→65534, held open by a sleeping helper."""
        unshare = shutil.which("unshare") or "unshare"
        helper = subprocess.Popen([unshare, "--user", "--", "sleep", "60"], close_fds=True)
        own = os.stat("/proc/self/ns/user").st_ino
        deadline = time.monotonic() + 5
        while True:
            try:
                if os.stat(f"/proc/{helper.pid}/ns/user").st_ino != own and (
                    os.readlink(f"/proc/{helper.pid}/exe").endswith("sleep")
                ):
                    break
            except OSError:
                pass
            if helper.poll() is not None or time.monotonic() > deadline:
                helper.kill()
                raise SandboxUnavailableError("could not create a user namespace with unshare")
            time.sleep(0.001)
        mapping = f"0 0 1\n{SANDBOX_UID} {SANDBOX_UID} 1\n"
        with open(f"/proc/{helper.pid}/uid_map", "w") as fh:
            fh.write(mapping)
        with open(f"/proc/{helper.pid}/gid_map", "w") as fh:
            fh.write(mapping)
        return helper, os.open(f"/proc/{helper.pid}/ns/user", os.O_RDONLY | os.O_CLOEXEC)

    @staticmethod
    def _data_fd(text: str) -> int:
        read_end, write_end = os.pipe()
        os.write(write_end, text.encode())
        os.close(write_end)
        return read_end

    def spawn(self, argv: Sequence[str], limits: SandboxLimits) -> BubblewrapProcess:
        """Start ``argv`` in a fresh sandbox with ``limits``."""
        ok, why = self.check()
        if not ok:
            raise SandboxUnavailableError(f"bubblewrap backend unavailable: {why}")
        helper: subprocess.Popen[bytes] | None = None
        cgroup: Path | None = None
        fds: list[int] = []
        try:
            userns_fd = None
            if self.host_root:
                helper, userns_fd = self._prepare_userns()
                fds.append(userns_fd)
            data_fds = [self._data_fd(t) for t in (PASSWD, GROUP, HOSTS)]
            fds += data_fds
            command = self.build_argv(argv, limits, userns_fd, data_fds)
            base, _ = self.cgroup_base(limits)
            if base is not None:
                cgroup = create_memory_cgroup(base, limits.memory_mb)
                command = enter_and_exec(cgroup, command)
            popen: subprocess.Popen[bytes] = SPAWNER.call(
                lambda: subprocess.Popen(
                    command,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    pass_fds=fds,
                    start_new_session=True,
                    env={"PATH": "/usr/bin:/bin"},
                )
            )
        except OSError as exc:
            if cgroup is not None:
                remove_cgroup(cgroup)
            raise SandboxUnavailableError(f"could not start bwrap: {exc}") from exc
        finally:
            for fd in fds:
                os.close(fd)
            if helper is not None:
                helper.kill()
                helper.wait()
        return BubblewrapProcess(popen, cgroup)


register_backend("bubblewrap", BubblewrapBackend)
