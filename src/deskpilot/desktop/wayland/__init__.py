"""Wayland desktops: the clients deskpilot drives GNOME (Mutter) and wlroots (sway) sessions with.

Low-level clients, one idea each, none importing the X11 backend:

- :mod:`.keysyms` — the key vocabulary as XKB keysyms (a table, no Xlib);
- :mod:`.appenv` — the environment that makes apps run as native Wayland clients with
  accessibility on (GTK, Qt, Chromium/Electron, LibreOffice, SDL, Firefox);
- :mod:`.sway` — sway's IPC (the i3-ipc JSON socket): windows with app_id/pid/rect/focus,
  focusing and closing them;
- :mod:`.wire` — a small Wayland wire-protocol client (registry, binding, requests and events,
  file-descriptor passing), enough for the wlroots protocols below;
- :mod:`.wlr_input` — virtual keyboard and virtual pointer (zwp_virtual_keyboard_v1,
  zwlr_virtual_pointer_v1) on any wlroots compositor;
- :mod:`.wlr_capture` — output and region capture through wlr-screencopy into shared memory;
- :mod:`.mutter` — Mutter's RemoteDesktop + ScreenCast over D-Bus (``dbus-fast``);
- :mod:`.pipewire` — frames of a PipeWire stream (a ScreenCast node) through GStreamer;
- :mod:`.seat_keeper` — holds a headless compositor's keyboard and pointer for a sandbox's
  life (without it the first keys sent are lost);
- :mod:`.portal` — xdg-desktop-portal RemoteDesktop/ScreenCast/Screenshot for a user's own
  session, consent asked once and its restore token kept.

The backends built from them (each registered in :mod:`deskpilot.desktop.registry`, and so
also importing the config, the ports, the AT-SPI port and the launcher):

- :mod:`.wlroots` — sway: IPC windows, virtual devices, screencopy;
- :mod:`.gnome` — Mutter: windows from AT-SPI frames (:mod:`.gnome_windows`), keys through
  RemoteDesktop, the pointer and a window's pixels through its own recording
  (:mod:`.gnome_streams`), the screen through the monitor's stream.

May import: the standard library, ``dbus_fast``, ``PIL``, :mod:`deskpilot.errors`,
:mod:`deskpilot._wait`, :mod:`deskpilot.desktop.a11yenv`. Nothing here reads ``os.environ``:
callers pass addresses and environments in.
"""
