"""App guidance: tips shown in ``<appGuidance>`` for apps with known faster techniques.

The tips live in data files (``deskpilot/data/guidance/*.toml``: ``match`` and ``tips``) so they
can be edited without code; users can add their own in ``~/.config/deskpilot/guidance/``.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

from deskpilot.desktop.base import AppIdentity


@dataclass(frozen=True)
class Guidance:
    name: str
    match: frozenset[str]
    tips: str


def _parse(name: str, text: str) -> Guidance | None:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None
    match = data.get("match", [])
    tips = data.get("tips", "")
    if not isinstance(match, list) or not isinstance(tips, str) or not tips.strip():
        return None
    # a single newline only wraps the source: join it; blank lines separate tips
    paragraphs = [" ".join(p.split()) for p in tips.strip().split("\n\n")]
    return Guidance(name, frozenset(str(m).casefold() for m in match), "\n".join(paragraphs))


@lru_cache(maxsize=4)
def load_guidance(user_dir: Path | None = None) -> tuple[Guidance, ...]:
    found: list[Guidance] = []
    if user_dir is not None and user_dir.is_dir():
        for path in sorted(user_dir.glob("*.toml")):
            g = _parse(path.stem, path.read_text(errors="replace"))
            if g is not None:
                found.append(g)
    folder = resources.files("deskpilot") / "data" / "guidance"
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            g = _parse(entry.name[:-5], entry.read_text())
            if g is not None:
                found.append(g)
    return tuple(found)


def guidance_for(app: AppIdentity, user_dir: Path | None = None) -> Guidance | None:
    keys = app.match_keys()
    for g in load_guidance(user_dir):
        if g.match & keys:
            return g
    return None
