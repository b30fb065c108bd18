"""Settings: flags > environment > ``~/.config/deskpilot/config.toml`` > defaults.

This module is the ONLY place that reads ``os.environ``. Everything else receives a
:class:`Settings` (and, for launching processes, ``settings.environ``, a frozen copy).

Config file (all keys optional)::

    model = "anthropic:claude-sonnet-4-5"    # provider:model for `deskpilot run` / `chat`
    base_url = "http://127.0.0.1:8000/v1"    # for compatible:
    confirm = "consequential"                # all | consequential | none
    max_steps = 30
    timeout = 600
    tool_protocol = "native"                 # native | text
    browser = "agent"                        # agent (deskpilot's Chromium) | default (xdg-open)
    step_frames = false                      # a frame of the window per step in the audit log
    backend = "auto"                         # desktop backend: auto (from the session) | x11 | …

    [blocklist]
    add = ["org.gnome.Settings"]             # extra blocked apps (desktop id, WM_CLASS, exe, name)
    remove = []                              # default entries to allow

    [preferences]                            # told to the agent: which app to use for what
    browser = "Chromium"
    editor = "Mousepad"

    [keys]
    openai = "sk-..."                        # prefer the environment: OPENAI_API_KEY etc.

    [consequential]
    words = ["Send", "Submit", ...]          # replaces the default list of verbs
    shortcuts = ["ctrl+return", "alt+s"]     # replaces the shortcuts that send or submit
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, cast

from deskpilot.errors import ConfigError, DisplayUnavailable

if TYPE_CHECKING:
    from deskpilot import discovery

ConfirmMode = Literal["all", "consequential", "none"]
CONFIRM_MODES: tuple[ConfirmMode, ...] = ("all", "consequential", "none")

#: Environment variables holding provider API keys (also read by the vendors' own SDKs).
KEY_ENV = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "compatible": "DESKPILOT_COMPATIBLE_API_KEY",
}


def _xdg(env: Mapping[str, str], var: str, home: Path, default: str) -> Path:
    value = env.get(var, "")
    return Path(value) if value and os.path.isabs(value) else home / default


@dataclass(frozen=True)
class Settings:
    """Everything configurable, resolved once and passed down."""

    environ: Mapping[str, str] = field(default_factory=dict)
    #: the desktop backend by name (:mod:`deskpilot.desktop.registry`); "auto": the session's
    backend: str = "auto"
    display: str | None = None
    session_bus: str | None = None
    #: the accessibility bus, when the environment names it (AT_SPI_BUS_ADDRESS)
    a11y_bus: str | None = None
    xauthority: str | None = None
    sandbox_dir: str | None = None
    #: where :func:`resolve_desktop` found the display ("" before it ran)
    desktop_source: str = ""
    config_dir: Path = Path("~/.config/deskpilot")
    state_dir: Path = Path("~/.local/state/deskpilot")
    data_dir: Path = Path("~/.local/share/deskpilot")
    config_file: Path | None = None
    session: str = "default"
    blocklist_add: tuple[str, ...] = ()
    blocklist_remove: tuple[str, ...] = ()
    browser: Literal["agent", "default"] = "agent"
    preferences: Mapping[str, str] = field(default_factory=dict)
    model: str | None = None
    base_url: str | None = None
    api_keys: Mapping[str, str] = field(default_factory=dict)
    confirm: ConfirmMode = "consequential"
    max_steps: int = 30
    timeout: float = 600.0
    tool_protocol: Literal["native", "text"] | None = None
    consequential_words: tuple[str, ...] | None = None
    consequential_shortcuts: tuple[str, ...] | None = None
    read_budget_chars: int = 12000
    #: the Ray cluster of ``deskpilot eval --backend ray`` (RAY_ADDRESS, as Ray reads it)
    ray_address: str | None = None
    #: the local file store of OSWorld downloads (DESKPILOT_OSWORLD_STORE, osworld_store)
    osworld_store: Path = Path("~/.local/share/deskpilot/osworld-files")
    #: a small frame of the window in the audit log after every step (the console: always)
    step_frames: bool = False
    #: the person's goal a server holds its clients' work to (``deskpilot mcp --goal``): what
    #: it names is allowed without asking
    goal: str | None = None

    def with_overrides(self, **changes: Any) -> Settings:
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    @property
    def audit_db(self) -> Path:
        return self.data_dir / "audit.sqlite3"

    @property
    def user_config_file(self) -> Path:
        return self.config_file or (self.config_dir / "config.toml")


def _as_str_list(value: object, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where} must be a list of strings")
    return tuple(value)


def _read_file(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        return {}
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {path} is not valid TOML: {exc}") from exc
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from exc


def load_settings(
    flags: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
    config_file: Path | None = None,
) -> Settings:
    """Resolve settings from flags (highest), environment, the config file, then defaults."""
    env = dict(os.environ if env is None else env)
    flags = {k: v for k, v in (flags or {}).items() if v is not None}
    home = Path(env.get("HOME") or Path.home())
    config_dir = _xdg(env, "XDG_CONFIG_HOME", home, ".config") / "deskpilot"
    state_dir = _xdg(env, "XDG_STATE_HOME", home, ".local/state") / "deskpilot"
    data_dir = _xdg(env, "XDG_DATA_HOME", home, ".local/share") / "deskpilot"
    if env.get("DESKPILOT_HOME"):
        # one directory for everything (tests, throwaway setups)
        root = Path(env["DESKPILOT_HOME"])
        config_dir, state_dir, data_dir = root / "config", root / "state", root / "data"
    path = Path(flags.pop("config_file", None) or config_file or env.get("DESKPILOT_CONFIG") or "")
    if not str(path) or str(path) == ".":
        path = config_dir / "config.toml"
    file = _read_file(path)

    def pick(key: str, env_var: str | None = None) -> Any:
        if key in flags:
            return flags[key]
        if env_var and env.get(env_var):
            return env[env_var]
        return file.get(key)

    confirm = pick("confirm", "DESKPILOT_CONFIRM") or "consequential"
    if confirm not in CONFIRM_MODES:
        raise ConfigError(f"confirm must be one of {', '.join(CONFIRM_MODES)}, not {confirm!r}")
    browser = pick("browser", "DESKPILOT_BROWSER") or "agent"
    if browser not in ("agent", "default"):
        raise ConfigError(f"browser must be 'agent' or 'default', not {browser!r}")
    backend = pick("backend", "DESKPILOT_BACKEND") or "auto"
    if not isinstance(backend, str) or not backend.isidentifier():
        raise ConfigError(f"backend must be a backend's name (auto, x11, …), not {backend!r}")
    protocol = pick("tool_protocol", "DESKPILOT_TOOL_PROTOCOL")
    if protocol not in (None, "native", "text"):
        raise ConfigError(f"tool_protocol must be 'native' or 'text', not {protocol!r}")

    def number(key: str, env_var: str, default: float, lo: float, hi: float) -> float:
        raw = pick(key, env_var)
        if raw is None:
            return default
        try:
            value = float(raw)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"{key} must be a number, not {raw!r}") from exc
        if not lo <= value <= hi:
            raise ConfigError(f"{key} must be between {lo:g} and {hi:g}, not {value:g}")
        return value

    blocklist = file.get("blocklist", {})
    if not isinstance(blocklist, dict):
        raise ConfigError("[blocklist] must be a table with 'add' and/or 'remove' lists")
    prefs = file.get("preferences", {})
    if not isinstance(prefs, dict) or not all(isinstance(v, str) for v in prefs.values()):
        raise ConfigError("[preferences] must map names to strings")
    keys_file = file.get("keys", {})
    if not isinstance(keys_file, dict):
        raise ConfigError("[keys] must map provider names to API keys")
    api_keys = {p: str(keys_file[p]) for p in KEY_ENV if keys_file.get(p)}
    api_keys.update({p: env[var] for p, var in KEY_ENV.items() if env.get(var)})
    if env.get("GOOGLE_API_KEY") and "gemini" not in api_keys:
        api_keys["gemini"] = env["GOOGLE_API_KEY"]
    consequential = file.get("consequential", {})
    if not isinstance(consequential, dict):
        raise ConfigError("[consequential] must be a table with 'words' and/or 'shortcuts'")
    unknown = sorted(set(consequential) - {"words", "shortcuts"})
    if unknown:
        raise ConfigError(
            f"[consequential] has no {', '.join(map(repr, unknown))}: it takes 'words' (verbs "
            "that make a button consequential) and 'shortcuts' (keys that send or submit)"
        )
    words_cfg = consequential.get("words")
    shortcuts_cfg = consequential.get("shortcuts")
    model = pick("model", "DESKPILOT_MODEL")
    if model is not None and not isinstance(model, str):
        raise ConfigError(
            f"model must be a string like 'anthropic:claude-sonnet-4-5', not {model!r}"
        )

    base_url = pick("base_url", "DESKPILOT_BASE_URL")
    if base_url is not None and not isinstance(base_url, str):
        raise ConfigError(
            f"base_url must be a string like 'http://127.0.0.1:8000/v1', not {base_url!r}"
        )

    session = str(pick("session", "DESKPILOT_SESSION") or "default")
    if not session.replace("-", "").replace("_", "").isalnum() or len(session) > 64:
        raise ConfigError(
            f"session name {session!r} is invalid: use letters, digits, '-' or '_' (max 64)"
        )

    return Settings(
        environ=MappingProxyType(env),
        backend=backend,
        display=flags.get("display") or env.get("DISPLAY") or None,
        session_bus=env.get("DBUS_SESSION_BUS_ADDRESS") or None,
        a11y_bus=env.get("AT_SPI_BUS_ADDRESS") or None,
        xauthority=env.get("XAUTHORITY") or None,
        sandbox_dir=env.get("DESKPILOT_SANDBOX") or None,
        config_dir=config_dir,
        state_dir=state_dir,
        data_dir=data_dir,
        config_file=path,
        session=session,
        blocklist_add=_as_str_list(blocklist.get("add", []), "[blocklist] add"),
        blocklist_remove=_as_str_list(blocklist.get("remove", []), "[blocklist] remove"),
        browser=cast(Literal["agent", "default"], browser),
        preferences=MappingProxyType(dict(prefs)),
        model=model,
        base_url=base_url,
        api_keys=MappingProxyType(api_keys),
        confirm=cast(ConfirmMode, confirm),
        max_steps=int(number("max_steps", "DESKPILOT_MAX_STEPS", 30, 1, 1000)),
        timeout=number("timeout", "DESKPILOT_TIMEOUT", 600.0, 1, 86400),
        tool_protocol=protocol,
        consequential_words=(
            None if words_cfg is None else _as_str_list(words_cfg, "[consequential] words")
        ),
        consequential_shortcuts=(
            None
            if shortcuts_cfg is None
            else _as_str_list(shortcuts_cfg, "[consequential] shortcuts")
        ),
        ray_address=env.get("RAY_ADDRESS") or None,
        osworld_store=Path(
            str(pick("osworld_store", "DESKPILOT_OSWORLD_STORE") or data_dir / "osworld-files")
        ).expanduser(),
        step_frames=_as_bool(pick("step_frames", "DESKPILOT_STEP_FRAMES"), "step_frames"),
        goal=flags.get("goal") or None,
    )


def _as_bool(value: object, key: str) -> bool:
    if value is None or isinstance(value, bool):
        return bool(value)
    text = str(value).strip().casefold()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off", ""):
        return False
    raise ConfigError(f"{key} must be true or false, not {value!r}")


#: What to do when no display is found (the end of every "no display" message).
NO_DISPLAY_HINT = (
    "Set DISPLAY (e.g. DISPLAY=:0, and XAUTHORITY if your X server needs a cookie) in the "
    'environment that starts deskpilot (for an MCP client: the server\'s "env" in its '
    "config), or work on a private desktop: `deskpilot mcp --sandbox`, or "
    '`eval "$(deskpilot sandbox up)"` for the CLI.'
)


def resolve_desktop(settings: Settings, *, probes: discovery.Probes | None = None) -> Settings:
    """``settings`` with the desktop filled in where the environment left it out.

    A display named by ``--display`` or ``DISPLAY`` is kept; otherwise
    :func:`deskpilot.discovery.discover` looks for the user's (systemd user environment,
    login session, kept sandbox, X sockets). The session bus and the X cookie are looked for
    when unset. What was found also goes into ``environ``, so apps deskpilot launches get it.
    Raises DisplayUnavailable (saying what to set) when there is no display to be found."""
    from deskpilot import discovery

    env = dict(settings.environ)
    if settings.display:
        env["DISPLAY"] = settings.display
    found = discovery.discover(env, state_dir=settings.state_dir, probes=probes)
    if found.display is None:
        raise DisplayUnavailable(f"no X display: {found.problem}. {NO_DISPLAY_HINT}")
    env["DISPLAY"] = found.display
    # a kept sandbox brings its own session bus; otherwise the environment's wins
    bus = found.session_bus if found.sandbox_dir else settings.session_bus or found.session_bus
    if bus:
        env["DBUS_SESSION_BUS_ADDRESS"] = bus
    if found.xauthority and not env.get("XAUTHORITY"):
        env["XAUTHORITY"] = found.xauthority
    xauthority = settings.xauthority or found.xauthority
    if xauthority:
        from deskpilot.desktop.x11.probe import use_xauthority

        use_xauthority(xauthority)  # before anything connects to the display
    a11y_bus = settings.a11y_bus or (probes or discovery.Probes()).root_a11y_bus(found.display)
    sandbox_dir = settings.sandbox_dir or found.sandbox_dir
    if sandbox_dir:
        env["DESKPILOT_SANDBOX"] = sandbox_dir
    return replace(
        settings,
        environ=MappingProxyType(env),
        display=found.display,
        session_bus=bus,
        a11y_bus=a11y_bus,
        xauthority=xauthority,
        sandbox_dir=sandbox_dir,
        desktop_source=settings.desktop_source or found.source,
    )
