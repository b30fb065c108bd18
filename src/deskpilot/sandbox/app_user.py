"""Apps that refuse root, run on an X11 sandbox as its unprivileged user.

Some apps will not run as root (VLC: "VLC is not supposed to be run as root"). When deskpilot
runs as root (CI, containers) an X11 sandbox therefore claims an unprivileged identity too
(:func:`~deskpilot.sandbox.user.claim_user`, as the Wayland sandboxes do) and gives it what an
app needs from the desktop, while every other app keeps running as root:

* **the buses**: libdbus's daemon drops a client whose uid has no passwd entry, and the
  accessibility bus's own configuration admits root and its owner only. So the session bus
  and the accessibility bus launcher run in a private mount namespace where ``/etc/passwd``
  and ``/etc/group`` carry the user (the user's overlays) and the accessibility bus's
  configuration also admits it (:func:`daemon_argv`). Nothing on the host changes;
* **the sockets**: the sandbox's directory becomes traversable (``0711``: not listable) and
  the sockets an app connects to (the buses, PipeWire and its PulseAudio server) writable
  (:func:`open_sockets`);
* **a home and a runtime directory of its own** (:func:`user_env`): what a root app wrote in
  the sandbox's home is not the user's to change.

An app is started as the user (:func:`wrapped`) when it refused root: the launch sees it exit
before any window saying so (:func:`deskpilot.desktop.toolkits.refused_root`) and starts it
again as the user.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence

from deskpilot.errors import SandboxError
from deskpilot.sandbox.user import SandboxUser, check_switch_possible, claim_user, load_user

#: Where the user's own home and runtime directory live inside the sandbox's directory.
USER_HOME = "user-home"
USER_RUNTIME = "user-run"
#: The accessibility bus's configuration files at-spi-bus-launcher reads (first found wins).
A11Y_CONFIGS = ("/etc/at-spi2/accessibility.conf", "/usr/share/defaults/at-spi2/accessibility.conf")
#: Sockets under the sandbox's directory a user's app connects to.
_SOCKETS = ("bus", "pipewire-0", os.path.join("pulse", "native"))
#: A private mount namespace whose bind mounts do not reach the host.
UNSHARE = ("unshare", "--mount", "--propagation", "slave", "--")


def claim_app_user(run: str) -> SandboxUser | None:
    """The identity root-refusing apps run as on an X11 sandbox in ``run``, or None when
    deskpilot does not run as root or cannot switch identity here (then such apps fail as
    before, saying why)."""
    if os.geteuid() != 0:
        return None
    try:
        check_switch_possible()
    except SandboxError:
        return None
    home = os.path.join(run, USER_HOME)
    runtime = os.path.join(run, USER_RUNTIME)
    for path in (home, runtime):
        os.makedirs(path, mode=0o700, exist_ok=True)
    user = claim_user(run, home=home)
    user.own(home, runtime)
    return user


def app_user(run: str) -> SandboxUser | None:
    """The X11 sandbox's app user saved in ``run`` (None when it has none)."""
    user = load_user(run)
    return user if user is not None and user.switches else None


def daemon_argv(argv: Sequence[str], user: SandboxUser, run: str) -> list[str]:
    """``argv`` (a bus daemon or the accessibility bus launcher) in a namespace where the
    user has a passwd entry and the accessibility bus admits it."""
    assert user.overlay is not None
    conf = os.path.join(run, "accessibility.conf")
    source = next((c for c in A11Y_CONFIGS if os.path.exists(c)), None)
    text = _A11Y_CONF
    if source is not None:
        with open(source) as fh:
            text = fh.read()
    allow = f'<allow user="{user.name}"/>'
    if allow not in text:
        text = text.replace(
            '<policy context="default">', f'<policy context="default">\n    {allow}', 1
        )
    with open(conf, "w") as fh:
        fh.write(text)
    binds = [
        (os.path.join(user.overlay, "passwd"), "/etc/passwd"),
        (os.path.join(user.overlay, "group"), "/etc/group"),
        *((conf, c) for c in A11Y_CONFIGS if os.path.exists(c)),
    ]
    script = " && ".join(f'mount --bind "{src}" "{dst}"' for src, dst in binds) + ' && exec "$@"'
    return [*UNSHARE, "sh", "-c", script, "deskpilot-bus", *argv]


def open_sockets(run: str) -> None:
    """Let the user reach the sandbox's sockets: its directory traversable, the sockets (and
    the directories holding them) open to it."""
    os.chmod(run, 0o711)
    for rel in _SOCKETS:
        path = os.path.join(run, rel)
        if os.path.exists(path):
            os.chmod(os.path.dirname(path), 0o711)
            os.chmod(path, 0o666)
    a11y = os.path.join(run, "at-spi")
    if os.path.isdir(a11y):
        os.chmod(a11y, 0o711)
        for name in os.listdir(a11y):
            os.chmod(os.path.join(a11y, name), 0o666)


def user_env(env: Mapping[str, str], user: SandboxUser, run: str) -> dict[str, str]:
    """An app's sandbox environment, for the user: its own home and runtime directory, the
    sandbox's audio servers named where they live."""
    home = user.home
    out = dict(env)
    out.update(user.env())
    out |= {
        "XDG_RUNTIME_DIR": os.path.join(run, USER_RUNTIME),
        "XDG_CONFIG_HOME": os.path.join(home, ".config"),
        "XDG_CACHE_HOME": os.path.join(home, ".cache"),
        "XDG_DATA_HOME": os.path.join(home, ".local", "share"),
        "XDG_STATE_HOME": os.path.join(home, ".local", "state"),
        "TMPDIR": os.path.join(run, USER_RUNTIME),
        "PIPEWIRE_RUNTIME_DIR": run,
        "PULSE_SERVER": "unix:" + os.path.join(run, "pulse", "native"),
    }
    return out


def wrapped(
    argv: Sequence[str], env: Mapping[str, str], run: str
) -> tuple[list[str], dict[str, str]] | None:
    """``argv`` and its environment run as the sandbox's user (None: the sandbox has none)."""
    user = app_user(run)
    if user is None or shutil.which("setpriv") is None:
        return None
    return user.wrap(argv), user_env(env, user, run)


_A11Y_CONF = """<busconfig>
  <type>accessibility</type>
  <auth>EXTERNAL</auth>
  <listen>unix:tmpdir=/tmp</listen>
  <policy context="default">
    <allow user="root"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""
