"""URL grammars of imported rules: Chrome's match patterns exactly, Violentmonkey's @match and
@include (its own test vectors, test/background/tester.test.js), a Stylus style's own
inclusions; the same regex read by JavaScript (checked in the page runtime's tests)."""

from __future__ import annotations

import re

import pytest

from deskpilot.errors import InvalidArguments
from deskpilot.pages.patterns import compile_pattern, split_kind


def m(pattern: str, url: str, kind: str) -> bool:
    return compile_pattern(pattern, kind).matches(url)


@pytest.mark.parametrize(
    "pattern",
    [
        "<all_urls>",
        "*://*/*",
        "https://*.example.com/*",
        "http://example.com/path?query*",
        "http://127.0.0.1:8080/*",
        "http://localhost:*/x",
        "file:///home/*",
        "file:///*",
        "ws://*.example.com/socket",
        "https://[::1]/*",
    ],
)
def test_chrome_accepts_its_own_grammar(pattern: str) -> None:
    compile_pattern(pattern, "match")


@pytest.mark.parametrize(
    ("pattern", "why"),
    [
        ("http://exa*mple.com/x", "must be its first character"),
        ("http://*example.com/x", "must be its first character"),
        ("http://www.example.*/x", "must be its first character"),
        ("http://*./x", "after *. the host"),
        ("http*://example.com/*", "scheme 'http*'"),
        ("chrome://settings/*", "scheme 'chrome'"),
        ("https://example.com", 'missing "/"'),
        ("example.com/*", 'missing "://"'),
        ("https:///path", "the host is empty"),
        ("https://example.com:80a/*", "invalid port"),
        ("https://exa*mple.com/*", "must be its first character"),
    ],
)
def test_chrome_refuses_what_its_grammar_refuses(pattern: str, why: str) -> None:
    with pytest.raises(InvalidArguments, match=re.escape(why)):
        compile_pattern(pattern, "match")


def test_chrome_match_patterns_match_as_violentmonkey_reads_them() -> None:
    assert m("*://*/*", "http://any.where/x?y", "match")
    assert not m("*://*/*", "ftp://any.where/", "match")
    assert m("https://*.example.com/*", "https://example.com/", "match")
    assert m("https://*.example.com/*", "https://a.b.example.com/c", "match")
    assert not m("https://*.example.com/*", "https://example.com.evil.org/", "match")
    assert m("http://127.0.0.1/*", "http://127.0.0.1:8765/x", "match")  # no port: any
    assert not m("http://127.0.0.1:80/*", "http://127.0.0.1:8765/x", "match")
    assert m("HTTPS://EXAMPLE.com/*", "https://example.COM/x", "match")
    # Violentmonkey's vectors: query and hash ignored unless the pattern has them
    for url in ("a", "a#hash", "a?query", "a?query#hash"):
        assert m("https://www.google.com/a", f"https://www.google.com/{url}", "match")
    assert m("https://www.google.com/a?query", "https://www.google.com/a?query#hash", "match")
    assert not m("https://www.google.com/a?query", "https://www.google.com/a", "match")
    assert not m("https://www.google.com/b#hash", "https://www.google.com/b?query#hash", "match")
    assert not m("https://www.google.com/a?Query", "https://www.google.com/a?query", "match")
    assert not m("https://www.google.com/a/b/c", "https://www.google.com/a/b/c/d", "match")


def test_violentmonkey_match_adds_what_it_documents() -> None:
    assert m("http*://example.com/*", "https://example.com/x", "vm-match")
    assert m("http://exa*mple.com/x", "http://example.com/x", "vm-match")
    assert m("https://www.google.tld/*", "https://www.google.co.uk/x", "vm-match")
    assert m("https://www.google.tld/*", "https://www.google.com/", "vm-match")
    assert not m("https://www.google.tld/*", "https://www.google/", "vm-match")
    with pytest.raises(InvalidArguments, match='top-level domain with "\\*"'):
        compile_pattern("https://www.google.*/*", "vm-match")


def test_violentmonkey_include_globs_and_regexps() -> None:
    assert m("*", "file:///Users/Gerald/file", "vm-glob")
    assert m("https://www.google.com/*", "https://www.google.com/any/subview", "vm-glob")
    assert not m("https://www.google.com/*", "http://www.google.com/", "vm-glob")
    assert not m("https://www.google.com/*", "https://www.google.com.hk/", "vm-glob")
    assert m("https://www.google.com/", "https://www.google.com/", "vm-glob")  # exact
    assert not m("https://www.google.com/", "https://www.google.com/x", "vm-glob")
    assert m("HTTPS://WWW.GOOGLE.COM/*", "https://www.google.com/x", "vm-glob")  # no case
    assert m("https://www.google.tld/*", "https://www.google.de/x", "vm-glob")
    assert m(r"/\.google\.com\//", "https://WWW.GOOGLE.COM/x", "vm-glob")  # searched, no case
    assert not m(r"/^https:\/\/a\.com\//", "http://a.com/", "vm-glob")
    with pytest.raises(InvalidArguments, match="does not compile"):
        compile_pattern("/(/", "vm-glob")


def test_a_stylus_styles_own_inclusions_ignore_query_and_fragment() -> None:
    assert m("*print*", "https://a.com/print/1", "stylus-glob")
    assert not m("*print*", "https://a.com/?print=1", "stylus-glob")
    assert m("*://*.a.com/docs/*", "https://x.a.com/docs/1?q", "stylus-glob")
    assert m("*://*.a.com/docs/*", "ftp://a.com/docs/1", "stylus-glob")  # * = any scheme
    assert m(r"/A\.COM\/x/i", "https://a.com/x", "stylus-glob")
    assert not m(r"/A\.COM\/x/", "https://a.com/x", "stylus-glob")


def test_kinds_are_written_as_prefixes() -> None:
    assert split_kind("vm-match:http*://a/*") == ("vm-match", "http*://a/*")
    assert split_kind("stylus-glob:*x*") == ("stylus-glob", "*x*")
    assert split_kind("https://a.com/*") == ("glob", "https://a.com/*")
