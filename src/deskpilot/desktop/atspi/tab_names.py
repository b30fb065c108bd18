"""A browser tab's name without the memory use Chromium writes into it.

Chromium (156) names a tab for assistive technology by its page's title followed by what its
hover card shows: "Shop - Memory usage - 21.8 MB" (``IDS_TAB_AX_MEMORY_USAGE``, "High memory
usage" past 800 MB, which the window's own name then carries too), or for a tab the memory
saver emptied "Shop - 1.2 GB freed up". It measures a tab's memory just after each load and
every two minutes, and recomputes the name whenever the tab's data changes (its title, its
loading state): the same tab, unchanged, reads under a new name at moments no action caused.
No switch turns this off (``tabs::GetAccessibleTabLabel`` adds it for every tab that has a
measurement; the ``browser.hovercard.memory_usage_enabled`` preference only hides it in the
hover card), so a read takes the figure out of the name: a model reading the tabs sees their
titles, and a change summary reports no tab renamed by a measurement.

The alerts before it stay (" - Audio playing", " - Network error"): they say what the tab does.
"""

from __future__ import annotations

import re

#: Roles Chromium names by a tab's title plus its annotations: the tab, and the window (whose
#: name carries a high memory use).
TITLED = frozenset({"page-tab", "frame"})

#: ui::FormatBytes's units (B, kB, MB, GB, TB, PB), after a number in the locale's digits.
_SIZE = r"\d[\d.,\u00a0]*\s?(?:B|kB|KB|MB|GB|TB|PB)"
#: An annotation of memory: the last part of the name, or one followed by another part (the
#: window's name ends with the browser's own).
MEMORY = re.compile(
    rf" - (?:(?:High memory usage|Memory usage) - {_SIZE}|{_SIZE} freed up)(?= - |$)"
)


def plain_name(role: str, name: str) -> str:
    """``name`` without Chromium's memory annotations, for a tab or a window; else unchanged."""
    if role not in TITLED or " - " not in name:
        return name
    return MEMORY.sub("", name)
