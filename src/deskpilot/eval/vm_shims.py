"""The programs an OSWorld task's commands expect of OSWorld's VM, made for one trial.

A directory put first on ``PATH`` for the task's ``run`` and ``launch`` steps:

- ``python``/``python3``: this Python, finding :mod:`deskpilot.eval.vm_python.pyautogui`
  as ``pyautogui``, so ``python -c "import pyautogui; pyautogui.hotkey('ctrl', 's')"`` acts
  on the trial's display as it does in the VM;
- ``sudo``: the command as root *inside the trial's namespace* (a nested bubblewrap user
  namespace where the trial's user is uid 0; the host stays read-only), refused when the trial
  is not isolated; ``-S`` (password on stdin) and ``-u root`` are accepted;
- ``google-chrome``/``google-chrome-stable``: Chromium with the flags deskpilot starts it with;
  ``pkill``/``killall`` of ``chrome`` end Chromium.

"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path

#: set in a trial's environment when it runs in its own mount namespace (bubblewrap)
ISOLATED_VAR = "DESKPILOT_TRIAL_ISOLATED"

SUDO = """#!/bin/sh
# sudo inside a deskpilot trial: root in the trial's own namespace, never on the host
[ "${%(var)s:-}" = 1 ] || { echo "sudo: this step needs root, which a trial gets only inside \
its own namespace (bubblewrap isolation)" >&2; exit 1; }
while [ $# -gt 0 ]; do
  case "$1" in
    -S|-E|-H|-k|-n|-b) shift ;;
    -u) [ "$2" = root ] || { echo "sudo: only -u root" >&2; exit 1; }; shift 2 ;;
    --) shift; break ;;
    -*) echo "sudo: option $1 is not supported here" >&2; exit 1 ;;
    *) break ;;
  esac
done
[ -t 0 ] || cat >/dev/null  # the password OSWorld pipes in
[ "$(id -u)" = 0 ] && exec "$@"  # uid 0 already (without capabilities, over a read-only host)
exec %(bwrap)s --unshare-user --uid 0 --gid 0 --bind / / --dev-bind /dev /dev -- "$@"
"""


def make_shims(folder: Path, chromium_flags: list[str]) -> dict[str, str]:
    """Write the shims into ``folder``; return the environment changes they need."""
    folder.mkdir(parents=True, exist_ok=True)
    vm_python = Path(__file__).with_name("vm_python")
    python = (
        f"#!/bin/sh\nPYTHONPATH={shlex.quote(str(vm_python))}${{PYTHONPATH:+:$PYTHONPATH}} "
        f'exec {shlex.quote(sys.executable)} "$@"\n'
    )
    chromium = shutil.which("chromium") or "chromium"
    flags = " ".join(shlex.quote(f) for f in chromium_flags)
    scripts = {
        "python": python,
        "python3": python,
        "sudo": SUDO % {"var": ISOLATED_VAR, "bwrap": shutil.which("bwrap") or "bwrap"},
        "google-chrome": f'#!/bin/sh\nexec {shlex.quote(chromium)} {flags} "$@"\n',
    }
    scripts["google-chrome-stable"] = scripts["google-chrome"]
    for tool in ("pkill", "killall"):
        real = shutil.which(tool) or tool
        scripts[tool] = (
            '#!/bin/sh\n# Google Chrome is Chromium in a trial\nfor a; do shift; case "$a" in '
            'chrome|google-chrome|google-chrome-stable) set -- "$@" chromium ;; '
            f'*) set -- "$@" "$a" ;; esac; done\nexec {shlex.quote(real)} "$@"\n'
        )
    for name, text in scripts.items():
        path = folder / name
        path.write_text(text, encoding="utf-8")
        path.chmod(0o755)
    return {}


def with_shims(env: dict[str, str], folder: Path, extra: dict[str, str]) -> dict[str, str]:
    out = {**env, **{k: v for k, v in extra.items() if k not in env}}
    out["PATH"] = f"{folder}{os.pathsep}{env.get('PATH', os.defpath)}"
    return out
