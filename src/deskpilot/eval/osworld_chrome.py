"""OSWorld's Chrome getters and metrics, over the DevTools port of the task's own browser.

An OSWorld task starts ``google-chrome --remote-debugging-port=1337`` (and ``socat`` to expose
it on 9222); in a trial that is Chromium on a port of the trial's own (``{cdp_port}``: trials
share the network), tabs are opened through that port (``chrome_open_tabs``) and the getters
read it: ``active_tab_info``, ``active_url_from_accessTree`` (the active tab's URL),
``open_tabs_info``, ``active_tab_url_parse`` (keys of its query), ``url_dashPart`` (a part of
its path), and the browser's settings from its profile (Preferences, Local State, Bookmarks).
Pages of the live web do not load offline; their tabs still have their URLs.
"""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

from deskpilot.errors import CheckBroken

#: getters of the browser's settings, read from its profile (Chromium's, for Google Chrome's)
PREF_GETTERS = (
    "enable_do_not_track",
    "enable_enhanced_safety_browsing",
    "new_startup_page",
    "data_delete_automacally",
    "chrome_font_size",
    "default_search_engine",
    "profile_name",
    "enabled_experiments",
    "bookmarks",
)
GETTERS = (
    "active_tab_info",
    "active_url_from_accessTree",
    "open_tabs_info",
    "active_tab_url_parse",
    "url_dashPart",
    *PREF_GETTERS,
)
PROFILE = ".config/chromium"


def _json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def pref(kind: str, home: Path) -> Any:
    """What OSWorld's getter of that name returns, from the profile in ``home``."""
    profile = home / PROFILE
    if kind == "enabled_experiments":
        state = _json(profile / "Local State") or {}
        return state.get("browser", {}).get("enabled_labs_experiments", [])
    if kind == "bookmarks":
        marks = _json(profile / "Default" / "Bookmarks")
        return marks.get("roots", {}) if marks else []
    data = _json(profile / "Default" / "Preferences")
    fallback: dict[str, Any] = {
        "chrome_font_size": {"default_fixed_font_size": 13, "default_font_size": 16},
        "profile_name": None,
        "enable_do_not_track": "false",
    }
    if data is None:
        return fallback.get(kind, "Google")
    if kind == "enable_do_not_track":
        return "true" if data.get("enable_do_not_track") else "false"
    if kind == "enable_enhanced_safety_browsing":
        return "true" if data.get("safebrowsing", {}).get("enhanced") else "false"
    if kind == "new_startup_page":
        if "session" not in data:
            return "true"
        return "true" if data["session"].get("restore_on_startup") == 5 else "false"
    if kind == "data_delete_automacally":
        setting = data.get("profile", {}).get("default_content_setting_values")
        return "true" if setting is not None else "false"
    if kind == "chrome_font_size":
        return data.get("webkit", {}).get("webprefs", fallback["chrome_font_size"])
    if kind == "default_search_engine":
        return (
            data.get("default_search_provider_data", {})
            .get("template_url_data", {})
            .get("short_name", "Google")
        )
    if kind == "profile_name":
        return data.get("profile", {}).get("name")
    raise CheckBroken(f"getter {kind!r} is not supported")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _pages(port: str) -> list[dict[str, Any]]:
    import httpx  # here: every trial and eval command imports this module, few ask a browser

    try:
        reply = httpx.get(f"http://127.0.0.1:{port}/json/list", timeout=10)
        reply.raise_for_status()
    except httpx.HTTPError:
        return []  # no browser (the agent closed it): nothing is open
    return [t for t in reply.json() if t.get("type") == "page"]


def open_tab(port: str, url: str) -> bool:
    """Open ``url`` in a new tab of the browser on ``port``; False when there is none."""
    import httpx

    try:
        reply = httpx.put(f"http://127.0.0.1:{port}/json/new?{quote(url, safe='')}", timeout=10)
    except httpx.HTTPError:
        return False
    return reply.status_code == 200


def get(kind: str, spec: dict[str, Any], port: str, home: Path) -> Any:
    if kind in PREF_GETTERS:
        return pref(kind, home)
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


def _bar(bookmarks: Any) -> list[dict[str, Any]]:
    if not isinstance(bookmarks, dict):
        return []
    return list(bookmarks.get("bookmark_bar", {}).get("children", []))


def is_expected_bookmarks(result: Any, expected: Any) -> float:
    rules = expected if isinstance(expected, dict) else {}
    bar = _bar(result)
    if not bar:
        return 0.0
    kind = rules.get("type")
    if kind == "bookmark_bar_folders_names":
        names = {b.get("name") for b in bar if b.get("type") == "folder"}
        return 1.0 if names == set(rules.get("names", [])) else 0.0
    if kind == "bookmark_bar_websites_urls":
        urls = {b.get("url") for b in bar if b.get("type") == "url"}
        return 1.0 if urls == set(rules.get("urls", [])) else 0.0
    if kind == "liked_authors_websites_urls":
        folder = next(
            (b for b in bar if b.get("type") == "folder" and b.get("name") == "Liked Authors"), None
        )
        if folder is None:
            return 0.0
        got = {c.get("url") for c in folder.get("children", []) if c.get("type") == "url"}
        choices = [u if isinstance(u, list) else [u] for u in rules.get("urls", [])]
        return (
            1.0
            if len(got) == len(choices)
            and all(any(u in got for u in options) for options in choices)
            else 0.0
        )
    raise CheckBroken(f"is_expected_bookmarks: rule type {kind!r} is not supported")


def check_enabled_experiments(result: Any, expected: Any) -> float:
    rules = expected if isinstance(expected, dict) else {}
    names = [str(e).split("@")[0] for e in result or []]
    return 1.0 if rules.get("type") == "names" and names == rules.get("names") else 0.0


def check_font_size(result: Any, expected: Any) -> float:
    rules = expected if isinstance(expected, dict) else {}
    size = (result or {}).get("default_font_size") if isinstance(result, dict) else None
    if not isinstance(size, int | float):
        return 0.0
    if rules.get("type") == "value":
        return 1.0 if size == rules.get("value") else 0.0
    if rules.get("type") == "range":
        return 1.0 if rules.get("min", 0) < size < rules.get("max", 1e9) else 0.0
    return 0.0
