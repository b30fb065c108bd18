"""An unprivileged identity for programs that refuse to run as root, without touching the host.

Wayland compositors (sway: "Unable to drop root"), PipeWire's session and many media players
refuse root. When deskpilot itself runs as root (CI, containers), :func:`claim_user` picks a
*free* numeric uid — no passwd or group entry, no process running as it, not claimed by another
deskpilot work dir — and :meth:`SandboxUser.wrap` runs a command as it.

Measured (../shared/notes/wayland.md): libdbus's ``dbus-daemon`` drops every client whose uid
has no passwd entry ("Could not get password database information for UID"), whether the
daemon or the client runs as that uid, so a bare ``setpriv --reuid`` is not enough for a
session with buses. A wrapped command therefore runs in a private mount namespace where
``/etc/passwd`` and ``/etc/group`` are bind-mounted copies with one more line (the user), then
drops to the uid with ``setpriv`` (util-linux). Nothing on the host changes: the copies live in
the caller's work dir, the namespace dies with its last process, the claim is one small file
under ``$TMPDIR/deskpilot-users`` removed by :func:`release_user` (a claim whose work dir is
gone counts as free). Root can still reach everything the user creates (sockets, buses).

When deskpilot runs as an ordinary user, the identity is that user and commands run unchanged.

Usage::

    user = claim_user(workdir, home=os.path.join(workdir, "home"))
    user.own(workdir)                        # the work dir belongs to the user
    subprocess.Popen(user.wrap(["sway"]), env={**env, **user.env()})
    ...
    release_user(workdir)
"""

from __future__ import annotations

import contextlib
import fcntl
import grp
import json
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field

from deskpilot.errors import SandboxError

#: Numeric uids deskpilot may take (Debian leaves 60000–64999 unallocated on a normal host).
UID_RANGE = range(62000, 63000)
#: The user's files inside the work dir: passwd/group overlays and the identity itself.
USER_DIR = ".user"
#: The shell run between ``unshare`` and ``setpriv``: the overlays, then the uid drop.
_ENTER = (
    'mount --bind "$1" /etc/passwd && mount --bind "$2" /etc/group && shift 2 && exec setpriv "$@"'
)


@dataclass(frozen=True)
class SandboxUser:
    """Who a sandbox's programs run as. ``overlay`` is None when no switch is needed."""

    uid: int
    gid: int
    name: str
    home: str
    overlay: str | None = None
    groups: tuple[int, ...] = field(default_factory=tuple)

    @property
    def switches(self) -> bool:
        """Whether commands change identity (deskpilot runs as root)."""
        return self.overlay is not None

    def wrap(self, argv: Sequence[str]) -> list[str]:
        """The command line that runs ``argv`` as this user (``argv`` itself if no switch)."""
        if self.overlay is None:
            return list(argv)
        groups = (
            ["--groups=" + ",".join(str(g) for g in self.groups)]
            if self.groups
            else ["--clear-groups"]
        )
        return [
            "unshare",
            "--mount",
            "--propagation",
            "slave",
            "--",
            "sh",
            "-c",
            _ENTER,
            "deskpilot-user",
            os.path.join(self.overlay, "passwd"),
            os.path.join(self.overlay, "group"),
            f"--reuid={self.uid}",
            f"--regid={self.gid}",
            *groups,
            "--",
            *argv,
        ]

    def env(self) -> dict[str, str]:
        """The variables that name the user to its programs."""
        return {"USER": self.name, "LOGNAME": self.name, "HOME": self.home}

    def own(self, *paths: str) -> None:
        """Give ``paths`` (recursively) to the user; nothing to do without a switch. Their
        parent directories must let the user through (``/tmp`` does; pytest's 0700
        ``tmp_path`` does not)."""
        if self.overlay is None:
            return
        for top in paths:
            os.chown(top, self.uid, self.gid, follow_symlinks=False)
            for root, dirs, files in os.walk(top):
                for name in dirs + files:
                    with contextlib.suppress(FileNotFoundError):
                        os.chown(
                            os.path.join(root, name), self.uid, self.gid, follow_symlinks=False
                        )

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> SandboxUser:
        data = json.loads(text)
        data["groups"] = tuple(data.get("groups", ()))
        return cls(**data)


def current_user(home: str) -> SandboxUser:
    """The identity deskpilot runs as (no switch)."""
    uid, gid = os.getuid(), os.getgid()
    try:
        name = pwd.getpwuid(uid).pw_name
    except KeyError:
        name = str(uid)
    return SandboxUser(uid=uid, gid=gid, name=name, home=home)


def claims_dir() -> str:
    return os.path.join(tempfile.gettempdir(), "deskpilot-users")


def claim_user(
    workdir: str,
    *,
    home: str,
    groups: Sequence[str] = (),
    force_switch: bool = False,
) -> SandboxUser:
    """The identity for programs run from ``workdir``: a free uid when deskpilot is root (or
    ``force_switch``), else the current user. ``groups`` names host groups (``audio``,
    ``video``…) the user joins. The identity is saved in ``workdir`` (:func:`load_user`)."""
    if os.geteuid() != 0 and not force_switch:
        user = current_user(home)
    else:
        user = _claim(workdir, home, groups)
    folder = os.path.join(workdir, USER_DIR)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "user.json"), "w") as fh:
        fh.write(user.to_json())
    return user


def load_user(workdir: str) -> SandboxUser | None:
    """The identity :func:`claim_user` saved in ``workdir``, if any."""
    try:
        with open(os.path.join(workdir, USER_DIR, "user.json")) as fh:
            return SandboxUser.from_json(fh.read())
    except (OSError, ValueError, TypeError):
        return None


def release_user(workdir: str) -> None:
    """Drop the uid claims held for ``workdir`` (safe to call more than once, or with none)."""
    folder = claims_dir()
    if not os.path.isdir(folder):
        return
    with _locked(folder):
        for name in os.listdir(folder):
            path = os.path.join(folder, name)
            if _read(path) == workdir:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(path)


def check_switch_possible() -> None:
    """Fail with advice when this process cannot switch identity as :meth:`wrap` does."""
    missing = [b for b in ("unshare", "setpriv", "mount") if shutil.which(b) is None]
    if missing:
        raise SandboxError(
            f"cannot run programs as an unprivileged user: {', '.join(missing)} not installed "
            "(Debian packages util-linux and mount)"
        )
    done = subprocess.run(
        ["unshare", "--mount", "--propagation", "slave", "true"],
        capture_output=True,
        text=True,
        check=False,
        timeout=10,
    )
    if done.returncode != 0:
        raise SandboxError(
            "cannot run programs as an unprivileged user: a private mount namespace is not "
            f"allowed here ({done.stderr.strip() or done.returncode}). Run deskpilot as an "
            "ordinary user, or give the container CAP_SYS_ADMIN"
        )


# -- claims ------------------------------------------------------------------------------------


def _claim(workdir: str, home: str, group_names: Sequence[str]) -> SandboxUser:
    check_switch_possible()
    gids: list[int] = []
    for gname in group_names:
        try:
            gids.append(grp.getgrnam(gname).gr_gid)
        except KeyError:
            raise SandboxError(f"no group {gname!r} on this machine") from None
    folder = claims_dir()
    os.makedirs(folder, mode=0o700, exist_ok=True)
    with _locked(folder):
        busy = _uids_in_use()
        for uid in UID_RANGE:
            claim = os.path.join(folder, str(uid))
            owner = _read(claim)
            if owner and os.path.isdir(owner):
                continue
            if uid in busy or _allocated(uid):
                continue
            with open(claim, "w") as fh:
                fh.write(workdir)
            break
        else:
            raise SandboxError(
                f"no free uid for an unprivileged sandbox user in {UID_RANGE.start}–"
                f"{UID_RANGE.stop - 1} (every one is in use or claimed under {folder})"
            )
    name = f"deskpilot-{uid}"
    overlay = os.path.join(workdir, USER_DIR)
    os.makedirs(overlay, exist_ok=True)
    os.chmod(overlay, 0o755)
    with open("/etc/passwd") as fh:
        passwd = fh.read().rstrip("\n")
    with open("/etc/group") as fh:
        group = fh.read().rstrip("\n")
    members = {g: name for g in gids}
    group = "\n".join(
        _with_member(line, members) for line in group.splitlines()
    )  # the user joins the named groups
    with open(os.path.join(overlay, "passwd"), "w") as fh:
        fh.write(f"{passwd}\n{name}:x:{uid}:{uid}:deskpilot sandbox user:{home}:/bin/sh\n")
    with open(os.path.join(overlay, "group"), "w") as fh:
        fh.write(f"{group}\n{name}:x:{uid}:\n")
    for leaf in ("passwd", "group"):
        os.chmod(os.path.join(overlay, leaf), 0o644)
    return SandboxUser(uid=uid, gid=uid, name=name, home=home, overlay=overlay, groups=tuple(gids))


def _with_member(line: str, members: dict[int, str]) -> str:
    parts = line.split(":")
    if len(parts) != 4 or not parts[2].isdigit() or int(parts[2]) not in members:
        return line
    names = [n for n in parts[3].split(",") if n]
    names.append(members[int(parts[2])])
    return ":".join([*parts[:3], ",".join(names)])


def _allocated(uid: int) -> bool:
    try:
        pwd.getpwuid(uid)
    except KeyError:
        try:
            grp.getgrgid(uid)
        except KeyError:
            return False
    return True


def _uids_in_use() -> set[int]:
    uids: set[int] = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                uids.add(os.stat(f"/proc/{entry}").st_uid)
    return uids


def _read(path: str) -> str:
    try:
        with open(path) as fh:
            return fh.read().strip()
    except OSError:
        return ""


@contextlib.contextmanager
def _locked(folder: str) -> Iterator[None]:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
