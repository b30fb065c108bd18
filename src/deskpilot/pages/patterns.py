"""URL patterns for page rules: compiled once to a regular expression both Python and the
browser's runtime test, so the CLI (``deskpilot rules test-pattern``) and the page agree.

Kinds (``glob`` is the default):

``glob``
    ``*`` matches any string, the empty one too; a pattern without ``*`` is one exact URL
    (its ``#fragment`` is ignored unless the pattern has one). When the pattern contains
    ``://``, a ``*`` before it stays inside the scheme and a ``*`` in the host part stays
    inside the host, so ``*://a.com/*`` cannot match ``https://b.org/?u=http://a.com/``. A
    glob without ``://`` (``*staging*``) is a plain substring glob over the whole URL.
    Scheme and host compare case-insensitively, the rest case-sensitively.
``match``, ``vm-match``, ``vm-glob``
    Chrome's match patterns (its grammar exactly: ``http://exa*mple.com/x`` is refused),
    Violentmonkey's ``@match`` (Chrome's plus ``http*``, ``*`` anywhere in the host, ``.tld``)
    and Violentmonkey's ``@include`` globs and ``/regex/``: see
    :mod:`deskpilot.pages.match_grammar`.
``stylus-glob``
    A Stylus style's own inclusions/exclusions: a glob or ``/regex/flags`` tested against the
    URL without its query and fragment (:mod:`deskpilot.pages.match_grammar`).
``regex``
    A regular expression that must match the whole URL (Stylus's rule).
``domain``, ``prefix``, ``url``
    Stylus sections: the host or one of its subdomains; the URL starts with the text; the
    URL itself (with or without its fragment).

A level (folder, group, rule) matches a URL when it has no include pattern or one of them
matches, and none of its exclude patterns matches: exclude wins.
"""

from __future__ import annotations

import functools
import re
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

from deskpilot.errors import InvalidArguments
from deskpilot.pages.match_grammar import (
    compile_match,
    compile_stylus_glob,
    compile_vm_glob,
    compile_vm_match,
)
from deskpilot.pages.match_grammar import esc as _esc
from deskpilot.pages.match_grammar import glob as _glob

Kind = Literal[
    "glob", "match", "regex", "domain", "prefix", "url", "vm-match", "vm-glob", "stylus-glob"
]
KINDS: tuple[Kind, ...] = (
    "glob",
    "match",
    "regex",
    "domain",
    "prefix",
    "url",
    "vm-match",
    "vm-glob",
    "stylus-glob",
)
Mode = Literal["include", "exclude"]

#: URLs of very different shapes; a scope matching all of them "matches every URL".
PROBE_URLS: tuple[str, ...] = (
    "https://www.example.com/",
    "http://127.0.0.1:8080/a/b.html?q=1#top",
    "https://deskpilot-probe.test/deep/path/page?x=y",
    "file:///tmp/probe.html",
    "http://localhost/",
)


@dataclass(frozen=True)
class Pattern:
    """One include or exclude pattern, compiled."""

    value: str
    kind: Kind = "glob"
    mode: Mode = "include"
    regex: str = ""  # the source both sides test against the normalised URL
    #: regex flags both sides apply: i (ignore case), m, s, u (JavaScript only), and
    #: p — tested against the URL without its ``?query`` and ``#fragment``
    flags: str = ""

    def matches(self, url: str) -> bool:
        target = normalize_url(url)
        if "p" in self.flags:
            target = re.split(r"[?#]", target, maxsplit=1)[0]
        try:
            return compiled(self.regex, self.flags).search(target) is not None
        except re.error:  # a JavaScript-only construct in a regex pattern
            return False

    @property
    def wire(self) -> list[str]:
        """``[regex, flags]`` as the page runtime takes it."""
        return [self.regex, self.flags]

    def to_dict(self) -> dict[str, str]:
        out = {"value": self.value}
        if self.kind != "glob":
            out["kind"] = self.kind
        return out


def normalize_url(url: str) -> str:
    """Lower-case scheme and host (as a browser's ``location.href`` has them)."""
    url = url.strip()
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if not parts.scheme:
        return url
    netloc = parts.netloc
    if "@" in netloc:
        user, _, host = netloc.rpartition("@")
        netloc = f"{user}@{host.lower()}"
    else:
        netloc = netloc.lower()
    path = parts.path or ("/" if netloc else "")
    return urlunsplit((parts.scheme.lower(), netloc, path, parts.query, parts.fragment))


def compile_pattern(value: str, kind: str = "glob", mode: str = "include") -> Pattern:
    """Compile ``value``; a pattern that cannot be compiled raises InvalidArguments."""
    if kind not in KINDS:
        raise InvalidArguments(f"pattern kind {kind!r} is unknown: use one of {', '.join(KINDS)}")
    if mode not in ("include", "exclude"):
        raise InvalidArguments(f"pattern mode {mode!r} is unknown: use include or exclude")
    text = value.strip()
    if not text:
        raise InvalidArguments("a URL pattern is empty: use * for any string")
    if len(text) > 2048:
        raise InvalidArguments(f"URL pattern {text[:40]!r}… is longer than 2048 characters")
    made = _COMPILERS[kind](text)
    source, flags = made if isinstance(made, tuple) else (made, "")
    try:
        compiled(source, flags)
    except re.error as exc:
        if kind not in ("regex", "vm-glob", "stylus-glob"):  # our own output always compiles
            raise
        if not _js_only(text):
            raise InvalidArguments(f"{kind} pattern {text!r} does not compile: {exc}") from exc
    return Pattern(value=text, kind=kind, mode=mode, regex=source, flags=flags)  # type: ignore[arg-type]


_PY_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL}


@functools.lru_cache(maxsize=1024)
def compiled(source: str, flags: str = "") -> re.Pattern[str]:
    """``source`` compiled, quietly: Python warns (FutureWarning) about sets like ``[[]]``
    that a JavaScript regex — the page runtime's — reads as they are written."""
    bits = 0
    for f in flags:
        bits |= _PY_FLAGS.get(f, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return re.compile(source, bits)


def _js_only(text: str) -> bool:
    """JavaScript-only syntax Python cannot compile (named groups ``(?<x>``), kept as is."""
    return "(?<" in text and "(?<=" not in text and "(?<!" not in text


def _split_scheme_host(text: str) -> tuple[str, str, str] | None:
    """``scheme``, ``host[:port]``, ``rest`` (from the first ``/``, ``?`` or ``#``)."""
    if "://" not in text:
        return None
    scheme, _, after = text.partition("://")
    cut = min((i for i in (after.find(c) for c in "/?#") if i >= 0), default=len(after))
    return scheme, after[:cut], after[cut:]


def _compile_glob(text: str) -> str:
    if "*" not in text:
        return _compile_url(text)
    parts = _split_scheme_host(text)
    if parts is None:
        return "^" + _glob(text, ".*") + "$"
    scheme, host, rest = parts
    if not rest:
        rest = "/"
    return (
        "^"
        + _glob(scheme.lower(), "[^:/?#]*")
        + ":\\/\\/"
        + _glob(host.lower(), "[^/?#]*")
        + _glob(rest, ".*")
        + "$"
    )


def _compile_url(text: str) -> str:
    norm = normalize_url(text)
    if "#" in text:
        return "^" + _esc(norm) + "$"
    return "^" + _esc(norm.partition("#")[0]) + "(?:#.*)?$"


def _compile_prefix(text: str) -> str:
    parts = _split_scheme_host(text)
    if parts is not None:
        scheme, host, rest = parts
        text = f"{scheme.lower()}://{host.lower()}{rest}"
    return "^" + _esc(text)


def _compile_domain(text: str) -> str:
    host = text.lower().strip(".")
    if not host or any(c in host for c in "/:*?#@ "):
        raise InvalidArguments(
            f"domain pattern {text!r} must be a host name such as example.com "
            "(no scheme, path or *)"
        )
    return (
        "^[a-z][a-z0-9+.\\-]*:\\/\\/(?:[^/?#@]*@)?(?:[^/?#]*\\.)?" + _esc(host) + "(?::\\d+)?[/?#]"
    )


def _compile_regex(text: str) -> str:
    return "^(?:" + text + ")$"


_COMPILERS = {
    "glob": _compile_glob,
    "url": _compile_url,
    "prefix": _compile_prefix,
    "domain": _compile_domain,
    "regex": _compile_regex,
    "match": compile_match,
    "vm-match": compile_vm_match,
    "vm-glob": compile_vm_glob,
    "stylus-glob": compile_stylus_glob,
}


@dataclass(frozen=True)
class Scope:
    """The include and exclude patterns of one level."""

    include: tuple[Pattern, ...] = ()
    exclude: tuple[Pattern, ...] = ()

    def check(self, url: str) -> tuple[bool, str]:
        """(matches, why not) for ``url``."""
        for p in self.exclude:
            if p.matches(url):
                return False, f"excluded by {p.value!r}"
        if self.include and not any(p.matches(url) for p in self.include):
            shown = ", ".join(repr(p.value) for p in self.include[:3])
            more = f" (+{len(self.include) - 3})" if len(self.include) > 3 else ""
            return False, f"no include pattern matches ({shown}{more})"
        return True, ""

    def matches(self, url: str) -> bool:
        return self.check(url)[0]

    @property
    def patterns(self) -> tuple[Pattern, ...]:
        return (*self.include, *self.exclude)


def scope_of(patterns: Iterable[Pattern]) -> Scope:
    items = list(patterns)
    return Scope(
        include=tuple(p for p in items if p.mode == "include"),
        exclude=tuple(p for p in items if p.mode == "exclude"),
    )


def parse_patterns(
    values: Sequence[str | dict[str, str]] | None, mode: Mode
) -> tuple[Pattern, ...]:
    """Patterns given as strings (globs; ``re:…``/``match:``/… prefixes pick a kind) or
    ``{"value": …, "kind": …}`` objects."""
    out = []
    for raw in values or ():
        if isinstance(raw, dict):
            out.append(compile_pattern(str(raw.get("value", "")), raw.get("kind", "glob"), mode))
            continue
        kind, value = split_kind(raw)
        out.append(compile_pattern(value, kind, mode))
    return tuple(out)


def split_kind(raw: str) -> tuple[str, str]:
    """``"regex:^https://a\\.com/"`` → (regex, …); a plain string is a glob."""
    head, sep, rest = raw.partition(":")
    if sep and head in KINDS and not rest.startswith("//"):
        return head, rest
    return "glob", raw


def every_url(scopes: Sequence[Scope]) -> bool:
    """True if the levels together match every probe URL (a rule for every page)."""
    return all(all(s.matches(u) for s in scopes) for u in PROBE_URLS)
