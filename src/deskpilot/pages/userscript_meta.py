"""A userscript's metadata block (``// ==UserScript==`` … ``// ==/UserScript==``), read as
Violentmonkey reads it (src/background/utils/script.js ``parseMeta``): the block may follow
any text on its first line, each ``// @key value`` line gives one value, ``@key:locale`` a
localised one; list keys collect every value, ``@resource`` gives ``name url`` pairs,
``@noframes``/``@unwrap`` are flags, any other key keeps its first value.

A rule is a userscript when its JS has such a block; :func:`is_userscript` is the one test
the generator, the editor and the importers share.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

_BLOCK = re.compile(
    r"((?:^|\n)(.*?)//([\x20\t]*)==UserScript==)([\s\S]*?\n)((.*?)//([\x20\t]*)==/UserScript==)"
)
_ITEM = re.compile(r"(?:^|\n)(.*?)//([\x20\t]*)(@\S+)(.*)")
LIST_KEYS = frozenset(
    {
        "include",
        "exclude",
        "match",
        "excludeMatch",
        "require",
        "grant",
        "antifeature",
        "compatible",
        "connect",
        "tag",
        "incompatible",
    }
)
FLAG_KEYS = frozenset({"noframes", "unwrap", "topLevelAwait"})
RUN_AT_VALUES = ("document-start", "document-body", "document-end", "document-idle")
#: every GM API a script can be granted (Violentmonkey's and Tampermonkey's documented ones)
GM_FUNCTIONS = (
    "GM_addElement",
    "GM_addStyle",
    "GM_addValueChangeListener",
    "GM_deleteValue",
    "GM_deleteValues",
    "GM_download",
    "GM_getResourceText",
    "GM_getResourceURL",
    "GM_getTab",
    "GM_getTabs",
    "GM_getValue",
    "GM_getValues",
    "GM_info",
    "GM_listValues",
    "GM_log",
    "GM_notification",
    "GM_openInTab",
    "GM_registerMenuCommand",
    "GM_removeValueChangeListener",
    "GM_saveTab",
    "GM_setClipboard",
    "GM_setValue",
    "GM_setValues",
    "GM_unregisterMenuCommand",
    "GM_xmlhttpRequest",
)
#: GM4 names (``GM.xxx``) and the GM_ function each stands for
GM4_NAMES = {
    "addElement": "GM_addElement",
    "addStyle": "GM_addStyle",
    "addValueChangeListener": "GM_addValueChangeListener",
    "deleteValue": "GM_deleteValue",
    "deleteValues": "GM_deleteValues",
    "download": "GM_download",
    "getResourceText": "GM_getResourceText",
    "getResourceUrl": "GM_getResourceURL",
    "getResourceURL": "GM_getResourceURL",
    "getTab": "GM_getTab",
    "getTabs": "GM_getTabs",
    "getValue": "GM_getValue",
    "getValues": "GM_getValues",
    "info": "GM_info",
    "listValues": "GM_listValues",
    "log": "GM_log",
    "notification": "GM_notification",
    "openInTab": "GM_openInTab",
    "registerMenuCommand": "GM_registerMenuCommand",
    "removeValueChangeListener": "GM_removeValueChangeListener",
    "saveTab": "GM_saveTab",
    "setClipboard": "GM_setClipboard",
    "setValue": "GM_setValue",
    "setValues": "GM_setValues",
    "unregisterMenuCommand": "GM_unregisterMenuCommand",
    "xmlHttpRequest": "GM_xmlhttpRequest",
    "xmlhttpRequest": "GM_xmlhttpRequest",
}
OTHER_GRANTS = ("none", "unsafeWindow", "window.close", "window.focus", "window.onurlchange")
VALUE_FUNCTIONS = frozenset(
    {
        "GM_getValue",
        "GM_setValue",
        "GM_deleteValue",
        "GM_listValues",
        "GM_getValues",
        "GM_setValues",
        "GM_deleteValues",
        "GM_addValueChangeListener",
    }
)


@dataclass(frozen=True)
class UserscriptMeta:
    """A parsed metadata block; ``values`` holds every key (camelCase) as Violentmonkey
    keeps it."""

    text: str  # the block itself (GM_info.scriptMetaStr)
    values: dict[str, Any] = field(default_factory=dict)
    problems: tuple[str, ...] = ()

    def first(self, key: str, default: str = "") -> str:
        value = self.values.get(key)
        return value if isinstance(value, str) else default

    def items(self, key: str) -> list[str]:
        value = self.values.get(key)
        return list(value) if isinstance(value, list) else []

    def flag(self, key: str) -> bool:
        return bool(self.values.get(key))

    @property
    def name(self) -> str:
        return self.first("name")

    @property
    def namespace(self) -> str:
        return self.first("namespace")

    @property
    def resources(self) -> dict[str, str]:
        value = self.values.get("resource")
        return dict(value) if isinstance(value, dict) else {}

    @property
    def grants(self) -> list[str]:
        return self.items("grant")

    @property
    def uri(self) -> str:
        """Violentmonkey's key for the script (``props.uri``): what a backup's values use."""
        return encode_filename(f"{self.namespace}\n{self.name}\n")


def encode_filename(text: str) -> str:
    """Violentmonkey's ``encodeFilename``."""
    return re.sub(r"[-\\/:*?\"<>|%\s]", lambda m: f"-{ord(m.group(0)):02x}", text)


def parse_meta(source: str) -> UserscriptMeta | None:
    """The metadata block of ``source``; None when it has none (or is HTML)."""
    if re.match(r"\s*<", source):
        return None
    text = source.replace("\r\n", "\n")
    block = _BLOCK.search(text)
    if block is None:
        return None
    values: dict[str, Any] = {}
    problems: list[str] = []
    for item in _ITEM.finditer(block.group(4)):
        key, _, locale = item.group(3)[1:].partition(":")
        key = re.sub(r"[-_](\w)", lambda m: m.group(1).upper(), key)
        if locale:
            key = f"{key}:{locale.lower()}"
        value = item.group(4).strip()
        if key == "resource":
            pair = re.match(r"(\w\S*)\s+(.*)", value)
            if pair:
                values.setdefault("resource", {})[pair.group(1)] = pair.group(2).strip()
            else:
                problems.append(f"@resource {value!r} needs a name and a URL")
        elif key in LIST_KEYS:
            values.setdefault(key, []).append(value)
        elif key in FLAG_KEYS:
            values[key] = True
        else:
            values.setdefault(key, value)
    return UserscriptMeta(text=block.group(0).lstrip("\n"), values=values, problems=tuple(problems))


def is_userscript(js: str | None) -> bool:
    """Whether a rule's JS is a userscript: it has a metadata block (Violentmonkey's test)."""
    return bool(js) and parse_meta(js or "") is not None


def granted(meta: UserscriptMeta) -> set[str]:
    """The GM_ functions the script may use (``GM.x`` grants their GM_ twin's function)."""
    out = set()
    for g in meta.grants:
        if g.startswith("GM.") and g[3:] in GM4_NAMES:
            out.add(GM4_NAMES[g[3:]])
        elif g in GM_FUNCTIONS:
            out.add(g)
    return out


def grant_problems(meta: UserscriptMeta) -> list[str]:
    """Grants no manager knows (said, not refused: Violentmonkey ignores them too)."""
    known = {*GM_FUNCTIONS, *OTHER_GRANTS, *(f"GM.{n}" for n in GM4_NAMES)}
    odd = [g for g in meta.grants if g and g not in known and not g.startswith("GM_cookie")]
    return [f"@grant {g} is not an API deskpilot provides: the script gets none" for g in odd]


def needs_values(meta: UserscriptMeta) -> bool:
    return bool(granted(meta) & VALUE_FUNCTIONS)
