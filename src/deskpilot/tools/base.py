"""A tool is a typed async function with a docstring; ``@tool`` derives its JSON schema.

::

    @tool(risk=Risk.READ_ONLY, title="Wait")
    async def wait(ctx: ToolContext, seconds: Annotated[float, Field(gt=0, le=3600)]) -> ToolResult:
        '''Pause for a number of seconds.'''

The first parameter is the :class:`ToolContext`; the others become the input schema (pydantic
validates calls against it, unknown arguments are refused). Descriptions come from the
docstring's first paragraph and from ``Field(description=...)``.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, get_type_hints

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from deskpilot.errors import InvalidArguments
from deskpilot.events import Image
from deskpilot.policy import Risk, Verdict
from deskpilot.tools.reach import ReachHook

if TYPE_CHECKING:
    from deskpilot.tools.context import ToolContext


@dataclass
class ToolResult:
    """What a tool returns: the text the model reads, images, and structured data for --json."""

    text: str
    images: list[Image] = field(default_factory=list)
    is_error: bool = False
    data: dict[str, Any] | None = None
    summary: str = ""  # one line for chips; defaults to the first line of text
    #: the Python value behind the text, for in-process callers (never shown or logged)
    value: Any = None

    def __post_init__(self) -> None:
        if not self.summary:
            first = self.text.strip().splitlines()[0] if self.text.strip() else ""
            self.summary = first[:160]

    @classmethod
    def error(cls, text: str) -> ToolResult:
        return cls(text=text, is_error=True)


ToolFunc = Callable[..., Awaitable[ToolResult]]
RiskHook = Callable[
    ["ToolContext", Mapping[str, Any]], Awaitable[tuple[Risk, str] | Verdict | None]
]
CheckHook = Callable[[Mapping[str, Any]], None]
#: lines a person sees when asked to approve one call (what exactly will be saved)
ExplainHook = Callable[["ToolContext", Mapping[str, Any]], Awaitable[list[str]]]


@dataclass
class ToolSpec:
    """One tool: its name, description, schema, declared risk and implementation."""

    name: str
    title: str
    description: str
    func: ToolFunc
    #: the arguments as pydantic fields; the model is built on first use (a CLI call builds
    #: one tool's, not every tool's, at start-up)
    fields: dict[str, Any]
    risk: Risk
    open_world: bool = False
    idempotent: bool = False
    assess: RiskHook | None = None  # the tool's own judgement of one call (may raise the risk)
    check: CheckHook | None = None  # cross-field checks; raises InvalidArguments
    explain: ExplainHook | None = None  # details shown with a confirmation
    #: what a call touches (windows, points, elements, keys, apps); None: the default reach
    reach: ReachHook | None = None
    #: a person's yes to a call of this tool also covers the acting calls it makes (a native
    #: computer call's actions were shown one by one)
    covers: bool = False
    #: what it does may be consequential, judged per call by the door (a click on "Send")
    effects: bool = False

    _model: type[BaseModel] | None = field(default=None, repr=False, compare=False)
    _schema: dict[str, Any] | None = field(default=None, repr=False, compare=False)

    @property
    def model(self) -> type[BaseModel]:
        if self._model is None:
            self._model = create_model(
                f"{self.func.__name__}_args",
                __config__=ConfigDict(extra="forbid", strict=False),
                **self.fields,
            )
        return self._model

    @property
    def input_schema(self) -> dict[str, Any]:
        """The arguments' JSON schema (a copy: callers may adapt it). Made once: pydantic
        builds it in ~10 ms, and every request to a model sends every tool's."""
        if self._schema is None:
            self._schema = _clean_schema(self.model.model_json_schema())
        return copy.deepcopy(self._schema)

    def validate(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """Validate ``args``; return them with defaults applied, or raise InvalidArguments."""
        try:
            parsed = self.model.model_validate(dict(args))
        except ValidationError as exc:
            raise InvalidArguments(describe_validation_error(self.name, exc)) from exc
        values = {k: getattr(parsed, k) for k in type(parsed).model_fields}
        if self.check is not None:
            try:
                self.check(values)
            except InvalidArguments as exc:
                raise InvalidArguments(f"Invalid arguments for {self.name}: {exc}") from None
        return values

    def schema_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "input_schema": self.input_schema,
            "risk": self.risk.value,
        }


def describe_validation_error(tool: str, exc: ValidationError) -> str:
    problems = []
    for err in exc.errors(include_url=False):
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        kind = err["type"]
        if kind == "missing":
            problems.append(f"{where}: required argument is missing")
        elif kind == "extra_forbidden":
            problems.append(f"{where}: unknown argument")
        else:
            got = err.get("input")
            shown = repr(got) if not isinstance(got, dict | list) else type(got).__name__
            if len(shown) > 60:
                shown = shown[:57] + "..."
            problems.append(f"{where}: {err['msg']} (got {shown})")
    return f"Invalid arguments for {tool}: " + "; ".join(problems)


def _clean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Simplify pydantic's schema for models: Optional[X] = None becomes plain X, no titles."""

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            node = {k: walk(v) for k, v in node.items() if k != "title"}
            any_of = node.get("anyOf")
            if isinstance(any_of, list) and {"type": "null"} in any_of and len(any_of) == 2:
                other = next(x for x in any_of if x != {"type": "null"})
                node.pop("anyOf")
                if node.get("default", "x") is None:
                    node.pop("default")
                node = {**other, **node}
            return node
        if isinstance(node, list):
            return [walk(x) for x in node]
        return node

    defs = schema.pop("$defs", {})

    def inline(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                target = dict(defs[ref.split("/")[-1]])
                rest = {k: v for k, v in node.items() if k != "$ref"}
                return inline({**target, **rest})
            return {k: inline(v) for k, v in node.items()}
        if isinstance(node, list):
            return [inline(x) for x in node]
        return node

    cleaned: dict[str, Any] = walk(inline(schema))
    cleaned.setdefault("properties", {})
    cleaned["additionalProperties"] = False
    return cleaned


def _doc_description(func: Callable[..., Any]) -> str:
    doc = inspect.getdoc(func) or ""
    return doc.strip()


def tool(
    *,
    risk: Risk,
    title: str,
    name: str | None = None,
    open_world: bool = False,
    idempotent: bool = False,
    assess: RiskHook | None = None,
    check: CheckHook | None = None,
    explain: ExplainHook | None = None,
    reach: ReachHook | None = None,
    covers: bool = False,
    effects: bool = False,
) -> Callable[[ToolFunc], ToolSpec]:
    """Turn a typed async function into a :class:`ToolSpec`."""

    def wrap(func: ToolFunc) -> ToolSpec:
        sig = inspect.signature(func)
        hints = get_type_hints(func, include_extras=True)
        params = list(sig.parameters.values())
        if not params or params[0].name != "ctx":
            raise TypeError(f"tool {func.__name__}: the first parameter must be 'ctx'")
        fields: dict[str, Any] = {}
        for p in params[1:]:
            annotation = hints.get(p.name, Any)
            default = ... if p.default is inspect.Parameter.empty else p.default
            fields[p.name] = (annotation, default)
        return ToolSpec(
            name=name or func.__name__,
            title=title,
            description=_doc_description(func),
            func=func,
            fields=fields,
            risk=risk,
            open_world=open_world,
            idempotent=idempotent,
            assess=assess,
            check=check,
            explain=explain,
            reach=reach,
            covers=covers,
            effects=effects,
        )

    return wrap
