"""How much of a suite of task files can run here: what loads, why the rest does not, and
which programs the loaded tasks need that this machine lacks (``deskpilot eval osworld
survey``)."""

from __future__ import annotations

import re
import shutil
from collections import Counter
from typing import Any

from deskpilot.eval.suite import Suite
from deskpilot.eval.validate import needed_apps

#: programs an OSWorld task's commands find in its trial (deskpilot.eval.vm_shims)
VM_PROGRAMS = frozenset(
    {"python", "python3", "sudo", "google-chrome", "google-chrome-stable", "pkill", "killall"}
)


def _reason(problem: str) -> str:
    """A problem without the place it was found and the long lists of what is supported."""
    text = re.sub(
        r"^(config|evaluator\.postconfig|evaluator\.func|check)(\.\d+)*( \w+)?: ", "", problem
    )
    return re.sub(r" \(supported: .*", "", text)


def missing_programs(suite: Suite) -> dict[str, list[str]]:
    """Program → ids of the tasks that need it and do not find it here."""
    out: dict[str, list[str]] = {}
    for task in suite.tasks:
        for app in needed_apps(task):
            if "osworld" in task.tags and app in VM_PROGRAMS:
                continue
            if app.startswith("./") or (shutil.which(app) is None and "/" not in app):
                if app.startswith("./"):
                    continue  # a script the task itself put in its home
                out.setdefault(app, []).append(task.id)
            elif "/" in app and shutil.which(app) is None:
                out.setdefault(app, []).append(task.id)
    return out


def survey(suite: Suite) -> dict[str, Any]:
    reasons: Counter[str] = Counter()
    for broken in suite.broken:
        for problem in set(map(_reason, broken.problems)):
            reasons[problem] += 1
    missing = missing_programs(suite)
    blocked = {tid for ids in missing.values() for tid in ids}
    return {
        "files": len(suite.tasks) + len(suite.broken),
        "loaded": len(suite.tasks),
        "runnable": len([t for t in suite.tasks if t.id not in blocked]),
        "reasons": dict(reasons.most_common()),
        "missing_apps": {k: len(v) for k, v in sorted(missing.items(), key=lambda x: -len(x[1]))},
        "runnable_ids": sorted(t.id for t in suite.tasks if t.id not in blocked),
    }
