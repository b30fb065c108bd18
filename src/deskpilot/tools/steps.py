"""One UI action as ``perform`` and each step of ``perform_sequence`` take it: fields and checks.

Element actions name an element by ID (``click``, ``fill``); pointer actions (``double_click``,
``right_click``, ``hover``, ``drag``, and ``click`` at a point) take an element ID or a point
``x``, ``y`` in the pixels of the window's ``computer_use_screenshot`` (0, 0 = its top-left
corner); keyboard actions (``type``, ``shortcut``) go to whatever has the focus.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from deskpilot.desktop.keys import parse_shortcut
from deskpilot.errors import InvalidArguments

Action = Literal[
    "click", "double_click", "right_click", "hover", "drag", "fill", "type", "shortcut", "select"
]
#: Actions done with the pointer (XTest) at an element's visible centre or at a point.
POINTER_ACTIONS = frozenset({"double_click", "right_click", "hover", "drag"})
#: Actions that may name a point instead of an element.
POINT_ACTIONS = frozenset({"click", *POINTER_ACTIONS})

ActionArg = Annotated[
    Action,
    Field(
        description="click (default): activate an element (elementID), or click at a point "
        "(x, y); double_click, right_click, hover: the pointer on an element or a point; "
        "drag: press on elementID or (x, y), move to toElementID, (toX, toY) or by (dx, dy), "
        "release; fill: replace a field's text (a drop-down: choose its item of that name; a "
        "date or time: '2026-03-07', '14:05'); type: send keystrokes to whatever has focus; "
        "shortcut: a key combination such as 'ctrl+s', 'escape', 'shift+enter', 'cmd+k'; "
        "select: select a range of an element's text, by the text itself (text) or by "
        "offsets (start, end), as a person would by dragging over it."
    ),
]
ElementArg = Annotated[
    str | None,
    Field(
        description="Element ID (the text after '@' in read_screen_ax), for click, fill, "
        "the pointer actions and the start of a drag; for select, the element whose text to "
        "select in (without it, select finds its text anywhere in the window)."
    ),
]
TextArg = Annotated[
    str | None,
    Field(
        max_length=20000,
        description="Text for fill and type; for select, the text to select (exactly as the "
        "read shows it; it must occur once in the element or its parts).",
    ),
]
StartArg = Annotated[
    int | None,
    Field(
        ge=0,
        le=100_000_000,
        description="select: offset of the first character to select in the element's text "
        "(0 = its first character).",
    ),
]
EndArg = Annotated[
    int | None,
    Field(
        ge=0,
        le=100_000_000,
        description="select: offset just after the last character to select (end - start "
        "characters are selected).",
    ),
]
ShortcutArg = Annotated[
    str | None,
    Field(
        max_length=100,
        description="Key combination for shortcut, e.g. 'ctrl+shift+t' (cmd means ctrl).",
    ),
]
XArg = Annotated[
    int | None,
    Field(
        ge=0,
        le=100_000,
        description="Point to act at instead of an element: x in pixels of the window's "
        "computer_use_screenshot (0 = its left edge). Needs y. For canvas, SVG and apps "
        "without accessibility.",
    ),
]
YArg = Annotated[
    int | None,
    Field(ge=0, le=100_000, description="y of the point (0 = the screenshot's top edge)."),
]
ForceArg = Annotated[
    bool,
    Field(
        description="Act on the element even when something covers it (a modal, an overlay): "
        "by default a click, fill or keys aimed at it are refused with what covers it, as a "
        "person could not click through it."
    ),
]
ToElementArg = Annotated[
    str | None, Field(description="drag: the element ID to drop on (its visible centre).")
]
ToXArg = Annotated[
    int | None,
    Field(ge=0, le=100_000, description="drag: x of the drop point (screenshot pixels)."),
]
ToYArg = Annotated[
    int | None,
    Field(ge=0, le=100_000, description="drag: y of the drop point (screenshot pixels)."),
]
DxArg = Annotated[
    int | None,
    Field(ge=-100_000, le=100_000, description="drag: move this many pixels right (< 0: left)."),
]
DyArg = Annotated[
    int | None,
    Field(ge=-100_000, le=100_000, description="drag: move this many pixels down (< 0: up)."),
]


class Step(BaseModel):
    """One step of perform_sequence."""

    model_config = ConfigDict(extra="forbid")
    action: ActionArg = "click"
    elementID: ElementArg = None
    text: TextArg = None
    shortcut: ShortcutArg = None
    x: XArg = None
    y: YArg = None
    toElementID: ToElementArg = None
    toX: ToXArg = None
    toY: ToYArg = None
    dx: DxArg = None
    dy: DyArg = None
    force: ForceArg = False
    start: StartArg = None
    end: EndArg = None

    @property
    def point(self) -> tuple[int, int] | None:
        return (self.x, self.y) if self.x is not None and self.y is not None else None

    @property
    def to_point(self) -> tuple[int, int] | None:
        return (self.toX, self.toY) if self.toX is not None and self.toY is not None else None

    @property
    def pointer(self) -> bool:
        """Whether this step is pointer input (XTest) rather than an AT-SPI action or keys."""
        return self.action in POINTER_ACTIONS or (self.action == "click" and self.point is not None)


STEP_FIELDS = tuple(Step.model_fields)


def check_step(step: Step, where: str = "") -> None:
    """Raise InvalidArguments if the fields this action needs are missing or malformed."""
    prefix = f"{where}: " if where else ""

    def bad(message: str) -> InvalidArguments:
        return InvalidArguments(f"{prefix}{message}")

    if (step.x is None) != (step.y is None):
        raise bad("a point needs both x and y (pixels of the window's computer_use_screenshot)")
    if (step.toX is None) != (step.toY is None):
        raise bad("a drop point needs both toX and toY")
    has_element = bool((step.elementID or "").strip())
    if step.point is not None and step.action not in POINT_ACTIONS:
        raise bad(f"{step.action} does not take a point (x, y)")
    if step.point is not None and has_element:
        raise bad("give either an elementID or a point (x, y), not both")
    if step.action == "fill" and not has_element:
        raise bad("fill needs an elementID from read_screen_ax")
    if step.action in POINT_ACTIONS and not has_element and step.point is None:
        raise bad(f"{step.action} needs an elementID from read_screen_ax, or a point x, y")
    drop = [
        step.toElementID is not None,
        step.to_point is not None,
        step.dx is not None or step.dy is not None,
    ]
    if step.action == "drag" and sum(drop) != 1:
        raise bad("drag needs exactly one destination: toElementID, (toX, toY), or (dx, dy)")
    if step.action != "drag" and any(drop):
        raise bad("toElementID, toX/toY and dx/dy are only for drag")
    if step.action == "select":
        check_select(step, bad)
    elif step.start is not None or step.end is not None:
        raise bad("start and end are only for select")
    if step.action in ("fill", "type") and step.text is None:
        raise bad(f"{step.action} needs a text")
    if step.action == "type" and step.text == "":
        raise bad("type needs a non-empty text")
    if step.action == "shortcut":
        if not (step.shortcut or "").strip():
            raise bad("shortcut needs a shortcut such as 'ctrl+s'")
        try:
            parse_shortcut(step.shortcut or "")
        except InvalidArguments as exc:
            raise bad(str(exc)) from None


def check_select(step: Step, bad: Callable[[str], InvalidArguments]) -> None:
    """The fields of a select step: an element, and a text or a range of offsets."""
    offsets = step.start is not None or step.end is not None
    if step.text is not None and offsets:
        raise bad("select takes either a text or start and end offsets, not both")
    if step.text is None and not offsets:
        raise bad("select needs the text to select, or start and end offsets")
    if step.text is not None and step.text == "":
        raise bad("select needs a non-empty text")
    if offsets and not (step.elementID or "").strip():
        raise bad("select by offsets needs the elementID whose text they count in")
    if offsets and (step.start is None or step.end is None):
        raise bad("select by offsets needs both start and end")
    if step.start is not None and step.end is not None and step.end <= step.start:
        raise bad(f"select needs end > start (got start {step.start}, end {step.end})")
