"""Each trial in its own mount, user and PID namespace (bubblewrap): nothing a task does
reaches the host.

Inside a trial:

- the host's file system is read-only (``--ro-bind / /``), with no capabilities to remount it;
- ``/tmp``, ``/var/tmp`` and ``/home`` are the trial's own (tmpfs): the sandbox desktop's
  home and temp dir are made there, and ``/home/user`` (OSWorld's VM home) becomes a link to
  that home once the desktop is up (:func:`map_vm_home`); the host's ``/home/*`` and what the
  trial must read under ``/tmp`` (the task's files, the file store, deskpilot itself) are
  bound back read-only;
- writable: the trial's own folder and deskpilot's data and state folders (the audit log);
- hidden: what would give the answer away — the suite (task files, gold files, fixtures),
  the OSWorld file store (gold files beside the inputs) and the run's other trials are masked
  (an empty tmpfs, or ``/dev/null`` over a file). The trial's harness process alone reaches
  them, through directory descriptors the driver opened outside (``/proc/self/fd/N``): it is
  not dumpable, so no other process of the trial can open its descriptors or read its memory;
  the task's spec (its checks) comes the same way, never as a file of the trial;
- the trial's user is uid 1000 (OSWorld's ``user``) in its own user namespace — or, when
  deskpilot runs as root, root without a single capability and no user namespace (Chromium's
  pages in background windows lose their accessibility tree in one); a step that needs root
  gets uid 0 in a nested user namespace (``sudo`` of :mod:`deskpilot.eval.vm_shims`), still
  over the read-only host;
- its processes live in their own PID namespace: when the trial ends, or is killed at its
  deadline, every process it started ends with it.

The network is the host's (a model is reached over it; the loopback server of a task too).
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

from deskpilot.errors import EvalError
from deskpilot.eval.check_env import VM_HOME
from deskpilot.eval.vm_shims import ISOLATED_VAR

#: OSWorld's VM user, which a trial's user is inside its namespace
TRIAL_UID = 1000
#: host folders replaced by the trial's own
PRIVATE = ("/tmp", "/var/tmp", "/home")


def _under(path: Path, roots: Iterable[str]) -> bool:
    return any(path == Path(r) or Path(r) in path.parents for r in roots)


def bwrap_argv(
    *,
    writable: Iterable[Path],
    readable: Iterable[Path],
    hidden: Iterable[Path] = (),
    bwrap: str = "bwrap",
) -> list[str]:
    """The bubblewrap command line a trial's process runs under (the command follows):
    ``readable`` bound back read-only, then ``hidden`` masked, then ``writable`` bound."""
    if os.geteuid() == 0:
        # root: no user namespace (Chromium's pages in a background window lose their
        # accessibility tree in one), but no capability either — the read-only host cannot
        # be remounted, and the PID namespace hides the host's processes
        who = ["--cap-drop", "ALL"]
    else:
        who = ["--unshare-user", "--uid", str(TRIAL_UID), "--gid", str(TRIAL_UID)]
    argv = [
        bwrap,
        *who,
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--hostname",
        "trial",
        "--die-with-parent",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
    ]
    for folder in PRIVATE:
        argv += ["--tmpfs", folder]
    with contextlib.suppress(OSError):  # the host's users: readable, as on the host
        for entry in sorted(Path("/home").iterdir()):
            if entry.name != Path(VM_HOME).name and (entry.is_dir() or entry.is_file()):
                argv += ["--ro-bind", str(entry), str(entry)]
    seen: set[Path] = set()
    for path in readable:
        path = path.resolve()
        if path.exists() and _under(path, PRIVATE) and path not in seen:
            seen.add(path)
            argv += ["--ro-bind", str(path), str(path)]
    for path in hidden:
        path = path.resolve()
        if path.is_dir() and path not in seen:
            seen.add(path)
            argv += ["--tmpfs", str(path)]
        elif path.is_file():
            argv += ["--ro-bind", "/dev/null", str(path)]
    for path in writable:
        path.mkdir(parents=True, exist_ok=True)
        path = path.resolve()
        argv += ["--bind", str(path), str(path)]
    argv += ["--setenv", "TMPDIR", "/tmp", "--setenv", ISOLATED_VAR, "1", "--"]
    return argv


def needed_paths() -> list[Path]:
    """What a trial reads from deskpilot's own installation (bound back when under /tmp)."""
    import deskpilot

    return [
        Path(sys.prefix),
        Path(sys.executable).parent,
        Path(deskpilot.__file__).resolve().parent.parent,
    ]


@functools.cache
def probe(bwrap: str) -> str | None:
    """Why bubblewrap cannot isolate a trial here, or None when it can."""
    with tempfile.TemporaryDirectory() as tmp:
        argv = bwrap_argv(writable=[Path(tmp)], readable=[], bwrap=bwrap)
        try:
            done = subprocess.run(
                [*argv, "sh", "-c", f"touch {tmp}/ok && [ ! -w /usr ] && [ ! -w /etc ]"],
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            return f"{bwrap} did not run: {exc}"
        if done.returncode != 0 or not (Path(tmp) / "ok").exists():
            return (done.stderr.strip() or f"{bwrap} exited with {done.returncode}")[:300]
    return None


def isolation_command(
    command: list[str], *, writable: list[Path], readable: list[Path], hidden: Iterable[Path] = ()
) -> list[str]:
    """``command`` wrapped so it runs isolated; EvalError when this machine cannot."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise EvalError(
            "trials run isolated with bubblewrap, which is not installed (apt-get install "
            "bubblewrap), or run them unisolated with --isolation none"
        )
    why = probe(bwrap)
    if why is not None:
        raise EvalError(
            f"bubblewrap cannot isolate a trial here ({why}): user namespaces may be off "
            "(sysctl kernel.unprivileged_userns_clone=1), or run with --isolation none"
        )
    return [
        *bwrap_argv(
            writable=writable, readable=[*readable, *needed_paths()], hidden=hidden, bwrap=bwrap
        ),
        *command,
    ]


def keep_private(fds: Iterable[int]) -> None:
    """In the trial's harness process: its descriptors of the hidden folders are its own —
    not inherited by what it starts (unless passed on purpose), and the process is not
    dumpable, so another process of the trial (an app, a shell the agent opened) can neither
    open ``/proc/PID/fd/N`` nor read its memory."""
    for fd in fds:
        with contextlib.suppress(OSError):
            os.set_inheritable(fd, False)
    if sys.platform.startswith("linux"):
        import ctypes

        pr_set_dumpable = 4
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(pr_set_dumpable, 0, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0) failed")


def map_vm_home(home: Path) -> None:
    """Inside an isolated trial, make ``/home/user`` the sandbox's home (a link in the
    trial's own /home); outside one, do nothing (the host's /home is not the trial's)."""
    if os.environ.get(ISOLATED_VAR) != "1":
        return
    link = Path(VM_HOME)
    with contextlib.suppress(FileNotFoundError):
        link.unlink()
    link.symlink_to(home)
