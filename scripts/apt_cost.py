"""What packages would add to a fresh Debian machine that installs a package list.

Run with Debian's python3 (python3-apt):

    /usr/bin/python3 scripts/apt_cost.py scripts/apt-packages.txt vlc thunderbird kcalc+evince

The base is the dependency closure of the "required" packages and the list (Depends and
Pre-Depends, no Recommends: scripts/setup-system.sh installs with --no-install-recommends);
each argument (packages joined by ``+``) is measured on top of it: how many packages it adds,
their download and installed sizes from the archive's index, and the largest of them. Nothing
is installed or downloaded, and installed packages count as if they were not (the figures are
the same on any machine with the same archive).
"""

from __future__ import annotations

import sys

import apt  # python3-apt: Debian's python3 only


def closure(cache: apt.Cache, names: list[str], seen: set[str]) -> set[str]:
    """Add ``names`` and everything they depend on to ``seen`` (an alternative already in it
    satisfies an or-group, else the group's first)."""
    stack = list(names)
    while stack:
        name = stack.pop()
        if name not in cache:  # a virtual package: its first provider
            providers = cache.get_providing_packages(name)
            if not providers:
                continue
            name = providers[0].name
        if name in seen:
            continue
        seen.add(name)
        version = cache[name].candidate or cache[name].installed
        if version is None:
            continue
        for dep in version.get_dependencies("Depends", "PreDepends"):
            alternatives = [d.name for d in dep.or_dependencies]
            if not any(a in seen for a in alternatives):
                stack.append(alternatives[0])
    return seen


def sizes(cache: apt.Cache, names: set[str]) -> tuple[float, float]:
    """Download and installed size of ``names``, in MB."""
    versions = [cache[n].candidate or cache[n].installed for n in names]
    present = [v for v in versions if v is not None]
    return sum(v.size for v in present) / 1e6, sum(v.installed_size for v in present) / 1e6


def main(argv: list[str]) -> None:
    cache = apt.Cache()
    listed = [line.strip() for line in open(argv[0]) if line.strip() and line.strip()[0] != "#"]
    required = [p.name for p in cache if p.candidate and p.candidate.priority == "required"]
    base = closure(cache, required + listed, set())
    down, installed = sizes(cache, base)
    print(f"base: {len(base)} packages, {down:.0f} MB download, {installed:.0f} MB installed")
    for arg in argv[1:]:
        added = closure(cache, arg.split("+"), set(base)) - base
        down, installed = sizes(cache, added)
        largest = sorted(added, key=lambda n: -sizes(cache, {n})[1])[:5]
        print(f"{arg}: +{len(added)} packages, {down:.1f} MB download, "
              f"{installed:.1f} MB installed; largest: {', '.join(largest)}")  # fmt: skip


if __name__ == "__main__":
    main(sys.argv[1:])
