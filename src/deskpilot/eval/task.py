"""A task is data: the goal, the setup, the checks, the oracle and the limits.

A task file (TOML, or JSON with the same keys) looks like this::

    id = "mousepad.append-line"          # default: the file name without its extension
    goal = "In Mousepad, add 'eggs' as the last line of shopping.txt and save it."
    family = "mousepad-edit"             # tasks of one family are alike (default: id prefix)
    apps = ["mousepad"]                  # executables a node must have to run the task
    timeout = 120                        # seconds the agent gets
    max_steps = 15

    [[setup]]                            # run in order in the trial's fresh sandbox desktop
    write = "~/Documents/shopping.txt"
    text = "milk\\nbread\\n"

    [[setup]]
    launch = ["mousepad", "~/Documents/shopping.txt"]
    window = "shopping.txt"              # wait for this window and its accessibility tree

    [[check]]                            # all checks must hold; read through other channels
    kind = "file"
    path = "~/Documents/shopping.txt"
    lines = ["milk", "bread", "eggs"]

    [[oracle]]                           # one way to do it, made of deskpilot tool calls
    tool = "read_screen_ax"

Setup steps (one action key each): ``write`` (``text`` or ``from`` a fixture), ``mkdir``,
``serve`` (a directory on a loopback server that logs every request; ``{server}`` is its
URL), ``launch`` (argv; ``window`` regex; ``ready = "tree"|"window"``; ``capture`` a name
for its exit code and stdout), ``open_url`` (the agent browser), ``wait_window`` (regex),
``activate`` (wait for a window and focus it), ``close_window`` (regex) and ``run`` (a
command that must exit 0; ``stdout`` saves its output in the trial's cache). ``postconfig``
steps are the same, run by the harness after the agent and before the checks. Check kinds are
in :mod:`deskpilot.eval.checks`; oracle steps in :mod:`deskpilot.eval.oracle`. Strings may use
``{home}``, ``{server}``, ``{task_dir}``, ``{store}`` (the OSWorld file store) and ``{cache}``
(the trial's cache); paths starting with ``~/`` or ``/home/user/`` are in the trial's home.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from deskpilot.errors import TaskError


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


def _regex(value: str | None) -> str | None:
    """A regex field: refused at load when it does not compile."""
    if value is not None:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"not a valid regex ({exc})") from None
    return value


def _one_of(model: BaseModel, names: tuple[str, ...], what: str) -> None:
    """At least one of ``names`` must be given, or the check could hold by accident."""
    if not any(getattr(model, n) not in (None, [], {}) for n in names):
        raise ValueError(f"{what}: give at least one of {', '.join(names)}")


# -- setup ---------------------------------------------------------------------------------


class WriteStep(_Strict):
    write: str = Field(description="file to create (parents are made)")
    text: str | None = None
    from_: str | None = Field(default=None, alias="from", description="fixture to copy")


class MkdirStep(_Strict):
    mkdir: str


class ServeStep(_Strict):
    serve: str = Field(description="directory (relative to the task file) served on loopback")


class LaunchStep(_Strict):
    launch: list[str] = Field(min_length=1)
    window: str | None = Field(default=None, description="title regex of the window to wait for")
    ready: Literal["tree", "window", "none"] = "tree"
    capture: str | None = Field(default=None, description="name for its exit code and stdout")
    timeout: float = Field(default=60.0, gt=0, le=600)


class OpenUrlStep(_Strict):
    open_url: str


class OpenTabStep(_Strict):
    """A tab of the task's own browser (started with --remote-debugging-port={cdp_port})."""

    open_tab: str
    timeout: float = Field(default=60.0, gt=0, le=600)


class WaitWindowStep(_Strict):
    wait_window: str
    timeout: float = Field(default=30.0, gt=0, le=600)


class RunStep(_Strict):
    run: list[str] = Field(min_length=1)
    timeout: float = Field(default=60.0, gt=0, le=600)
    stdout: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$",
        description="save its stdout as this file of the trial's cache ({cache})",
    )


class ActivateStep(_Strict):
    activate: str = Field(description="title regex of a window to wait for and focus")
    timeout: float = Field(default=30.0, gt=0, le=600)
    required: bool = Field(
        default=True, description="false: go on when no such window shows (as OSWorld does)"
    )

    _re = field_validator("activate")(_regex)


class CloseWindowStep(_Strict):
    close_window: str = Field(description="title regex of the windows to close")
    timeout: float = Field(default=30.0, gt=0, le=600)

    _re = field_validator("close_window")(_regex)


SetupStep = (
    WriteStep
    | MkdirStep
    | ServeStep
    | LaunchStep
    | OpenUrlStep
    | WaitWindowStep
    | RunStep
    | ActivateStep
    | CloseWindowStep
    | OpenTabStep
)
SETUP_KINDS: dict[str, type[_Strict]] = {
    "open_tab": OpenTabStep,
    "activate": ActivateStep,
    "close_window": CloseWindowStep,
    "write": WriteStep,
    "mkdir": MkdirStep,
    "serve": ServeStep,
    "launch": LaunchStep,
    "open_url": OpenUrlStep,
    "wait_window": WaitWindowStep,
    "run": RunStep,
}


# -- checks --------------------------------------------------------------------------------


class FileCheck(_Strict):
    """A file's text (trailing whitespace ignored unless ``exact``)."""

    kind: Literal["file"]
    path: str
    exists: bool = True
    equals: str | None = None
    contains: list[str] = []
    excludes: list[str] = []
    lines: list[str] | None = None
    regex: str | None = None
    unchanged: bool = False
    exact: bool = False

    _re = field_validator("regex")(_regex)

    @model_validator(mode="after")
    def _consistent(self) -> FileCheck:
        given = [n for n in ("equals", "lines", "regex", "unchanged") if getattr(self, n)]
        given += [n for n in ("contains", "excludes") if getattr(self, n)]
        if not self.exists and given:
            raise ValueError(f"exists = false cannot be combined with {', '.join(given)}")
        if self.exact and self.equals is None:
            raise ValueError("exact applies to equals: give equals, or drop exact")
        return self


class CellCheck(_Strict):
    """A spreadsheet cell (ODS, XLSX, CSV): its value and optionally its formula."""

    kind: Literal["cell"]
    path: str
    cell: str = Field(pattern=r"^[A-Za-z]{1,3}[1-9][0-9]{0,6}$")
    sheet: str | int = 0
    value: float | str | None = None
    formula: str | None = Field(default=None, description="text the formula must contain")
    tolerance: float = Field(default=1e-6, ge=0)
    bold: bool | None = None

    @model_validator(mode="after")
    def _consistent(self) -> CellCheck:
        _one_of(self, ("value", "formula", "bold"), "a cell check")
        numeric = isinstance(self.value, int | float) and not isinstance(self.value, bool)
        if "tolerance" in self.model_fields_set and not numeric:
            raise ValueError("tolerance applies to a number value: give one, or drop tolerance")
        return self


class ParagraphCheck(_Strict):
    """A paragraph of a text document (ODT, DOCX): style, bold words."""

    kind: Literal["paragraph"]
    path: str
    text: str | None = Field(default=None, description="the paragraph's whole text")
    contains: str | None = Field(default=None, description="or a part of it")
    index: int | None = Field(default=None, description="or its position (0 = first)")
    style: str | None = Field(default=None, description="paragraph style, e.g. 'Heading 1'")
    bold: str | None = Field(default=None, description="a word of it that must be bold")
    not_bold: str | None = Field(default=None, description="a word of it that must not be")

    @model_validator(mode="after")
    def _chosen(self) -> ParagraphCheck:
        _one_of(self, ("text", "contains", "index"), "a paragraph check")
        return self


class DocumentCheck(_Strict):
    """The whole text of a document (ODT/ODS/DOCX/XLSX/plain)."""

    kind: Literal["document"]
    path: str
    contains: list[str] = []
    excludes: list[str] = []

    @model_validator(mode="after")
    def _something(self) -> DocumentCheck:
        _one_of(self, ("contains", "excludes"), "a document check")
        return self


class WindowCheck(_Strict):
    """Window titles, read from X11 over a connection of the checker's own."""

    kind: Literal["window"]
    title: str = Field(description="regex")
    absent: bool = False

    _re = field_validator("title")(_regex)


class AtspiCheck(_Strict):
    """Nodes of a running app, read by a separate pyatspi reader (not deskpilot's engine)."""

    kind: Literal["atspi"]
    app: str = Field(description="regex on the application's AT-SPI name")
    role: str | None = None
    name: str | None = None
    name_re: str | None = None
    text: str | None = None
    text_re: str | None = None
    number: float | None = Field(default=None, description="the text read as a number")
    value: float | None = None
    states: list[str] = []
    count: int | None = Field(default=None, ge=0, description="exactly this many match")

    _re = field_validator("app", "name_re", "text_re")(_regex)


class OutputCheck(_Strict):
    """A launched process's exit code and stdout (setup ``capture = NAME``)."""

    kind: Literal["output"]
    of: str
    stdout: str | None = None
    stdout_re: str | None = None
    exit_code: int | None = 0

    _re = field_validator("stdout_re")(_regex)


class HttpCheck(_Strict):
    """Requests the loopback server logged."""

    kind: Literal["http"]
    method: str | None = None
    path: str | None = None
    path_re: str | None = None
    form: dict[str, str | list[str]] = {}
    query: dict[str, str | list[str]] = {}
    without: list[str] = Field(default=[], description="form fields that must not be sent")
    count: int | None = Field(default=None, ge=0)

    _re = field_validator("path_re")(_regex)

    @model_validator(mode="after")
    def _something(self) -> HttpCheck:
        if self.count is None:  # "some request was made" would hold after any page load
            _one_of(self, ("method", "path", "path_re", "form", "query"), "an http check")
        return self


class CommandCheck(_Strict):
    """A command run on the sandbox at check time (its stdout and exit code)."""

    kind: Literal["command"]
    run: list[str] = Field(min_length=1)
    stdout: str | None = None
    stdout_re: str | None = None
    contains: list[str] = []
    excludes: list[str] = []
    exit_code: int | None = 0

    _re = field_validator("stdout_re")(_regex)


class AnswerCheck(_Strict):
    """The agent's final answer: ``infeasible`` (it said the task cannot be done: an answer
    starting with INFEASIBLE, CANNOT or FAIL), or text it holds."""

    kind: Literal["answer"]
    infeasible: bool | None = None
    contains: list[str] = []
    regex: str | None = None

    _re = field_validator("regex")(_regex)

    @model_validator(mode="after")
    def _something(self) -> AnswerCheck:
        _one_of(self, ("infeasible", "contains", "regex"), "an answer check")
        return self


class OsworldCheck(_Strict):
    """One OSWorld getter + metric pair (see :mod:`deskpilot.eval.osworld`)."""

    kind: Literal["osworld"]
    func: str
    result: dict[str, Any]
    expected: dict[str, Any] | None = None
    options: dict[str, Any] = {}


class AllCheck(_Strict):
    kind: Literal["all"]
    of: list[Check] = Field(min_length=1)


class AnyCheck(_Strict):
    kind: Literal["any"]
    of: list[Check] = Field(min_length=1)


class NotCheck(_Strict):
    kind: Literal["not"]
    of: Check


Check = Annotated[
    FileCheck
    | CellCheck
    | ParagraphCheck
    | DocumentCheck
    | WindowCheck
    | AtspiCheck
    | OutputCheck
    | HttpCheck
    | CommandCheck
    | OsworldCheck
    | AnswerCheck
    | AllCheck
    | AnyCheck
    | NotCheck,
    Field(discriminator="kind"),
]
for _model in (AllCheck, AnyCheck, NotCheck):
    _model.model_rebuild()


# -- oracle --------------------------------------------------------------------------------


class Find(_Strict):
    """An element of the latest read_screen_ax: by role and name, by the value it shows, and
    by relation (in the row or group whose text matches)."""

    role: str | None = None
    name: str | None = None
    name_re: str | None = None
    value: str | None = Field(default=None, description="the text or value it shows")
    value_re: str | None = None
    in_row: str | None = Field(
        default=None, description="on the same row as an element whose text matches (regex)"
    )
    in_group: str | None = Field(
        default=None, description="inside a group, row or list item holding such an element"
    )
    states: list[str] = []
    index: int = Field(default=0, ge=0)

    _re = field_validator("name_re", "value_re", "in_row", "in_group")(_regex)


class Until(_Strict):
    find: Find | None = None
    window: str | None = Field(default=None, description="a window title matching this regex")
    gone: str | None = Field(default=None, description="no window title matches this regex")
    file: str | None = Field(default=None, description="a file in the sandbox (with the next)")
    contains: str | None = Field(default=None, description="text the file holds")
    cell: str | None = Field(default=None, description="a cell of the file (ODS/XLSX/CSV)")
    equals: str | None = Field(default=None, description="the cell's text (or the file's)")
    request: str | None = Field(
        default=None, description="a request whose 'METHOD /path' matches this regex was logged"
    )

    _re = field_validator("window", "gone", "request")(_regex)

    @model_validator(mode="after")
    def _consistent(self) -> Until:
        if not any(
            getattr(self, n) is not None for n in ("find", "window", "gone", "file", "request")
        ):
            raise ValueError("until needs find, window, gone, file or request")
        if self.file is None and any(
            v is not None for v in (self.contains, self.cell, self.equals)
        ):
            raise ValueError("contains, cell and equals are about a file: give file")
        return self


class OracleStep(_Strict):
    tool: str
    args: dict[str, Any] = {}
    until: Until | None = Field(
        default=None, description="repeat this (read-only) call until the condition holds"
    )
    within: float = Field(default=20.0, gt=0, le=300)


# -- the task ------------------------------------------------------------------------------


GROUP_ROLES = frozenset(
    [
        "table-row",
        "row",
        "list-item",
        "tree-item",
        "panel",
        "section",
        "group",
        "form",
        "filler",
        "grouping",
        "table-cell",
        "list",
        "tree-table",
        "table",
        "scroll-pane",
        "tool-bar",
        "menu-bar",
    ]
)


class Task(_Strict):
    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
    goal: str = Field(min_length=1)
    version: int = 1
    family: str = ""
    tags: list[str] = []
    apps: list[str] = []
    timeout: float = Field(default=180.0, gt=0, le=86400)
    max_steps: int = Field(default=30, ge=1, le=1000)
    #: the checks are read again until two reads agree, within this many seconds (an app
    #: still saving, a page still posting); 0: read once
    settle: float = Field(default=0.0, ge=0, le=120)
    setup: list[dict[str, Any]] = []
    #: setup steps the harness runs after the agent, before the checks (OSWorld's postconfig)
    postconfig: list[dict[str, Any]] = []
    check: list[Check] = Field(min_length=1)
    oracle: list[OracleStep] = []
    #: URLs of the OSWorld file store this task copies from (``{store}``)
    downloads: list[str] = []
    #: set by the loader: the file the task came from and its directory (fixtures)
    source: str = ""
    base_dir: str = ""

    def model_post_init(self, _context: Any) -> None:
        if not self.family:
            self.family = self.id.split(".", 1)[0]

    def setup_steps(self) -> list[SetupStep]:
        return [parse_setup_step(raw, i) for i, raw in enumerate(self.setup)]

    def postconfig_steps(self) -> list[SetupStep]:
        return [parse_setup_step(raw, i, "postconfig") for i, raw in enumerate(self.postconfig)]

    @property
    def heavy(self) -> bool:
        """Slow to set up (LibreOffice, browsers): scheduled first so the tail is short."""
        slow = ("soffice", "libreoffice", "localc", "lowriter", "chromium")
        return any(any(s in a for s in slow) for a in self.apps)


def parse_setup_step(raw: dict[str, Any], index: int, where: str = "setup") -> SetupStep:
    keys = [k for k in raw if k in SETUP_KINDS]
    if len(keys) != 1:
        known = ", ".join(SETUP_KINDS)
        got = ", ".join(raw) or "nothing"
        raise TaskError(f"{where}.{index}: one action key expected ({known}); got {got}")
    try:
        step: SetupStep = SETUP_KINDS[keys[0]].model_validate(raw)  # type: ignore[assignment]
    except ValidationError as exc:
        raise TaskError(f"{where}.{index} ({keys[0]}): {problems(exc)}") from None
    return step


def problems(exc: ValidationError) -> str:
    """Pydantic's errors as one line: ``check.0.path: field required; ...``."""
    out = []
    for err in exc.errors(include_url=False):
        where = ".".join(str(p) for p in err["loc"]) or "task"
        msg = "unknown key" if err["type"] == "extra_forbidden" else err["msg"]
        out.append(f"{where}: {msg}")
    return "; ".join(out)


def task_from_data(data: dict[str, Any], source: Path) -> Task:
    """Validate a task's data (read from ``source``); the error names the file and lists
    every problem found (those of the setup steps too)."""
    data = dict(data)
    data.setdefault("id", source.stem)
    data["source"] = str(source)
    data["base_dir"] = str(source.parent)
    try:
        return Task.model_validate(data)
    except ValidationError as exc:
        found = [problems(exc)]
    for where in ("setup", "postconfig"):
        raw = data.get(where)
        for i, step in enumerate(raw if isinstance(raw, list) else []):
            if isinstance(step, dict):
                try:
                    parse_setup_step(step, i, where)
                except TaskError as exc:
                    found.append(str(exc))
    raise TaskError(f"{source}: {'; '.join(found)}")
