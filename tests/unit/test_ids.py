"""Element IDs: derived from bus name + object path; short, deterministic, never shared."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from deskpilot.ax.ids import ID_PATTERN, assign_ids, element_id, normalize


def test_numbered_paths_are_short_and_readable() -> None:
    assert element_id(":1.42", "/org/a11y/atspi/accessible/1234") == "16.ya"
    assert element_id(":1.42", "/org/a11y/atspi/accessible/root") == "16.r"
    assert element_id(":2.5", "/org/a11y/atspi/accessible/7") == "2~5.7"


def test_other_paths_are_hashed_and_stable() -> None:
    path = "/org/gnome/Calculator/a11y/6358b794_2f66_4606_b15c_7012a2152896"
    first = element_id(":1.3", path)
    assert first == element_id(":1.3", path)
    assert first.startswith("3_") and len(first) == 7
    assert element_id(":1.4", path) != first  # another app instance: another ID


def test_same_path_on_another_bus_differs() -> None:
    assert element_id(":1.3", "/org/a11y/atspi/accessible/5") != element_id(
        ":1.4", "/org/a11y/atspi/accessible/5"
    )


@given(st.lists(st.tuples(st.integers(1, 500), st.text(min_size=1, max_size=30)), max_size=300))
def test_assign_ids_are_unique(pairs: list[tuple[int, str]]) -> None:
    keys = [(f":1.{bus}", f"/x/{path}") for bus, path in pairs]
    ids = assign_ids(keys)
    assert len(set(ids.values())) == len(set(keys))
    assert all(ID_PATTERN.fullmatch(v) for v in ids.values())


def test_normalize_accepts_what_models_send() -> None:
    assert normalize(" @16.YA ") == "16.ya"
