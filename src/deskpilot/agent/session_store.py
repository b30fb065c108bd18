"""Save a conversation to a JSON file and resume it (``deskpilot chat --resume FILE``).

The file is the neutral conversation (:meth:`Conversation.to_dict`) plus a little metadata
(the model in use, the tool protocol); screenshots are kept as base64. Writes are atomic.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from deskpilot._files import write_atomic
from deskpilot.agent.conversation import Conversation
from deskpilot.errors import ConfigError


def save_conversation(
    path: Path, conversation: Conversation, meta: Mapping[str, Any] | None = None
) -> None:
    data = {"deskpilot_conversation": conversation.to_dict(), "meta": dict(meta or {})}
    write_json(path.expanduser(), data)


def write_json(path: Path, data: Mapping[str, Any]) -> None:
    """Write ``data`` to ``path`` atomically, readable by this user only."""
    write_atomic(path, json.dumps(data, ensure_ascii=False), mode=0o600)  # screenshots, keys


def load_conversation(path: Path) -> tuple[Conversation, dict[str, Any]]:
    path = path.expanduser()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        conversation = Conversation.from_dict(data["deskpilot_conversation"])
    except OSError as exc:
        raise ConfigError(f"cannot read conversation {path}: {exc.strerror}") from exc
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ConfigError(f"{path} is not a saved deskpilot conversation ({exc})") from exc
    meta = data.get("meta")
    return conversation, dict(meta) if isinstance(meta, dict) else {}
