"""What every command shares: global options, settings, running a coroutine with clean errors."""

from __future__ import annotations

import functools
import sys
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from deskpilot.errors import ConfigError, DeskpilotError

if TYPE_CHECKING:
    from deskpilot.config import Settings

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])


def main_options(func: F) -> F:
    """Options accepted before any subcommand."""
    func = click.option(
        "--session",
        metavar="NAME",
        default=None,
        help="Named session holding the tracked target window and element IDs "
        "(default: 'default'; env DESKPILOT_SESSION).",
    )(func)
    func = click.option(
        "--config",
        "config_file",
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        help="Config file (default: ~/.config/deskpilot/config.toml).",
    )(func)
    func = click.option(
        "--display", default=None, metavar=":N", help="X display to work on (default: $DISPLAY)."
    )(func)
    func = click.option(
        "--backend",
        default=None,
        metavar="NAME",
        help="Desktop backend: auto (from the session, the default), x11, or one a plugin "
        "registered (env DESKPILOT_BACKEND; backend in the config file).",
    )(func)
    return func


@dataclass
class Context:
    options: dict[str, Any]
    _settings: Settings | None = None

    @classmethod
    def from_options(cls, options: dict[str, Any]) -> Context:
        return cls(dict(options))

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            from deskpilot.config import load_settings  # not needed for --version or --help

            try:
                self._settings = load_settings(self.options)
            except ConfigError as exc:
                fail(exc)
                raise
        return self._settings

    def override(self, **changes: Any) -> Settings:
        self._settings = self.settings.with_overrides(**changes)
        return self._settings


pass_context = click.make_pass_decorator(Context)


def fail(exc: DeskpilotError | str, code: int | None = None) -> NoReturn:
    message = str(exc)
    click.secho(f"deskpilot: {message}", fg="red", err=True)
    exit_code = code if code is not None else getattr(exc, "exit_code", 1)
    sys.exit(exit_code)


def run_async(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine; DeskpilotErrors become a one-line message and an exit code."""
    import asyncio

    try:
        return asyncio.run(coro)
    except DeskpilotError as exc:
        fail(exc)
        raise  # unreachable
    except KeyboardInterrupt:
        click.secho("deskpilot: interrupted", fg="yellow", err=True)
        sys.exit(130)


def async_command(func: Callable[..., Awaitable[T]]) -> Callable[..., T]:
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> T:
        return run_async(func(*args, **kwargs))  # type: ignore[arg-type]

    return wrapper
