"""Small helpers for reading tool output in desktop tests."""

from __future__ import annotations

import re

import mcp.types as types


def find_id(text: str, role: str, name: str | None = None) -> str:
    """The @ID of the first line with this role (and exact name, if given)."""
    for m in re.finditer(r'^\s*(\S+)(?: "((?:[^"\\]|\\.)*)")?(.*?) @(\S+)$', text, re.M):
        if m.group(1) == role and (name is None or m.group(2) == name):
            return m.group(4)
    raise AssertionError(f"no {role} {name!r} with an ID in:\n{text}")


def value_of(text: str, element_id: str) -> str:
    """The value (= "...") shown on the line of an element ID."""
    m = re.search(rf'= "((?:[^"\\]|\\.)*)".* @{re.escape(element_id)}$', text, re.M)
    assert m, f"no value for @{element_id} in:\n{text}"
    return m.group(1).replace('\\"', '"').replace("⏎", "\n")


def window_id_from(text: str) -> str:
    m = re.search(r"Stable Window ID: (\S+)", text)
    assert m, text
    return m.group(1)


def mcp_text(result: types.CallToolResult) -> str:
    """The text of an MCP tool result (its first content block)."""
    first = result.content[0]
    assert isinstance(first, types.TextContent)
    return first.text


def id_of_line(text: str, contains: str) -> str:
    """The @ID of the first line (with an ID) that contains ``contains``."""
    for line in text.splitlines():
        if contains in line and re.search(r" @\S+$", line):
            return line.rsplit("@", 1)[1]
    raise AssertionError(f"no line with {contains!r} and an ID in:\n{text}")
