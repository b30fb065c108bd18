"""The hash chain's canonical form: how an event row is written as JSON and hashed.

``hash = sha256(prev_hash + canonical_json(row))`` where ``row`` holds seq, run_id, kind, ts,
payload and image refs (blob SHA-256s); the first prev_hash is :data:`GENESIS` (64 zeros).
Writing (:mod:`deskpilot.audit.log`) and verifying (:mod:`deskpilot.audit.verify`) both use
these functions, so the two cannot disagree on what a row's hash covers.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from typing import Any

from deskpilot.events import Image

GENESIS = "0" * 64


def canonical_json(value: Any) -> str:
    """Sorted keys, no whitespace, UTF-8 (lone surrogates escaped); other types as ``str()``."""
    try:
        text = _dumps(value)
    except TypeError:  # keys of mixed types: normalise through plain JSON once, then sort
        value = json.loads(json.dumps(value, default=str))
        text = _dumps(value)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = _dumps(value, ascii_only=True)
    return text


def _dumps(value: Any, ascii_only: bool = False) -> str:
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=ascii_only, default=str
    )


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def image_ref(image: Image) -> dict[str, Any]:
    """How an image appears in the log and in JSON output: its hash and size, not its bytes."""
    return {
        "sha256": sha256_hex(image.data),
        "mime": image.mime,
        "bytes": len(image.data),
        "width": image.width,
        "height": image.height,
    }


def row_hash(prev_hash: str, row: dict[str, Any]) -> str:
    """The chain link: SHA-256 of ``prev_hash`` + the canonical JSON of the row's content."""
    return sha256_hex((prev_hash + canonical_json(row)).encode("utf-8"))


def chain_row(
    seq: int, run_id: str, kind: str, ts: float, payload: Any, images: Any
) -> dict[str, Any]:
    return {
        "seq": seq,
        "run_id": run_id,
        "kind": kind,
        "ts": ts,
        "payload": payload,
        "images": images,
    }


def new_run_id() -> str:
    return uuid.uuid4().hex[:16]
