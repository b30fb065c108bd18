"""Element IDs: short, derived from the element's identity on the accessibility bus.

An AT-SPI object is named by (bus unique name, object path). Unique names (``:1.42``) are never
reused while the bus runs, so an ID built from both parts is never reused for another element,
and the same element gets the same ID in every read and every process:

* bus ``:1.42`` → ``16`` (the serial in base 36);
* a numbered path ``/org/a11y/atspi/accessible/1234`` (atk-bridge, Qt) → ``.ya`` (base 36);
* the app root → ``.r``;
* any other path (GTK4 uses random UUIDs) → ``_`` + 5 base-32 characters of its SHA-1.

So ``16.ya`` or ``16_k3x9p``. Hash collisions inside one read are resolved by lengthening the
colliding IDs (never by reusing one).
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Iterable

_NUMBERED = re.compile(r"/org/a11y/atspi/accessible/(\d+)")
_ROOT = "/org/a11y/atspi/accessible/root"
_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"
ID_PATTERN = re.compile(r"[0-9a-z]+(?:~[0-9a-z]+)?(?:\.[0-9a-z]+|_[a-z2-7]+)")


def b36(n: int) -> str:
    if n == 0:
        return "0"
    out = []
    while n:
        n, r = divmod(n, 36)
        out.append(_DIGITS[r])
    return "".join(reversed(out))


def bus_part(bus: str) -> str:
    m = re.fullmatch(r":(\d+)\.(\d+)", bus)
    if m is None:
        return _hash(bus, 4)
    major, minor = int(m.group(1)), int(m.group(2))
    return b36(minor) if major == 1 else f"{b36(major)}~{b36(minor)}"


def _hash(text: str, n: int) -> str:
    digest = hashlib.sha1(text.encode()).digest()
    return base64.b32encode(digest).decode().lower()[:n]


def element_id(bus: str, path: str, hash_len: int = 5) -> str:
    prefix = bus_part(bus)
    if path == _ROOT:
        return f"{prefix}.r"
    m = _NUMBERED.fullmatch(path)
    if m is not None:
        return f"{prefix}.{b36(int(m.group(1)))}"
    return f"{prefix}_{_hash(path, hash_len)}"


def assign_ids(keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """IDs for a set of elements; hashed IDs that collide are lengthened until unique."""
    keys = list(dict.fromkeys(keys))
    ids = {k: element_id(*k) for k in keys}
    length = 5
    while True:
        seen: dict[str, list[tuple[str, str]]] = {}
        for k, v in ids.items():
            seen.setdefault(v, []).append(k)
        clashes = [ks for ks in seen.values() if len(ks) > 1]
        if not clashes:
            return ids
        length += 2
        for ks in clashes:
            for k in ks:
                ids[k] = element_id(*k, hash_len=length)


def normalize(element_id_text: str) -> str:
    """Accept what models send: ``@16.ya``, ``16.YA``, surrounding spaces."""
    return element_id_text.strip().lstrip("@").strip().lower()
