"""Kept sandboxes (``sandbox up`` / ``status`` / ``down``): their saved info, one file each.

A sandbox started with ``keep=True`` outlives its starter; its
:class:`~deskpilot.sandbox.info.SandboxInfo` is saved under the state directory, by name, so
that later commands can find it, tell whether it still runs, and forget it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from deskpilot import _procfs
from deskpilot.errors import SandboxError
from deskpilot.sandbox.info import SandboxInfo


def state_file(state_dir: Path, name: str) -> Path:
    return state_dir / "sandboxes" / f"{name}.json"


def save_info(state_dir: Path, name: str, info: SandboxInfo) -> Path:
    path = state_file(state_dir, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(info.to_json())
    tmp.replace(path)
    return path


def load_info(state_dir: Path, name: str) -> SandboxInfo | None:
    path = state_file(state_dir, name)
    try:
        return SandboxInfo.from_json(path.read_text())
    except FileNotFoundError:
        return None
    except (ValueError, TypeError) as exc:
        raise SandboxError(f"sandbox state file {path} is corrupt ({exc}); delete it") from exc


def is_alive(info: SandboxInfo) -> bool:
    server = info.pids.get("xvfb") or info.pids.get("compositor")
    return server is not None and not _procfs.is_zombie(server) and os.path.isdir(info.runtime_dir)


def forget(state_dir: Path, name: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        state_file(state_dir, name).unlink()


def list_kept(state_dir: Path) -> Iterator[tuple[str, SandboxInfo]]:
    folder = state_dir / "sandboxes"
    if not folder.is_dir():
        return
    for path in sorted(folder.glob("*.json")):
        with contextlib.suppress(SandboxError):
            info = load_info(state_dir, path.stem)
            if info is not None:
                yield path.stem, info
