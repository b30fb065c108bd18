"""Checks of the live session, each through its own channel: window titles (a separate X11
connection), AT-SPI nodes (a separate pyatspi reader), a launched process's exit and output,
the loopback server's request log, a command run at check time, OSWorld getters and metrics."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from deskpilot._wait import WaitTimeout, wait_for
from deskpilot.desktop.registry import window_titles
from deskpilot.errors import CheckBroken, CheckFailed
from deskpilot.eval.atspi_check import probe_nodes
from deskpilot.eval.check_env import CheckEnv, parse_number, require_strings, run_command, show
from deskpilot.eval.task import (
    AnswerCheck,
    AtspiCheck,
    CommandCheck,
    HttpCheck,
    OsworldCheck,
    OutputCheck,
    WindowCheck,
)


def check_window(c: WindowCheck, env: CheckEnv) -> str:
    titles = window_titles(env.display, env.backend)
    pattern = re.compile(env.expand(c.title))
    found = [t for t in titles if pattern.search(t)]
    if c.absent and found:
        raise CheckFailed(f"a window is titled {found[0]!r}")
    if not c.absent and not found:
        raise CheckFailed(f"no window title matches /{c.title}/ (titles: {titles[:8]!r})")
    return f"window titles: {titles[:8]!r}"


def check_atspi(c: AtspiCheck, env: CheckEnv) -> str:
    nodes = probe_nodes(c.app, env.app_env)

    def matches(n: Mapping[str, Any]) -> bool:
        role = str(n.get("role", "")).replace(" ", "-")
        if c.role is not None and role != c.role.replace(" ", "-"):
            return False
        if c.name is not None and n.get("name") != c.name:
            return False
        return c.name_re is None or re.search(c.name_re, str(n.get("name", ""))) is not None

    def holds(n: Mapping[str, Any]) -> bool:
        text = str(n.get("text") or "")
        if c.text is not None and text.strip() != c.text:
            return False
        if c.text_re is not None and not re.search(c.text_re, text):
            return False
        if c.number is not None:
            got = parse_number(text)
            if got is None or abs(got - c.number) > 1e-9 * max(1.0, abs(c.number)):
                return False
        if c.value is not None and n.get("value") != c.value:
            return False
        return set(c.states) <= set(n.get("states", []))

    candidates = [n for n in nodes if matches(n)]
    good = [n for n in candidates if holds(n)]
    if c.count is not None:
        if len(good) != c.count:
            raise CheckFailed(f"{len(good)} node(s) match in {c.app!r}, not {c.count}")
        return f"{len(good)} node(s) match"
    if not good:
        seen = [(n.get("name"), str(n.get("text") or "")[:30]) for n in candidates[:5]]
        raise CheckFailed(f"no node of {c.app!r} matches; candidates: {seen!r}")
    return f"{len(good)} node(s) match; first text {show(str(good[0].get('text') or ''))}"


OUTPUT_GRACE_S = 0.5


def check_output(c: OutputCheck, env: CheckEnv) -> str:
    if c.of not in env.captured:
        raise CheckBroken(f"no launched process is captured as {c.of!r}")
    cap = env.captured[c.of]
    try:  # a dialog closed by the agent's last click exits a moment later
        wait_for(lambda: cap.proc.poll() is not None, timeout=OUTPUT_GRACE_S, what="exit")
    except WaitTimeout:
        raise CheckFailed(f"{c.of} is still running (it was not closed)") from None
    code = cap.proc.returncode
    out = cap.stdout.read_text(encoding="utf-8", errors="replace").strip()
    if c.exit_code is not None and code != c.exit_code:
        raise CheckFailed(f"{c.of} exited with {code}, not {c.exit_code} (stdout {show(out)})")
    if c.stdout is not None and out != env.expand(c.stdout):
        raise CheckFailed(f"{c.of} printed {show(out)}, not {show(env.expand(c.stdout))}")
    if c.stdout_re is not None and not re.search(c.stdout_re, out):
        raise CheckFailed(f"{c.of} printed {show(out)}, not matching /{c.stdout_re}/")
    return f"{c.of} exited with {code} and printed {show(out)}"


def _fields(want: Mapping[str, str | list[str]], got: Mapping[str, list[str]]) -> bool:
    for key, value in want.items():
        if got.get(key) != (value if isinstance(value, list) else [value]):
            return False
    return True


def check_http(c: HttpCheck, env: CheckEnv) -> str:
    if env.http is None:
        raise CheckBroken("an http check needs a 'serve' setup step")
    entries = env.http.snapshot()

    def matches(e: Mapping[str, Any]) -> bool:
        if c.method is not None and e["method"] != c.method.upper():
            return False
        if c.path is not None and e["path"] != env.expand(c.path):
            return False
        if c.path_re is not None and not re.search(c.path_re, e["path"]):
            return False
        if any(name in e["form"] for name in c.without):
            return False
        return _fields(c.form, e["form"]) and _fields(c.query, e["query"])

    found = [e for e in entries if matches(e)]
    if c.count is not None and len(found) != c.count:
        raise CheckFailed(f"{len(found)} matching request(s), not {c.count}")
    if c.count is None and not found:
        seen = [f"{e['method']} {e['path']} {e['form'] or ''}" for e in entries[-5:]]
        raise CheckFailed(f"no matching request; the last ones: {seen!r}")
    return f"{len(found)} matching request(s) of {len(entries)}"


def check_command(c: CommandCheck, env: CheckEnv) -> str:
    done = run_command(c.run, env)
    out = done.stdout.strip()
    if c.exit_code is not None and done.returncode != c.exit_code:
        raise CheckFailed(f"{c.run[0]} exited with {done.returncode}, not {c.exit_code}")
    if c.stdout is not None and out != env.expand(c.stdout):
        raise CheckFailed(f"{c.run[0]} printed {show(out)}, not {show(env.expand(c.stdout))}")
    if c.stdout_re is not None and not re.search(c.stdout_re, out):
        raise CheckFailed(f"{c.run[0]} printed {show(out)}, not matching /{c.stdout_re}/")
    require_strings(out, c.contains, c.excludes, f"the output of {c.run[0]}")
    return f"{c.run[0]} printed {show(out)}"


def _osworld_get(spec: Mapping[str, Any], env: CheckEnv) -> Any:
    from deskpilot.eval import osworld_chrome

    kind = spec["type"]
    if kind in ("vm_file", "cloud_file", "cache_file"):
        paths = spec.get("path", "")
        if isinstance(paths, list):
            return [env.path(str(p)) for p in paths]
        return env.path(str(paths))
    if kind == "rule":
        return spec.get("rules", {})
    if kind in osworld_chrome.GETTERS:
        return osworld_chrome.get(kind, dict(spec), env.variables.get("cdp_port", "0"), env.home)
    command = spec.get("command")
    argv = ["sh", "-c", command] if isinstance(command, str) else list(command or [])
    if not argv:
        raise CheckBroken(f"{kind} needs a command")
    done = run_command([str(a) for a in argv], env)
    return done.stdout if kind == "vm_command_line" else done.stderr


def check_osworld(c: OsworldCheck, env: CheckEnv) -> str:
    # imported here: the metrics bring numpy and every document reader, a third of a second
    # of every trial's start-up, and only an OSWorld task scores with them
    from deskpilot.eval import osworld_metrics

    result = _osworld_get(c.result, env)
    expected = _osworld_get(c.expected, env) if c.expected else None
    try:
        got = osworld_metrics.score(c.func, result, expected, dict(c.options))
    except FileNotFoundError as exc:  # OSWorld scores a missing result 0
        if c.expected and exc.filename and str(exc.filename) == str(expected):
            raise CheckBroken(f"{c.func}: the expected file {exc.filename} is missing") from None
        raise CheckFailed(f"{c.func}: {exc.filename} does not exist") from None
    if got < 1.0:
        raise CheckFailed(f"{c.func} scored {got:.3g} on {show(str(result), 60)}")
    return f"{c.func} scored 1"


INFEASIBLE = re.compile(r"^\W*(infeasible|cannot|can't|can not|fail)\b", re.I)


def check_answer(c: AnswerCheck, env: CheckEnv) -> str:
    answer = (env.answer or "").strip()
    if c.infeasible is not None and bool(INFEASIBLE.search(answer)) != c.infeasible:
        said = "said" if c.infeasible is False else "did not say"
        raise CheckFailed(f"the agent {said} the task cannot be done: {show(answer)}")
    missing = [s for s in c.contains if s not in answer]
    if missing:
        raise CheckFailed(f"the answer {show(answer)} lacks {', '.join(map(show, missing))}")
    if c.regex is not None and not re.search(c.regex, answer):
        raise CheckFailed(f"the answer {show(answer)} does not match /{c.regex}/")
    return f"the answer: {show(answer)}"
