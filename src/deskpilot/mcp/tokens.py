"""The HTTP bearer token: one per user, kept (mode 0600) until rotated.

A token that changed at every start broke every configured HTTP client after each restart
(401, and OAuth-capable clients then tried a sign-in that cannot work). So the token lives in
a file (``~/.local/state/deskpilot/mcp-token`` unless ``--token-file`` names another): made
once, read at every start, replaced only by ``deskpilot mcp token --rotate``. A running server
notices the file changing, so a rotation locks out the old token at once, without a restart;
a missing or unreadable file locks out everyone (fail closed).
"""

from __future__ import annotations

import hmac
import os
import secrets
import stat
from dataclasses import dataclass, field
from pathlib import Path

from deskpilot._files import write_atomic
from deskpilot.config import Settings
from deskpilot.errors import ConfigError

TOKEN_FILE_NAME = "mcp-token"
MIN_TOKEN_CHARS = 32


def default_token_file(settings: Settings) -> Path:
    return settings.state_dir / TOKEN_FILE_NAME


def new_token() -> str:
    return secrets.token_urlsafe(32)


def write_token_file(path: Path, token: str) -> None:
    """Write ``token`` to ``path``, readable by this user only (0600), atomically."""
    write_atomic(path, token + "\n", mode=0o600)


def read_token_file(path: Path) -> str:
    """The token in ``path``; ConfigError (saying how to fix it) when it is not a safe one."""
    try:
        info = path.stat()
        text = path.read_text().strip()
    except FileNotFoundError:
        raise ConfigError(
            f"token file {path} does not exist: make one with `deskpilot mcp token --rotate`"
        ) from None
    except OSError as exc:
        raise ConfigError(f"cannot read token file {path}: {exc.strerror}") from exc
    if not stat.S_ISREG(info.st_mode):
        raise ConfigError(f"token file {path} is not a regular file")
    if info.st_uid != os.getuid():
        raise ConfigError(f"token file {path} belongs to another user; use a file of your own")
    if info.st_mode & 0o077:
        raise ConfigError(
            f"token file {path} can be read by other users (mode {info.st_mode & 0o777:o}): "
            f"`chmod 600 {path}`, or make a new token with `deskpilot mcp token --rotate`"
        )
    if len(text) < MIN_TOKEN_CHARS or not text.isprintable() or any(c.isspace() for c in text):
        raise ConfigError(
            f"token file {path} does not hold a usable token (one line of at least "
            f"{MIN_TOKEN_CHARS} characters, no spaces): `deskpilot mcp token --rotate` makes one"
        )
    return text


def ensure_token(path: Path) -> tuple[str, bool]:
    """The token kept in ``path``, made (0600) when there is none; and whether it is new."""
    if path.exists():
        return read_token_file(path), False
    token = new_token()
    try:
        write_token_file(path, token)
    except OSError as exc:
        raise ConfigError(f"cannot write token file {path}: {exc.strerror}") from exc
    return token, True


def rotate_token(path: Path) -> str:
    """Replace the token in ``path`` with a new one; running servers refuse the old one."""
    token = new_token()
    try:
        write_token_file(path, token)
    except OSError as exc:
        raise ConfigError(f"cannot write token file {path}: {exc.strerror}") from exc
    return token


@dataclass
class TokenFile:
    """The token a server accepts: the file's content, re-read whenever the file changes."""

    path: Path
    created: bool = False
    _token: bytes | None = None
    _seen: tuple[int, int, int] | None = field(default=None, repr=False)

    def current(self) -> bytes | None:
        """The token now in the file, or None (missing or unsafe: nothing is accepted)."""
        try:
            info = self.path.stat()
        except OSError:
            self._token, self._seen = None, None
            return None
        seen = (info.st_ino, info.st_mtime_ns, info.st_size)
        if seen != self._seen:
            self._seen = seen
            try:
                self._token = read_token_file(self.path).encode()
            except ConfigError:
                self._token = None
        return self._token

    def accepts(self, credential: bytes) -> bool:
        token = self.current()
        return token is not None and hmac.compare_digest(credential, token)


def load_token(path: Path) -> TokenFile:
    """The server's token file, made when missing; ConfigError when it exists but is unsafe."""
    _, created = ensure_token(path)
    tokens = TokenFile(path, created=created)
    tokens.current()
    return tokens
