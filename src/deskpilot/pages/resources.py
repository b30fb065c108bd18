"""Finding the files a userscript's ``@require`` and ``@resource`` lines name: a ``data:`` URL
in the line itself, deskpilot's cache (:mod:`deskpilot.pages.script_data`), a local file
(``file://`` or a path relative to the script's own file), or — only when asked — the network.

A URL may carry Subresource Integrity hashes after ``#`` (``#sha256=<hex>``,
``#sha256-<base64>``, ``#md5=<hex>``, several separated by ``,`` or ``;``), as Tampermonkey and
Violentmonkey accept them: a file whose digest differs is refused.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import mimetypes
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, unquote_to_bytes, urljoin, urlsplit

from deskpilot.pages.script_data import Resource, cache_key

_HASH = re.compile(r"(md5|sha1|sha256|sha384|sha512)[=-]([A-Za-z0-9+/=_-]+)", re.I)
FETCH_TIMEOUT = 30.0
MAX_RESOURCE = 20_000_000


def absolute(url: str, base: str = "") -> str:
    """``url`` made absolute against ``base`` (the script's own URL or file)."""
    url = url.strip()
    if re.match(r"[a-z][a-z0-9+.-]*:", url, re.I):
        return url
    return urljoin(base, url) if base else url


def integrity_problem(url: str, body: bytes) -> str | None:
    """Why ``body`` does not match the hashes in ``url``'s fragment (None: it does, or none)."""
    _, _, fragment = url.partition("#")
    for algo, want in _HASH.findall(fragment):
        digest = hashlib.new(algo.lower(), body).digest()
        try:
            expected = (
                bytes.fromhex(want)
                if re.fullmatch(r"[0-9a-fA-F]+", want) and len(want) == 2 * len(digest)
                else base64.b64decode(want + "=" * (-len(want) % 4), altchars=b"-_")
            )
        except (ValueError, binascii.Error):
            return f"its {algo} hash {want!r} cannot be read"
        if expected != digest:
            return f"its {algo} hash does not match the file ({digest.hex()[:16]}…)"
    return None


def guess_mime(url: str, given: str = "") -> str:
    if given:
        return given.split(";")[0].strip()
    path = urlsplit(cache_key(url)).path
    return mimetypes.guess_type(path)[0] or "application/octet-stream"


def data_url(url: str) -> Resource | None:
    """A ``data:`` URL's contents."""
    if not url.startswith("data:"):
        return None
    head, sep, payload = url[5:].partition(",")
    if not sep:
        return None
    mime = head.split(";")[0] or "text/plain"
    try:
        body = (
            base64.b64decode(unquote(payload))
            if head.endswith(";base64")
            else unquote_to_bytes(payload)
        )
    except (ValueError, binascii.Error):
        return None
    return Resource(url, body, mime, "data")


def local_file(url: str) -> Path | None:
    parts = urlsplit(url)
    if parts.scheme != "file":
        return None
    return Path(unquote(parts.path))


@dataclass
class Found:
    """The outcome of looking for one URL."""

    url: str  # absolute
    resource: Resource | None = None
    problem: str | None = None
    cached: bool = False  # already in the cache (nothing to add)


def find(
    url: str,
    base: str,
    cached: Callable[[str], Resource | None],
    *,
    fetch: bool = False,
) -> Found:
    """Look for ``url`` (relative to ``base``): data URL, cache, local file, then the network
    if ``fetch``."""
    full = absolute(url, base)
    inline = data_url(full)
    if inline is not None:
        return Found(full, inline, cached=True)
    hit = cached(full)
    if hit is not None:
        bad = integrity_problem(full, hit.body)
        return Found(
            full, hit, f"the cached copy of {full} is refused: {bad}" if bad else None, cached=True
        )
    path = local_file(full)
    if path is not None:
        try:
            body = path.read_bytes()
        except OSError as exc:
            return Found(full, problem=f"cannot read {path}: {exc.strerror or exc}")
        res = Resource(cache_key(full), body, guess_mime(full), str(path))
    elif fetch and urlsplit(full).scheme in ("http", "https"):
        got = download(full)
        if isinstance(got, str):
            return Found(full, problem=got)
        res = got
    else:
        return Found(full, problem=missing(full))
    bad = integrity_problem(full, res.body)
    if bad:
        return Found(full, problem=f"{full} is refused: {bad}")
    return Found(full, res)


def missing(url: str) -> str:
    return (
        f"{url} is not in deskpilot's cache: fill it with `deskpilot rules cache add {url} FILE`"
        f" (a copy you have) or `deskpilot rules cache fetch {url}` (online), or import with "
        "--fetch"
    )


def download(url: str, timeout: float = FETCH_TIMEOUT) -> Resource | str:
    """The file at ``url`` (http/https), or why it could not be had."""
    import httpx

    try:
        with httpx.Client(timeout=timeout, follow_redirects=True) as client:
            reply = client.get(cache_key(url))
    except httpx.HTTPError as exc:
        return f"cannot download {url}: {exc}"
    if reply.status_code != 200:
        return f"cannot download {url}: HTTP {reply.status_code}"
    if len(reply.content) > MAX_RESOURCE:
        return f"{url} is larger than {MAX_RESOURCE} bytes"
    mime = guess_mime(url, reply.headers.get("content-type", ""))
    return Resource(cache_key(url), reply.content, mime, "network")
