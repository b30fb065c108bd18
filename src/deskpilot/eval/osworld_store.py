"""The local file store of OSWorld downloads: files keyed by URL, filled once, read offline.

OSWorld tasks download their documents and gold files from the web at setup and check time;
deskpilot's trials run offline, so a task's ``download`` and ``cloud_file`` URLs are read from
this store instead. A URL's file lives at ``STORE/<host>/<path>`` (a query string, if any,
becomes a ``__<hash>`` suffix), so the store is a plain directory anyone can fill:
``deskpilot eval osworld fetch-list SUITE`` prints each missing URL and the path to put it at,
or a shell script of ``curl`` commands with ``--script``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from urllib.parse import unquote, urlsplit

from deskpilot.errors import TaskError


def store_path(url: str) -> str:
    """Where a URL's file lives, relative to the store."""
    parts = urlsplit(url)
    if not parts.scheme or not parts.netloc:
        raise TaskError(f"{url!r} is not a URL")
    segments = [s for s in unquote(parts.path).split("/") if s not in ("", ".", "..")]
    name = "/".join(segments) or "index"
    if parts.query:
        name += "__" + hashlib.sha256(parts.query.encode()).hexdigest()[:12]
    return f"{parts.netloc.lower()}/{name}"


def missing(store: Path, urls: list[str]) -> list[str]:
    """The URLs whose file is not in the store."""
    return [u for u in dict.fromkeys(urls) if not (store / store_path(u)).is_file()]


def fetch_lines(store: Path, urls: list[str], *, script: bool) -> list[str]:
    out = []
    for url in urls:
        dest = store / store_path(url)
        if script:
            out.append(f"curl -fL --retry 3 --create-dirs -o '{dest}' '{url}'")
        else:
            out.append(f"{url}\t{dest}")
    return out
