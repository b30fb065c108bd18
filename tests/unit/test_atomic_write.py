"""The one atomic-write helper (deskpilot/_files.py): a reader sees the old file or the whole
new one; the mode asked for holds from the first byte; a failed write leaves nothing behind."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from deskpilot._files import write_atomic


def test_text_and_bytes_replace_the_file_and_make_its_directory(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "state.json"
    write_atomic(path, "première")
    assert path.read_text(encoding="utf-8") == "première"
    write_atomic(path, b"\x00\x01")
    assert path.read_bytes() == b"\x00\x01"
    assert sorted(p.name for p in path.parent.iterdir()) == ["state.json"]


def test_mode_is_kept_or_follows_the_umask(tmp_path: Path) -> None:
    secret = tmp_path / "token"
    write_atomic(secret, "t\n", mode=0o600)
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    old = os.umask(0o027)
    try:
        plain = tmp_path / "plain"
        write_atomic(plain, "x")
        assert stat.S_IMODE(plain.stat().st_mode) == 0o640
    finally:
        os.umask(old)


def test_a_failed_write_leaves_the_old_file_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "kept.txt"
    path.write_text("old")

    def broken(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(OSError, match="No space"):
        write_atomic(path, "new")
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["kept.txt"]
