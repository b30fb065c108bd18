"""One tool, two spellings: a :class:`ToolSpec` as an MCP ``Tool``, a ToolResult as a result.

Everything a client sees about a tool comes from its one definition (``@tool``): name, title,
description, the derived input schema, and annotations from the declared risk:

========================  =============  ================  ===============  ==============
declared                  readOnlyHint   destructiveHint   idempotentHint   openWorldHint
========================  =============  ================  ===============  ==============
read-only                 true           (omitted)         (omitted)        ``open_world``
acts                      false          false             ``idempotent``   ``open_world``
acts, ``effects``/assess  false          true              ``idempotent``   ``open_world``
consequential / persists  false          true              ``idempotent``   ``open_world``
========================  =============  ================  ===============  ==============

A tool whose effect the door judges per call (``effects=True``: ``perform``,
``perform_sequence``) or that has an ``assess`` hook may be raised to consequential for one
call (a button named "Send"), so it is declared possibly destructive.
``openWorldHint`` is always sent: the MCP default is true, and most tools stay on this desktop.

A tool whose result has structure (:mod:`deskpilot.tools.outputs`) declares an ``outputSchema``
and each successful result carries ``structuredContent`` beside the text. The text is what a
model reads (the spec's "serialised JSON in a text block" would double a read's size in the
model's context), so the JSON is not repeated there.
"""

from __future__ import annotations

import base64

import mcp.types as types

from deskpilot.policy import Risk
from deskpilot.tools.base import ToolResult, ToolSpec
from deskpilot.tools.outputs import output_schema, structured

#: ``Tool._meta`` key carrying the declared risk (read-only, acts, consequential, persists).
RISK_META_KEY = "deskpilot/risk"


def annotations_for(spec: ToolSpec) -> types.ToolAnnotations:
    """MCP tool annotations derived from the tool's declared risk."""
    if spec.risk is Risk.READ_ONLY:
        return types.ToolAnnotations(
            title=spec.title, read_only_hint=True, open_world_hint=spec.open_world
        )
    destructive = (
        spec.risk.rank >= Risk.CONSEQUENTIAL.rank or spec.assess is not None or spec.effects
    )
    return types.ToolAnnotations(
        title=spec.title,
        read_only_hint=False,
        destructive_hint=destructive,
        idempotent_hint=spec.idempotent,
        open_world_hint=spec.open_world,
    )


def tool_definition(spec: ToolSpec) -> types.Tool:
    """The ``tools/list`` entry for one tool."""
    return types.Tool(
        name=spec.name,
        title=spec.title,
        description=spec.description,
        input_schema=spec.input_schema,
        output_schema=output_schema(spec),
        annotations=annotations_for(spec),
        _meta={RISK_META_KEY: spec.risk.value},
    )


def call_result(
    result: ToolResult, *, note: str = "", spec: ToolSpec | None = None
) -> types.CallToolResult:
    """The text (plus ``note``) as a text block, each image as an image block, the structured
    result when ``spec`` declares one; errors flagged."""
    text = f"{result.text}\n\n{note}" if note else result.text
    content: list[types.ContentBlock] = [types.TextContent(text=text)]
    for image in result.images:
        content.append(
            types.ImageContent(
                data=base64.b64encode(image.data).decode("ascii"), mime_type=image.mime
            )
        )
    data = structured(spec, result) if spec is not None else None
    return types.CallToolResult(content=content, structured_content=data, is_error=result.is_error)


def error_result(text: str) -> types.CallToolResult:
    return call_result(ToolResult.error(text))
