"""The HTTP bearer token file: made once (0600), kept, rotated; a running server follows it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from deskpilot.errors import ConfigError
from deskpilot.mcp.tokens import (
    MIN_TOKEN_CHARS,
    ensure_token,
    load_token,
    read_token_file,
    rotate_token,
)


def test_made_once_then_kept(tmp_path: Path) -> None:
    path = tmp_path / "state" / "mcp-token"
    token, created = ensure_token(path)
    assert created and len(token) >= MIN_TOKEN_CHARS
    assert path.stat().st_mode & 0o777 == 0o600
    assert ensure_token(path) == (token, False)
    assert read_token_file(path) == token


def test_a_running_server_follows_rotation_and_fails_closed(tmp_path: Path) -> None:
    path = tmp_path / "mcp-token"
    tokens = load_token(path)
    old = path.read_text().strip().encode()
    assert tokens.accepts(old) and not tokens.accepts(b"x" * 43)
    new = rotate_token(path).encode()
    assert new != old
    assert tokens.accepts(new) and not tokens.accepts(old)
    path.unlink()
    assert not tokens.accepts(new)  # no file, nothing is accepted
    path.write_text("short\n")
    os.chmod(path, 0o600)
    assert not tokens.accepts(b"short")


@pytest.mark.parametrize(
    ("content", "mode", "message"),
    [
        ("a" * 40, 0o644, "can be read by other users (mode 644): `chmod 600"),
        ("too-short", 0o600, "does not hold a usable token"),
        ("a" * 20 + " " + "b" * 20, 0o600, "does not hold a usable token"),
    ],
)
def test_unsafe_token_files_are_refused(
    tmp_path: Path, content: str, mode: int, message: str
) -> None:
    path = tmp_path / "token"
    path.write_text(content + "\n")
    os.chmod(path, mode)
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_token(path)


def test_a_missing_file_is_named_with_the_fix(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="deskpilot mcp token --rotate"):
        read_token_file(tmp_path / "none")
