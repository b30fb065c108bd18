"""UserCSS: a style as one CSS text with a ``/* ==UserStyle== … ==/UserStyle== */`` block
(https://github.com/openstyles/stylus/wiki/Writing-UserCSS), read as Stylus reads it.

The block's ``@name``, ``@namespace`` and ``@version`` are mandatory (Stylus refuses to
install a file without them); ``@var`` lines declare the style's settings; ``@preprocessor``
is ``default`` (settings become CSS custom properties in ``:root``), ``uso`` (``/*[[name]]*/``
is replaced by the setting's value), or ``less``/``stylus`` — which need their compilers: a
Stylus export keeps the compiled sections when exported in compatibility mode, and those are
used; without them the style cannot be imported. The ``@-moz-document`` blocks become
sections (:func:`deskpilot.pages.stylus.moz_document_sections`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

_BLOCK = re.compile(r"/\*\s*==UserStyle==(.*?)==/UserStyle==\s*\*/", re.S)
_LINE = re.compile(r"^\s*@([\w-]+)(?:[ \t]+(.*?))?\s*$", re.M)
MANDATORY = ("name", "namespace", "version")
PREPROCESSORS = ("default", "uso", "less", "stylus")


@dataclass
class UserCssMeta:
    values: dict[str, str] = field(default_factory=dict)
    vars: dict[str, dict[str, Any]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.values.get("name", "")

    @property
    def preprocessor(self) -> str:
        return self.values.get("preprocessor", "default") or "default"


def strip_meta(source: str) -> str:
    return _BLOCK.sub("", source, count=1)


def parse_usercss_meta(source: str) -> UserCssMeta | None:
    """The ``==UserStyle==`` block of ``source`` (None when it has none)."""
    m = _BLOCK.search(source)
    if m is None:
        return None
    meta = UserCssMeta()
    for line in _LINE.finditer(m.group(1)):
        key, value = line.group(1), (line.group(2) or "").strip()
        if key in ("var", "advanced"):
            _var(meta, value)
        else:
            meta.values.setdefault(key, value)
    for key in MANDATORY:
        if not meta.values.get(key):
            meta.problems.append(f"the ==UserStyle== block has no @{key} (Stylus requires it)")
    pre = meta.values.get("preprocessor")
    if pre and pre not in PREPROCESSORS:
        meta.problems.append(f"@preprocessor {pre!r} is not one of {', '.join(PREPROCESSORS)}")
    return meta


def _var(meta: UserCssMeta, text: str) -> None:
    m = re.match(
        r"(\w+)\s+([\w-]+)\s+(\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|\S+)\s*(.*)", text, re.S
    )
    if m is None:
        meta.problems.append(f"@var {text[:60]!r} needs a type, a name, a label and a default")
        return
    kind, name, _label, rest = m.groups()
    default: Any = rest.strip()
    options: list[tuple[str, str]] = []
    units = ""
    if kind in ("select", "dropdown", "image"):
        options = _options(default)
        if not options:
            meta.problems.append(f"@var {kind} {name} lists no options")
            return
        chosen = next((o for o in options if o[0].endswith("*")), options[0])
        default = chosen[0].rstrip("*")
        options = [(k.rstrip("*"), v.rstrip("*") if v == k else v) for k, v in options]
    elif kind in ("number", "range"):
        try:
            spec = json.loads(default)
        except ValueError:
            spec = default
        if isinstance(spec, list):
            nums = [x for x in spec if isinstance(x, int | float) and not isinstance(x, bool)]
            units = next((x for x in spec if isinstance(x, str)), "")
            default = nums[0] if nums else 0
        else:
            default = spec
    elif kind == "checkbox":
        default = "1" if default.strip() in ("1", "true") else "0"
    elif kind in ("text", "color"):
        default = _unquote(default)
    meta.vars[name] = {"type": kind, "default": default, "options": options, "units": units}


def _unquote(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    return text


def _options(text: str) -> list[tuple[str, str]]:
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, list):
        out = []
        for item in data:
            label, _, value = str(item).partition(":")
            out.append((label, value or label))
        return out
    if isinstance(data, dict):
        return [(str(k), str(v)) for k, v in data.items()]
    # the {name "label" <<<EOT value EOT;} form of @advanced dropdown
    found = re.findall(r"([\w-]+\*?)\s+\"[^\"]*\"\s+<<<EOT\s*(.*?)\s*EOT;", text, re.S)
    return [(k, v) for k, v in found]


def resolved_vars(meta: UserCssMeta, saved: Any) -> dict[str, str]:
    """Each setting's value: the one a Stylus export saved (``usercssData.vars[x].value``),
    else its default; options resolved, number units added."""
    saved_vars = saved if isinstance(saved, dict) else {}
    out: dict[str, str] = {}
    for name, spec in meta.vars.items():
        entry = saved_vars.get(name)
        value = entry.get("value") if isinstance(entry, dict) else None
        if value is None:
            value = spec["default"]
        if spec["options"]:
            value = next((v for k, v in spec["options"] if k == str(value)), str(value))
        elif spec["type"] in ("number", "range"):
            value = f"{value}{spec['units']}"
        out[name] = str(value)
    return out


def apply_vars(code: str, preprocessor: str, values: dict[str, str]) -> str:
    """One section's code with the settings applied as Stylus applies them."""
    if not values:
        return code
    if preprocessor == "uso":
        return re.sub(r"/\*\[\[([\w-]+)\]\]\*/", lambda m: values.get(m.group(1), m.group(0)), code)
    root = ":root {\n" + "".join(f"  --{k}: {v};\n" for k, v in values.items()) + "}\n"
    head = re.match(r"(?:\s*@(?:charset|import|namespace)\b[^;]*;)*", code)
    cut = head.end() if head else 0
    return code[:cut] + ("\n" if cut else "") + root + code[cut:]
