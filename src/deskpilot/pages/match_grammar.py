"""Match patterns and userscript globs, compiled to the regular expressions page rules test.

``match``
    Chrome's match-pattern grammar, exactly
    (https://developer.chrome.com/docs/extensions/develop/concepts/match-patterns)::

        <all_urls> | <scheme>://<host>[:<port>]<path>
        scheme := * | http | https | file | ftp | ws | wss | urn     (* = http or https)
        host   := * | *.<name without * or /> | <name without * or />  (empty only for file)
        port   := * | <digits>                                      (none = any port)
        path   := / <any characters, * = any string>

    ``http://exa*mple.com/x`` is refused: a ``*`` in the host must be first (or alone) and
    followed by ``.``. Matching follows Violentmonkey's reading: scheme and host are
    case-insensitive; a path without ``?`` ignores the URL's query and fragment, a path with
    ``?`` but no ``#`` ignores the fragment.
``vm-match``
    Violentmonkey's ``@match``/``@exclude-match``: the grammar above plus what Violentmonkey
    documents (https://violentmonkey.github.io/api/matching/): scheme ``http*``, ``*`` anywhere
    in the host, ``.tld`` for any top-level domain. A ``*`` in the top-level part
    (``www.google.*``) is refused, as Violentmonkey refuses it.
``vm-glob``
    Violentmonkey's ``@include``/``@exclude``: ``/re/`` is a regular expression searched in the
    whole URL, case-insensitively; anything else a glob over the whole URL where ``*`` is any
    string (no ``*``: the URL itself), case-insensitive, ``.tld/`` any top-level domain.
``stylus-glob``
    A Stylus style's inclusions and exclusions (:func:`compile_stylus_glob`).

The regular expressions (with flags, see :class:`deskpilot.pages.patterns.Pattern`) are read
the same by Python's ``re`` and the browser's JavaScript.
"""

from __future__ import annotations

import re

from deskpilot.errors import InvalidArguments

CHROME_SCHEMES = ("http", "https", "file", "ftp", "ws", "wss", "urn")
VM_SCHEMES = ("http", "https", "file", "ftp", "urn")
_SPECIAL = set("\\^$.|?*+()[]{}/")
#: any top-level domain suffix (one or two labels), Violentmonkey's ``.tld``
TLD_RE = "(?:\\.[a-z][a-z0-9-]*){1,2}"


def esc(text: str) -> str:
    """Escape for a regex that is valid in both Python ``re`` and JavaScript (no ``u`` flag)."""
    return "".join("\\" + ch if ch in _SPECIAL else ch for ch in text)


def glob(text: str, star: str) -> str:
    return star.join(esc(part) for part in text.split("*"))


def _bad(text: str, why: str) -> InvalidArguments:
    return InvalidArguments(f"match pattern {text!r} is invalid: {why}")


def _split(text: str) -> tuple[str, str, str]:
    scheme, sep, after = text.partition("://")
    if not sep:
        raise _bad(text, 'missing "://" after the scheme (e.g. *://*.example.com/*)')
    slash = after.find("/")
    if slash < 0:
        raise _bad(text, 'missing "/" for the path (e.g. https://example.com/*)')
    return scheme.lower(), after[:slash], after[slash:]


def _port(text: str, host: str) -> tuple[str, str]:
    """(host without port, port regex)."""
    if host.startswith("["):  # an IPv6 literal
        close = host.find("]")
        rest = host[close + 1 :] if close >= 0 else ""
        host, port = host[: close + 1], rest[1:] if rest.startswith(":") else None
        if rest and not rest.startswith(":"):
            raise _bad(text, "text after the IPv6 address")
    elif ":" in host:
        host, _, port = host.rpartition(":")
    else:
        port = None
    if port is None or port == "*":
        return host, "(?::\\d+)?"
    if not port.isdigit():
        raise _bad(text, f"invalid port {port!r} (a number or *)")
    return host, ":" + port


def _path(rest: str) -> str:
    path_re = glob(rest, ".*")
    if "#" in rest:
        return path_re
    if "?" in rest:
        return path_re + "(?:#.*)?"
    return path_re + "(?:[?#].*)?"


def compile_match(text: str) -> str:
    """Chrome's grammar (the module docstring); InvalidArguments naming what is wrong."""
    if text == "<all_urls>":
        return "^(?:https?|wss?|ftp|file|urn|data):"
    scheme, host, rest = _split(text)
    if scheme == "*":
        scheme_re = "https?"
    elif scheme in CHROME_SCHEMES:
        scheme_re = scheme
    else:
        raise _bad(text, f"scheme {scheme!r} is not one of *, {', '.join(CHROME_SCHEMES)}")
    host, port_re = _port(text, host.lower())
    if scheme == "file":
        if host not in ("", "*") and "*" in host:
            raise _bad(text, "a file: pattern's host cannot hold *")
        port_re = ""
    elif not host:
        raise _bad(text, "the host is empty")
    if host == "*":
        host_re = "[^/?#:]*"
    elif host.startswith("*."):
        if "*" in host[2:] or not host[2:]:
            raise _bad(text, "after *. the host must be a name without *")
        host_re = "(?:[^/?#:]*\\.)?" + esc(host[2:])
    elif "*" in host:
        raise _bad(
            text,
            "a * in the host must be its first character, followed by a dot (*.example.com), "
            "or the whole host",
        )
    else:
        host_re = esc(host)
    return "^" + scheme_re + ":\\/\\/" + host_re + port_re + _path(rest) + "$"


def compile_vm_match(text: str) -> str:
    """Violentmonkey's ``@match`` (the module docstring)."""
    if text == "<all_urls>":
        return compile_match(text)
    scheme, host, rest = _split(text)
    if scheme in ("*", "http*"):
        scheme_re = "https?"
    elif scheme in VM_SCHEMES:
        scheme_re = scheme
    else:
        raise _bad(text, f"scheme {scheme!r} is not one of *, http*, {', '.join(VM_SCHEMES)}")
    host, port_re = _port(text, host.lower())
    if scheme == "file":
        port_re = ""
    if host != "*" and re.search(r"\*[^.]*\.?$", host):
        raise _bad(text, 'a top-level domain with "*": use ".tld" (or an @include)')
    tld = host.endswith(".tld")
    base = host[: -len(".tld")] if tld else host
    if base == "*":
        host_re = "[^/?#:]*"
    elif base.startswith("*."):
        host_re = "(?:[^/?#:]*\\.)?" + glob(base[2:], "[^/?#:]*")
    else:
        host_re = glob(base, "[^/?#:]*")
    if tld:
        host_re += TLD_RE
    return "^" + scheme_re + ":\\/\\/" + host_re + port_re + _path(rest) + "$"


def compile_vm_glob(text: str) -> tuple[str, str]:
    """Violentmonkey's ``@include``/``@exclude`` (the module docstring)."""
    if len(text) > 1 and text.startswith("/") and text.endswith("/"):
        return text[1:-1], "i"
    body = glob(text, ".*")
    if ".tld/" in text:
        body = body.replace(esc(".tld/"), TLD_RE + "\\/", 1)
    return "^" + body + "$", "i"


_STYLUS_RE = re.compile(r"^\s*/(.+?)/([simguy]*)\s*$")
_STYLUS_GLOB = re.compile(r"^(\*|[\w-]+)://(\*\.)?([\w.]+/.*)")


def compile_stylus_glob(text: str) -> tuple[str, str]:
    """A Stylus style's inclusion/exclusion (``buildOverrideRe`` in its matcher.js):
    ``/re/flags``; ``scheme://[*.]host/path`` with ``*`` = any scheme and ``*.`` = any
    subdomain; else a glob over the whole URL. Tested without the URL's query and fragment."""
    slashed = _STYLUS_RE.match(text) if text.startswith("/") else None
    if slashed:
        flags = "".join(f for f in slashed.group(2) if f in "imsu")
        return slashed.group(1), "p" + flags
    m = _STYLUS_GLOB.match(text)
    if not m:
        return "^" + glob(text, ".*") + "$", "p"
    scheme = "[\\w-]+" if m.group(1) == "*" else esc(m.group(1))
    sub = "(?:[\\w.]+\\.)?" if m.group(2) else ""
    return "^" + scheme + ":\\/\\/" + sub + glob(m.group(3), ".*") + "$", "p"
