"""The sandbox user: a free uid with a passwd entry only its own programs see."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from deskpilot.sandbox import user as usermod
from deskpilot.sandbox.user import SandboxUser, claim_user, current_user, load_user, release_user

root_only = pytest.mark.skipif(os.geteuid() != 0, reason="switching identity needs root")


def test_no_switch_runs_commands_unchanged(tmp_path: Path) -> None:
    me = current_user(str(tmp_path))
    assert not me.switches and me.uid == os.getuid()
    assert me.wrap(["true", "x"]) == ["true", "x"]
    me.own(str(tmp_path))  # nothing to do, nothing fails
    assert SandboxUser.from_json(me.to_json()) == me


def test_group_membership_is_added_to_the_named_groups_only() -> None:
    line = "audio:x:29:pulse"
    assert usermod._with_member(line, {29: "deskpilot-62000"}) == "audio:x:29:pulse,deskpilot-62000"
    assert usermod._with_member("video:x:44:", {44: "u"}) == "video:x:44:u"
    assert usermod._with_member(line, {44: "u"}) == line
    assert usermod._with_member("# comment", {29: "u"}) == "# comment"


@pytest.fixture
def open_tmp() -> Iterator[Path]:
    """A temp dir the sandbox user can reach (pytest's tmp_path sits under a 0700 dir)."""
    path = Path(tempfile.mkdtemp(prefix="deskpilot-usertest-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@root_only
def test_claimed_user_is_known_inside_its_namespace_only(open_tmp: Path) -> None:
    tmp_path = open_tmp
    work = str(tmp_path / "work")
    os.makedirs(work)
    passwd_before = Path("/etc/passwd").read_bytes()
    user = claim_user(work, home=work, groups=["audio"])
    try:
        assert user.switches and user.uid in usermod.UID_RANGE
        assert load_user(work) == user
        with pytest.raises(KeyError):
            pwd.getpwuid(user.uid)
        user.own(work)
        out = subprocess.run(
            user.wrap(["sh", "-c", 'id -u; id -un; id -Gn; touch "$0/made"', work]),
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        ).stdout.split("\n")
        assert out[0] == str(user.uid) and out[1] == user.name
        assert "audio" in out[2].split()
        assert os.stat(os.path.join(work, "made")).st_uid == user.uid
        # a second claim while the first is held takes another uid
        other = str(tmp_path / "other")
        os.makedirs(other)
        second = claim_user(other, home=other)
        assert second.uid != user.uid
        release_user(other)
    finally:
        release_user(work)
    assert not (Path(usermod.claims_dir()) / str(user.uid)).exists()
    assert Path("/etc/passwd").read_bytes() == passwd_before


@root_only
def test_claim_whose_work_dir_is_gone_is_free_again(tmp_path: Path) -> None:
    gone = str(tmp_path / "gone")
    os.makedirs(gone)
    first = claim_user(gone, home=gone)
    os.rename(gone, gone + "-moved")  # its owner vanished without releasing
    work = str(tmp_path / "work")
    os.makedirs(work)
    try:
        again = claim_user(work, home=work)
        assert again.uid == first.uid
    finally:
        release_user(work)
        release_user(gone)
