"""OSWorld's Chrome getters and metrics, over the DevTools port of the task's own browser.

An OSWorld task starts ``google-chrome --remote-debugging-port=1337`` (and ``socat`` to expose
it on 9222); in a trial that is Chromium on a port of the trial's own (``{cdp_port}``: trials
share the network), tabs are opened through that port (``chrome_open_tabs``) and the getters
read it: ``active_tab_info``, ``active_url_from_accessTree`` (the active tab's URL),
``open_tabs_info``, ``active_tab_url_parse`` (keys of its query), ``url_dashPart`` (a part of
its path). Pages of the live web do not load offline; their tabs still have their URLs.
"""

from __future__ import annotations

import re
import socket
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import httpx

from deskpilot.errors import CheckBroken

GETTERS = ("active_tab_info", "active_url_from_accessTree", "open_tabs_info",
           "active_tab_url_parse", "url_dashPart")  # fmt: skip


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _pages(port: str) -> list[dict[str, Any]]:
    try:
        reply = httpx.get(f"http://127.0.0.1:{port}/json/list", timeout=10)
        reply.raise_for_status()
    except httpx.HTTPError:
        return []  # no browser (the agent closed it): nothing is open
    return [t for t in reply.json() if t.get("type") == "page"]


def open_tab(port: str, url: str) -> bool:
    """Open ``url`` in a new tab of the browser on ``port``; False when there is none."""
    try:
        reply = httpx.put(f"http://127.0.0.1:{port}/json/new?{quote(url, safe='')}", timeout=10)
    except httpx.HTTPError:
        return False
    return reply.status_code == 200


def get(kind: str, spec: dict[str, Any], port: str) -> Any:
    pages = _pages(port)
    if kind == "open_tabs_info":
        return [{"title": p.get("title", ""), "url": p.get("url", "")} for p in pages]
    if not pages:
        return None
    active = pages[0]  # the DevTools list starts with the tab last in front
    url = str(active.get("url", ""))
    if kind == "active_tab_info":
        return {"title": active.get("title", ""), "url": url}
    if kind == "active_url_from_accessTree":
        return url
    if kind == "active_tab_url_parse":
        query = parse_qs(urlsplit(url).query)
        out = {k: query[k][0] for k in spec.get("parse_keys", []) if k in query}
        for key, new in (spec.get("replace") or {}).items():
            if key in out:
                out[new] = out.pop(key)
        return out
    if kind == "url_dashPart":
        parts = url.split("/")
        index = int(spec.get("partIndex", -1))
        if not 0 <= index < len(parts):
            return None
        part = parts[index].split("?")[0] if spec.get("needDeleteId") else parts[index]
        if spec.get("returnType") == "json":
            return {str(spec.get("key", "")): part}
        return part
    raise CheckBroken(f"getter {kind!r} is not supported")


def _norm(url: str | None) -> tuple[str, ...] | None:
    if url is None:
        return None
    if not re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://", url):
        url = "http://" + url
    parts = urlsplit(url)
    host = parts.netloc.lower()
    host = host[4:] if host.startswith("www.") else host
    return (host, parts.path.rstrip("/") or "", parts.query, parts.fragment)


def same_url(a: str | None, b: str | None) -> bool:
    return _norm(a) == _norm(b)


def _url(value: Any) -> str | None:
    if isinstance(value, dict):
        return str(value.get("url")) if value.get("url") else None
    return str(value) if value else None


def is_expected_active_tab(result: Any, expected: Any) -> float:
    rules = expected if isinstance(expected, dict) else {}
    if rules.get("type") != "url" or not result:
        return 0.0
    return 1.0 if same_url(_url(result), str(rules.get("url"))) else 0.0


def is_expected_url_pattern_match(result: Any, expected: Any) -> float:
    url = _url(result)
    rules = expected if isinstance(expected, dict) else {}
    if not url:
        return 0.0
    return 1.0 if all(re.search(p, url) for p in rules.get("expected", [])) else 0.0


def is_expected_tabs(result: Any, expected: Any) -> float:
    rules = expected if isinstance(expected, dict) else {}
    if rules.get("type") != "url" or not result:
        return 0.0
    got = [str(t.get("url", "")) for t in result]
    want = [str(u) for u in rules.get("urls", [])]
    return 1.0 if len(got) == len(want) and all(map(same_url, got, want)) else 0.0
