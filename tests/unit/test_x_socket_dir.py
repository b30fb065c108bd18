"""The X socket directory a sandbox's Xwayland shares with every other X server."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from deskpilot.errors import SandboxError
from deskpilot.sandbox.compositors import share_x_socket_dir

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="only root shares the directory")


@needs_root
def test_a_missing_directory_is_made_everyones(tmp_path: Path) -> None:
    path = tmp_path / ".X11-unix"
    share_x_socket_dir(str(path))
    info = path.lstat()
    assert (info.st_uid, stat.S_IMODE(info.st_mode)) == (0, 0o1777)


@needs_root
def test_one_an_earlier_sandbox_users_xwayland_made_its_own_is_given_back(
    tmp_path: Path,
) -> None:
    path = tmp_path / ".X11-unix"
    path.mkdir(mode=0o755)
    os.chown(path, 62000, 62000)  # what a first Xwayland, run as the sandbox's user, leaves
    (path / "X1").touch()
    share_x_socket_dir(str(path))
    info = path.lstat()
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (0, 0, 0o1777)
    assert (path / "X1").exists()  # its sockets stay


@needs_root
def test_a_file_in_its_place_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / ".X11-unix"
    path.write_text("")
    with pytest.raises(SandboxError, match="not a directory"):
        share_x_socket_dir(str(path))
