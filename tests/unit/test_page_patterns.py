"""The page-rule URL grammar: exact, ``*``, include/exclude, AND across levels, cascade."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deskpilot.errors import InvalidArguments
from deskpilot.pages.library import Library
from deskpilot.pages.patterns import Scope, compile_pattern, every_url, parse_patterns


def m(pattern: str, url: str, kind: str = "glob") -> bool:
    return compile_pattern(pattern, kind).matches(url)


def test_a_pattern_without_star_is_one_exact_url() -> None:
    assert m("https://a.com/page", "https://a.com/page")
    assert not m("https://a.com/page", "https://a.com/page2")
    assert not m("https://a.com/page", "https://a.com/page?x=1")
    assert not m("https://a.com/page", "http://a.com/page")
    # the fragment is ignored unless the pattern has one; host case never matters
    assert m("https://a.com/page", "https://A.com/page#c")
    assert not m("https://a.com/page#one", "https://a.com/page#two")
    assert m("https://a.com", "https://a.com/")  # a bare origin is its root page


def test_star_matches_any_string_even_the_empty_one() -> None:
    assert m("https://a.com/*", "https://a.com/")
    assert m("https://a.com/*", "https://a.com/x/y?z#w")
    assert m("*staging*", "https://staging.a.com/")
    assert m("*staging*", "http://x/?env=staging")
    assert not m("*staging*", "https://prod.a.com/")
    assert m("https://a.com/p*", "https://a.com/p")
    assert m("*", "about:blank")


def test_stars_stay_in_the_scheme_and_host_they_are_written_in() -> None:
    assert m("*://a.com/*", "http://a.com/x")
    assert m("*://a.com/*", "https://a.com/")
    # Tampermonkey's documented pitfall: the host part cannot leak into the query
    assert not m("*://a.com/*", "https://b.org/?u=http://a.com/")
    assert m("https://*.a.com/*", "https://x.y.a.com/z")
    assert not m("https://*.a.com/*", "https://a.com.evil.org/")
    assert m("http://127.0.0.1:*/*", "http://127.0.0.1:8080/x")


def test_scheme_and_host_are_case_insensitive_paths_are_not() -> None:
    assert m("HTTPS://A.COM/Path/*", "https://a.com/Path/x")
    assert not m("https://a.com/Path/*", "https://a.com/path/x")


def test_other_kinds_for_imports() -> None:
    assert m("example.com", "https://www.example.com/x", "domain")
    assert m("example.com", "http://example.com:81/", "domain")
    assert not m("example.com", "https://notexample.com/", "domain")
    assert m("https://a.com/docs", "https://a.com/docs/x", "prefix")
    assert m(r"https://a\.com/\d+", "https://a.com/42", "regex")
    assert not m(r"https://a\.com/\d+", "https://a.com/42/x", "regex")  # whole URL
    assert m("*://*.example.com/*", "https://example.com/x", "match")
    assert m("*://*.example.com/*", "http://a.example.com/", "match")
    assert not m("*://*.example.com/*", "ftp://example.com/", "match")
    assert m("https://a.com/p", "https://a.com/p?q#h", "match")  # query/hash ignored
    assert m("<all_urls>", "file:///tmp/x", "match")


@pytest.mark.parametrize(
    ("value", "kind", "message"),
    [
        ("", "glob", "empty"),
        ("a.com/*", "match", "://"),
        ("https://a.com", "match", '"/" for the path'),
        ("https://a.com/", "domain", "host name"),
        ("(", "regex", "does not compile"),
        ("x", "nope", "kind"),
    ],
)
def test_bad_patterns_are_refused_with_a_reason(value: str, kind: str, message: str) -> None:
    with pytest.raises(InvalidArguments, match=re.escape(message)):
        compile_pattern(value, kind)


def test_exclude_wins_within_a_level() -> None:
    scope = Scope(
        include=parse_patterns(["https://a.com/*"], "include"),
        exclude=parse_patterns(["*/admin/*"], "exclude"),
    )
    assert scope.matches("https://a.com/blog/1")
    ok, why = scope.check("https://a.com/admin/users")
    assert not ok and "excluded by '*/admin/*'" in why
    ok, why = scope.check("https://b.com/")
    assert not ok and "no include pattern matches" in why
    assert Scope().matches("https://anything/")  # no include: no constraint


def test_every_url_detection() -> None:
    assert every_url([Scope(include=parse_patterns(["*"], "include"))])
    assert every_url([Scope(include=parse_patterns(["*://*/*"], "include"))])
    assert every_url([Scope()])
    assert not every_url([Scope(), Scope(include=parse_patterns(["https://a.com/*"], "include"))])


def test_levels_and_together_and_disabling_cascades(tmp_path: Path) -> None:
    with Library(tmp_path / "rules.sqlite3") as lib:
        f = lib.create_folder("Site", include=parse_patterns(["https://a.com/*"], "include"))
        g = lib.create_group(f.id, "Blog", include=parse_patterns(["*/blog/*"], "include"))
        r = lib.create_rule(
            g.id,
            "Hide ads",
            css=".ad{display:none}",
            exclude=parse_patterns(["*?print*"], "exclude"),
        )
        assert [x.id for x in lib.applicable("https://a.com/blog/1")] == [r.id]
        assert lib.applicable("https://b.com/blog/1") == []  # the folder's pattern
        assert lib.applicable("https://a.com/shop/1") == []  # the group's pattern
        assert lib.applicable("https://a.com/blog/1?print=1") == []  # the rule's exclude
        verdict = lib.verdicts("https://a.com/shop/1")[0]
        assert "group 'Blog'" in verdict.reason

        lib.set_enabled(f.id, False)
        assert lib.applicable("https://a.com/blog/1") == []
        assert "folder 'Site' is disabled" in lib.verdicts("https://a.com/blog/1")[0].reason
        assert lib.find(r.id).enabled  # the child's own flag is kept
        lib.set_enabled(r.id, False)
        lib.set_enabled(f.id, True)
        assert lib.applicable("https://a.com/blog/1") == []  # the rule's own flag now
        lib.set_enabled(r.id, True)
        assert [x.id for x in lib.applicable("https://a.com/blog/1")] == [r.id]


def test_rules_apply_in_library_order(tmp_path: Path) -> None:
    with Library(tmp_path / "rules.sqlite3") as lib:
        f2 = lib.create_folder("B")
        f1 = lib.create_folder("A")
        g2 = lib.create_group(f2.id, "g")
        g1 = lib.create_group(f1.id, "g")
        a = lib.create_rule(g2.id, "first", css="a{}")
        b = lib.create_rule(g2.id, "second", css="b{}")
        c = lib.create_rule(g1.id, "third", css="c{}")
        assert [x.id for x in lib.applicable("https://x/")] == [a.id, b.id, c.id]
        before = lib.revision
        lib.delete(f2.id)
        assert [x.id for x in lib.applicable("https://x/")] == [c.id]
        assert lib.revision == before + 1


def test_a_library_from_a_newer_deskpilot_is_refused(tmp_path: Path) -> None:
    import sqlite3

    from deskpilot.errors import RulesError

    path = tmp_path / "rules.sqlite3"
    Library(path).close()
    db = sqlite3.connect(path)
    db.execute("PRAGMA user_version=99")
    db.close()
    with pytest.raises(RulesError, match="newer than this deskpilot"):
        Library(path)


@given(st.text(max_size=30), st.text(max_size=60))
def test_compiling_never_crashes_and_javascript_can_read_the_regex(value: str, url: str) -> None:
    try:
        p = compile_pattern(value)
    except InvalidArguments:
        return
    p.matches(url)
    # only constructs JavaScript reads the same way
    assert "(?P" not in p.regex and "\\A" not in p.regex and "\\Z" not in p.regex
