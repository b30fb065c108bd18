"""URL patterns for page rules: compiled once to a regular expression both Python and the
browser's runtime test, so the CLI (``deskpilot rules test-pattern``) and the page agree.

Kinds (``glob`` is the default and the seed's grammar):

``glob``
    ``*`` matches any string, the empty one too; a pattern without ``*`` is one exact URL
    (its ``#fragment`` is ignored unless the pattern has one). When the pattern contains
    ``://``, a ``*`` before it stays inside the scheme and a ``*`` in the host part stays
    inside the host, so ``*://a.com/*`` cannot match ``https://b.org/?u=http://a.com/``. A
    glob without ``://`` (``*staging*``) is a plain substring glob over the whole URL.
    Scheme and host compare case-insensitively, the rest case-sensitively.
``match``
    Chrome / Violentmonkey match patterns: ``<all_urls>``, ``*://*.example.com/path*``,
    scheme ``*`` or ``http*`` = http or https; without ``?``/``#`` in the pattern the URL's
    query and fragment are ignored.
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

Kind = Literal["glob", "match", "regex", "domain", "prefix", "url"]
KINDS: tuple[Kind, ...] = ("glob", "match", "regex", "domain", "prefix", "url")
Mode = Literal["include", "exclude"]

#: URLs of very different shapes; a scope matching all of them "matches every URL".
PROBE_URLS: tuple[str, ...] = (
    "https://www.example.com/",
    "http://127.0.0.1:8080/a/b.html?q=1#top",
    "https://deskpilot-probe.test/deep/path/page?x=y",
    "file:///tmp/probe.html",
    "http://localhost/",
)

_SPECIAL = set("\\^$.|?*+()[]{}/")


def _esc(text: str) -> str:
    """Escape for a regex that is valid in both Python ``re`` and JavaScript (no ``u`` flag)."""
    return "".join("\\" + ch if ch in _SPECIAL else ch for ch in text)


def _glob(text: str, star: str) -> str:
    return star.join(_esc(part) for part in text.split("*"))


@dataclass(frozen=True)
class Pattern:
    """One include or exclude pattern, compiled."""

    value: str
    kind: Kind = "glob"
    mode: Mode = "include"
    regex: str = ""  # the source both sides test against the normalised URL

    def matches(self, url: str) -> bool:
        try:
            return compiled(self.regex).search(normalize_url(url)) is not None
        except re.error:  # a JavaScript-only construct in a regex pattern
            return False

    @property
    def universal(self) -> bool:
        """True if this pattern matches every probe URL (it would apply everywhere)."""
        return all(self.matches(u) for u in PROBE_URLS)

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
    source = _COMPILERS[kind](text)
    try:
        compiled(source)
    except re.error as exc:
        if kind != "regex":  # our own output must always compile
            raise
        if not _js_only(text):
            raise InvalidArguments(f"regex pattern {text!r} does not compile: {exc}") from exc
    return Pattern(value=text, kind=kind, mode=mode, regex=source)  # type: ignore[arg-type]


@functools.lru_cache(maxsize=1024)
def compiled(source: str) -> re.Pattern[str]:
    """``source`` compiled, quietly: Python warns (FutureWarning) about sets like ``[[]]``
    that a JavaScript regex — the page runtime's — reads as they are written."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return re.compile(source)


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


def _compile_match(text: str) -> str:
    if text == "<all_urls>":
        return "^(?:https?|wss?|ftp|file|data|chrome-extension):"
    parts = _split_scheme_host(text)
    if parts is None:
        raise InvalidArguments(
            f'match pattern {text!r} is missing "://" (e.g. *://*.example.com/*)'
        )
    scheme, host, rest = parts
    scheme = scheme.lower()
    if scheme in ("*", "http*"):
        scheme_re = "https?"
    elif re.fullmatch(r"[a-z][a-z0-9+.\-]*", scheme):
        scheme_re = _esc(scheme)
    else:
        raise InvalidArguments(f"match pattern {text!r} has an invalid scheme {scheme!r}")
    if not rest.startswith("/"):
        raise InvalidArguments(f'match pattern {text!r} is missing "/" for the path')
    host = host.lower()
    port = ""
    if ":" in host and not host.endswith("]"):
        host, _, p = host.rpartition(":")
        port = "(?::\\d+)?" if p == "*" else ":" + _esc(p)
    else:
        port = "(?::\\d+)?"
    if host == "*":
        host_re = "[^/?#]*"
    elif host.startswith("*."):
        host_re = "(?:[^/?#]*\\.)?" + _glob_host(host[2:])
    elif "*" in host and scheme != "file":
        host_re = _glob_host(host)  # Violentmonkey: * anywhere in the host
    else:
        host_re = _esc(host)
    if host.endswith(".tld"):
        host_re = host_re[: -len(_esc(".tld"))] + "\\.[a-z]{2,}(?:\\.[a-z]{2,})?"
    path_re = _glob(rest, ".*")
    tail = "" if ("?" in rest or "#" in rest) else "(?:[?#].*)?"
    return "^" + scheme_re + ":\\/\\/" + host_re + port + path_re + tail + "$"


def _glob_host(host: str) -> str:
    return _glob(host, "[^/?#.]*")


_COMPILERS = {
    "glob": _compile_glob,
    "url": _compile_url,
    "prefix": _compile_prefix,
    "domain": _compile_domain,
    "regex": _compile_regex,
    "match": _compile_match,
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
