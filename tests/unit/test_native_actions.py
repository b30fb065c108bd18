"""The native action model: validation (errors, never clamping), wire round-trips, key names."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deskpilot.errors import InvalidArguments
from deskpilot.native import keymap
from deskpilot.native.actions import (
    MAX_SECONDS,
    Click,
    CursorPosition,
    Drag,
    HoldKey,
    KeyDown,
    KeyPress,
    KeyUp,
    MouseDown,
    MouseUp,
    Move,
    Screenshot,
    Scroll,
    TypeText,
    Wait,
    Zoom,
    action_from_dict,
    action_to_dict,
    describe,
    points,
    shown,
)

coord = st.integers(min_value=0, max_value=5000)
mods = st.lists(
    st.sampled_from(["Control_L", "Shift_L", "Alt_L", "Super_L"]), max_size=3, unique=True
).map(tuple)
keysyms = st.lists(
    st.sampled_from(["Control_L", "a", "Return", "F5", "Down", "KP_0"]),
    min_size=1,
    max_size=4,
    unique=True,
).map(tuple)
buttons = st.sampled_from(["left", "right", "middle", "back", "forward"])


@st.composite
def point_pairs(draw: st.DrawFn) -> tuple[int | None, int | None]:
    return (None, None) if draw(st.booleans()) else (draw(coord), draw(coord))


@st.composite
def scroll_deltas(draw: st.DrawFn) -> tuple[int, int]:
    dx = draw(st.integers(-200, 200))
    dy = draw(st.integers(-200, 200).filter(lambda v: v != 0 or dx != 0))
    return dx, dy


actions = st.one_of(
    st.builds(
        lambda p, b, c, m: Click(*p, button=b, count=c, modifiers=m),
        point_pairs(),
        buttons,
        st.integers(1, 3),
        mods,
    ),
    st.builds(Move, coord, coord, mods),
    st.builds(
        lambda pts, m: Drag(tuple(pts), m),
        st.lists(st.tuples(coord, coord), min_size=2, max_size=6),
        mods,
    ),
    st.builds(lambda p, b: MouseDown(*p, button=b), point_pairs(), buttons),
    st.builds(lambda p, b: MouseUp(*p, button=b), point_pairs(), buttons),
    st.builds(lambda p, d, m: Scroll(*p, *d, modifiers=m), point_pairs(), scroll_deltas(), mods),
    st.builds(TypeText, st.text(min_size=1, max_size=40)),
    st.builds(KeyPress, keysyms, st.integers(1, 100)),
    st.builds(KeyDown, keysyms),
    st.builds(KeyUp, keysyms),
    st.builds(HoldKey, keysyms, st.floats(0.01, MAX_SECONDS)),
    st.builds(Wait, st.floats(0, MAX_SECONDS)),
    st.just(Screenshot()),
    st.builds(
        lambda a, b, w, h: Zoom(a, b, a + w, b + h),
        coord,
        coord,
        st.integers(1, 500),
        st.integers(1, 500),
    ),
    st.just(CursorPosition()),
)


@given(actions)
def test_every_action_round_trips_through_its_wire_dict(action: object) -> None:
    wire = action_to_dict(action)  # type: ignore[arg-type]
    assert wire["type"] == action.type  # type: ignore[attr-defined]
    assert action_from_dict(wire) == action
    assert describe(action)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("wire", "phrase"),
    [
        ({"type": "wait", "seconds": 100.5}, "out of range"),
        ({"type": "wait", "seconds": -1}, "out of range"),
        ({"type": "hold_key", "keys": ["a"], "duration": 0}, "out of range"),
        ({"type": "click", "x": 1, "y": 2, "count": 4}, "count must be 1 to 3"),
        ({"type": "click", "x": 1}, "both x and y"),
        ({"type": "click", "x": -1, "y": 2}, "must not be negative"),
        ({"type": "drag", "path": [[1, 2]]}, "2 to 100 points"),
        ({"type": "scroll", "x": 1, "y": 1, "dx": 0, "dy": 0}, "both 0"),
        ({"type": "scroll", "x": 1, "y": 1, "dy": 201}, "at most 200"),
        ({"type": "type", "text": ""}, "text is empty"),
        ({"type": "keypress", "keys": ["NoSuchKey"]}, "not an X keysym"),
        ({"type": "keypress", "keys": []}, "1 to 8 keys"),
        ({"type": "zoom", "x0": 5, "y0": 5, "x1": 5, "y1": 9}, "x1 > x0"),
        ({"type": "teleport"}, "does not match any of the expected tags"),
        ({"type": "click", "x": 1, "y": 2, "colour": "red"}, "colour"),
    ],
)
def test_out_of_range_values_are_errors_not_clamped(wire: dict[str, object], phrase: str) -> None:
    with pytest.raises(InvalidArguments) as err:
        action_from_dict(wire)
    assert phrase in str(err.value)


def test_a_wait_at_the_limit_is_kept_exactly() -> None:
    assert action_from_dict({"type": "wait", "seconds": MAX_SECONDS}) == Wait(MAX_SECONDS)


def test_points_lists_every_point_an_action_touches() -> None:
    assert points(Click(3, 4)) == [(3, 4)]
    assert points(Click()) == []
    assert points(Drag(((1, 2), (3, 4), (5, 6)))) == [(1, 2), (3, 4), (5, 6)]
    assert points(Zoom(0, 0, 10, 10)) == []
    assert points(TypeText("x")) == []


def test_shown_text_escapes_invisible_and_non_ascii_characters() -> None:
    sneaky = "rm -rf ~\u200b\u202e\n"
    out = shown(sneaky)
    assert "\\u200b{ZERO WIDTH SPACE}" in out
    assert "\\u202e{RIGHT-TO-LEFT OVERRIDE}" in out
    assert out.endswith('\\n"')
    assert describe(TypeText(sneaky)) == f"type {out}"


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (["ctrl", "c"], ("Control_L", "c")),
        (["CTRL", "SHIFT", "T"], ("Control_L", "Shift_L", "t")),
        (["c", "ctrl"], ("Control_L", "c")),  # modifiers first
        (["cmd", "k"], ("Control_L", "k")),  # cmd means ctrl on Linux
        (["arrowdown"], ("Down",)),
        (["esc"], ("Escape",)),
        (["enter"], ("Return",)),
        (["pagedown"], ("Page_Down",)),
        (["space"], ("space",)),
        (["/"], ("slash",)),
        (["win"], ("Super_L",)),
    ],
)
def test_openai_key_names_map_to_keysyms(names: list[str], expected: tuple[str, ...]) -> None:
    assert keymap.combo(names) == expected


def test_anthropic_xdotool_and_gemini_plus_syntax() -> None:
    assert keymap.xdotool_combos("ctrl+a Delete") == [("Control_L", "a"), ("Delete",)]
    assert keymap.xdotool_combos("KP_0") == [("KP_0",)]
    assert keymap.xdotool_combos("alt+Tab") == [("Alt_L", "Tab")]
    assert keymap.plus_combo("Control+C") == ("Control_L", "c")
    assert keymap.plus_combo("Meta+Shift+ArrowDown") == ("Control_L", "Shift_L", "Down")
    assert keymap.modifiers("ctrl+shift") == ("Control_L", "Shift_L")
    with pytest.raises(InvalidArguments, match="not a modifier"):
        keymap.modifiers("a")
    with pytest.raises(InvalidArguments, match="unknown key"):
        keymap.combo(["hyperdrive"])
