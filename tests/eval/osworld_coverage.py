"""The OSWorld coverage figure: of the Linux task files whose apps are installed here, how many
load and run to a score with ``--policy noop`` (docs/eval.md, "OSWorld tasks").

    python -m tests.eval.osworld_coverage EXAMPLES_DIR [RUN_DIR ...]
    python -m tests.eval.osworld_coverage EXAMPLES_DIR --order SEED SURVEY_JSON

With ``--order``, the tasks of the denominator that load here (``deskpilot eval osworld survey
DIR --json``'s ``runnable_ids``) are printed in a random order drawn from SEED: run them with
``--policy noop --tasks`` in that order, a chunk at a time, as long as the time allows; the
tasks that finished are a simple random sample of the loadable ones. Given several RUN_DIRs
(the chunks), the files that load are counted exactly and the share of them that runs to a
score is estimated from the sample, with a Wilson 95% interval.

A file's apps are its ``related_apps`` (OSWorld's own list), each mapped to the program that
provides it here (``chrome`` is Chromium, which deskpilot runs for ``google-chrome``); a file
whose every app has its program installed is in the denominator. With a run of ``deskpilot
eval EXAMPLES_DIR --policy noop --skip-broken``, the numerator is the files of the
denominator whose trial ended ``failed`` or ``passed`` (a score); the noop passes are listed,
as they are checks that hold on the starting state.
"""

from __future__ import annotations

import json
import math
import random
import shutil
import sys
from collections import Counter
from pathlib import Path

#: OSWorld's related_apps → the program that provides the app here (None: nothing needed)
PROGRAMS: dict[str, str | None] = {
    "libreoffice_calc": "libreoffice",
    "libreoffice_writer": "libreoffice",
    "libreoffice_impress": "libreoffice",
    "libreoffice": "libreoffice",
    "calc": "libreoffice",
    "writer": "libreoffice",
    "impress": "libreoffice",
    "chrome": "chromium",
    "google_chrome": "chromium",
    "gimp": "gimp",
    "thunderbird": "thunderbird",
    "vlc": "vlc",
    "vs_code": "code",
    "vscode": "code",
    "os": None,
    "terminal": "gnome-terminal",
    "nautilus": "nautilus",
    "gedit": "gedit",
    "image": None,
    "pdf": None,
    "libreoffice calc": "libreoffice",
    "browser": "chromium",
}


def app_programs(data: dict) -> list[str | None]:  # type: ignore[type-arg]
    apps = data.get("related_apps") or [data.get("snapshot", "os")]
    return [PROGRAMS.get(str(a).lower(), str(a).lower()) for a in apps]


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of k successes in n trials."""
    if n == 0:
        return 0.0, 1.0
    p, zz = k / n, z * z
    centre, half = p + zz / (2 * n), z * math.sqrt(p * (1 - p) / n + zz / (4 * n * n))
    return (centre - half) / (1 + zz / n), (centre + half) / (1 + zz / n)


def main(argv: list[str]) -> int:
    root = Path(argv[0])
    files = sorted(p for p in root.rglob("*.json") if "Windows" not in p.parts)
    tasks: dict[str, Path] = {}
    denominator: list[str] = []
    missing: Counter[str] = Counter()
    for path in files:
        try:
            data = json.loads(path.read_text())
        except ValueError:
            continue
        if not isinstance(data, dict) or "instruction" not in data:
            continue
        task_id = str(data.get("id") or path.stem)
        if task_id in tasks:
            continue
        tasks[task_id] = path
        lacking = [p for p in app_programs(data) if p and shutil.which(p) is None]
        if lacking:
            missing.update(set(lacking))
        else:
            denominator.append(task_id)
    print(
        f"{len(files)} Linux task files, {len(tasks)} tasks (a task filed under two domains "
        f"counts once); {len(denominator)} with every app installed here"
    )
    print(f"  apps missing: {dict(missing.most_common())}")
    if len(argv) < 2:
        return 0
    if argv[1] == "--order":
        loads = set(json.loads(Path(argv[3]).read_text())["runnable_ids"])
        frame = sorted(set(denominator) & loads)
        random.Random(int(argv[2])).shuffle(frame)
        print(f"# {len(frame)} tasks of the denominator load here; seed {argv[2]}")
        print("\n".join(frame))
        return 0
    results: dict[str, dict] = {}  # type: ignore[type-arg]
    for run in argv[1:]:
        for line in (Path(run) / "results.jsonl").read_text().splitlines():
            row = json.loads(line)
            results[row["task"]] = row  # the last attempt
    ran = [t for t in denominator if t in results]
    scored = [t for t in ran if results[t]["status"] in ("failed", "passed")]
    passed = [t for t in ran if results[t]["status"] == "passed"]
    statuses = Counter(results[t]["status"] for t in ran)
    print(f"  of those, {len(ran)} loaded and ran: {dict(statuses)}")
    share = 100 * len(scored) / len(denominator) if denominator else 0.0
    print(f"  ran to a score: {len(scored)}/{len(denominator)} = {share:.1f}%")
    if len(argv) > 2 or len(ran) < len(denominator):  # a sample of the loadable ones
        lo, hi = wilson(len(scored), len(ran))
        print(
            f"  as a sample: {len(scored)}/{len(ran)} = {len(scored) / max(len(ran), 1):.1%} "
            f"(Wilson 95% {lo:.1%}-{hi:.1%}) of the tasks that load ran to a score"
        )
    for t in ran:
        if results[t]["status"] not in ("failed", "passed"):
            print(f"  {results[t]['status']}: {t}: {str(results[t].get('detail'))[:160]}")
    print(f"  noop passed (the check holds on the starting state here): {passed}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
