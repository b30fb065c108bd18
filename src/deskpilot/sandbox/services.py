"""What apps expect of a session beyond a display and its buses: settings services the session
bus starts on demand, and an audio server with a null output.

* **Settings.** GNOME and GTK apps keep their settings in GSettings, whose backend is dconf: a
  write goes to ``dconf-service`` over the session bus, which the bus starts when first asked
  (D-Bus activation). Without it every write is lost, and an app whose view follows a setting
  (a system monitor's tabs) cannot switch views. Xfce apps use ``xfconfd`` the same way. The
  sandbox's bus may start these services, and only these (:data:`ACTIVATABLE`): its private
  service directory holds copies of their installed service files, so portals, gvfs, the
  document portal's FUSE mount or a keyring are never started. They run with the sandbox's
  private home (its settings land in ``home/.config/dconf/user``).
* **Audio.** PipeWire, WirePlumber and PipeWire's PulseAudio server (:data:`AUDIO_DAEMONS`),
  whose only output is a null sink (:data:`NULL_SINK`): players that need an audio device play
  into it, and what plays can be seen on the PipeWire graph (``pw-dump``). Started when all
  three are installed (Debian: ``pipewire pipewire-pulse wireplumber``); without them apps get
  no audio server, as before.
"""

from __future__ import annotations

import os
import shutil

#: Bus names the sandbox's session bus may start on demand (when their services are installed).
ACTIVATABLE = ("ca.desrt.dconf", "org.xfce.Xfconf")
SYSTEM_SERVICE_DIRS = ("/usr/local/share/dbus-1/services", "/usr/share/dbus-1/services")
SERVICE_DIR = "dbus-services"

AUDIO_DAEMONS = ("pipewire", "wireplumber", "pipewire-pulse")
#: The null sink's node name (also its PulseAudio sink name).
NULL_SINK = "deskpilot-null"
NULL_SINK_CONF = f"""# deskpilot sandbox: its only audio output is a null sink
context.objects = [
  {{ factory = adapter
    args = {{
      factory.name = support.null-audio-sink
      node.name = "{NULL_SINK}"
      node.description = "Null output (deskpilot sandbox)"
      media.class = "Audio/Sink"
      audio.position = [ FL FR ]
      monitor.channel-volumes = true
    }}
  }}
]
"""


def service_files(dirs: tuple[str, ...] = SYSTEM_SERVICE_DIRS) -> dict[str, str]:
    """{bus name: installed service file} for each of :data:`ACTIVATABLE` that is installed."""
    found: dict[str, str] = {}
    for folder in dirs:
        for name in ACTIVATABLE:
            path = os.path.join(folder, f"{name}.service")
            if name not in found and os.path.isfile(path):
                found[name] = path
    return found


def write_service_dir(runtime_dir: str, dirs: tuple[str, ...] = SYSTEM_SERVICE_DIRS) -> str:
    """The sandbox bus's private service directory, holding the allowed services' files."""
    target = os.path.join(runtime_dir, SERVICE_DIR)
    os.makedirs(target, exist_ok=True)
    for name, path in service_files(dirs).items():
        shutil.copyfile(path, os.path.join(target, f"{name}.service"))
    return target


def readable_service_dir(runtime_dir: str) -> str:
    """:func:`write_service_dir` readable by a bus that runs as another user (a Wayland
    sandbox's user)."""
    target = write_service_dir(runtime_dir)
    os.chmod(target, 0o755)
    for name in os.listdir(target):
        os.chmod(os.path.join(target, name), 0o644)
    return target


def private_dirs(home: str) -> dict[str, str]:
    """The XDG base directories inside a sandbox's home (for its daemons as for its apps)."""
    return {
        "XDG_CONFIG_HOME": os.path.join(home, ".config"),
        "XDG_CACHE_HOME": os.path.join(home, ".cache"),
        "XDG_DATA_HOME": os.path.join(home, ".local", "share"),
        "XDG_STATE_HOME": os.path.join(home, ".local", "state"),
    }


def audio_installed() -> bool:
    return all(shutil.which(d) is not None for d in AUDIO_DAEMONS)


def prepare_audio(home: str) -> None:
    """Give PipeWire (reading its drop-ins from the home's config) the null sink."""
    folder = os.path.join(home, ".config", "pipewire", "pipewire.conf.d")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "deskpilot-null-sink.conf"), "w") as fh:
        fh.write(NULL_SINK_CONF)


def audio_ready(runtime_dir: str) -> bool:
    """Both the PipeWire socket and the PulseAudio socket are there."""
    return os.path.exists(os.path.join(runtime_dir, "pipewire-0")) and os.path.exists(
        os.path.join(runtime_dir, "pulse", "native")
    )
