"""What model calls cost: the tokens of one reply, read from the provider's own usage fields,
and a price table the user edits.

Tokens are read from the reply as the provider sent it (:func:`usage_of`, :func:`tokens`):

============  =====================================  ==========================================
provider      usage object                           counted
============  =====================================  ==========================================
Anthropic     ``usage``                              in = input + cache read + cache write;
                                                     out = output
OpenAI        ``usage`` (Responses)                  in = input (cached inside); out = output
compatible    ``usage`` (Chat Completions)           in = prompt (cached inside);
                                                     out = completion
Gemini        ``usageMetadata``                      in = prompt + tool-use prompt;
                                                     out = candidates + thoughts
============  =====================================  ==========================================

Prices are US dollars per million tokens, per model as written in ``--model``
(``anthropic:claude-sonnet-4-5``; ``*`` in a name matches anything, the longest match wins):
``input``, ``output``, and optionally ``cached_input`` (cache reads; else ``input``) and
``cache_write`` (else ``input``). The table is ``prices.toml`` in the config directory
(``~/.config/deskpilot/prices.toml``), written by the console's Prices page or by hand::

    [prices."anthropic:claude-sonnet-4-5"]
    input = 3.0
    output = 15.0
    cached_input = 0.3

No prices are built in: they change and differ by contract. A model without a row shows its
tokens and no cost.
"""

from __future__ import annotations

import fnmatch
import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deskpilot._files import write_atomic
from deskpilot.errors import ConfigError

FIELDS = ("input", "output", "cached_input", "cache_write")
MAX_PRICE = 10_000.0  # dollars per million tokens: anything above is a typo


@dataclass(frozen=True)
class Tokens:
    """One reply's tokens: all input (cached parts included), output, and the cached parts."""

    input: int = 0
    output: int = 0
    cached: int = 0  # input read from a cache (billed at ``cached_input``)
    cache_write: int = 0  # input written to a cache (Anthropic; billed at ``cache_write``)

    def __add__(self, other: Tokens) -> Tokens:
        return Tokens(
            self.input + other.input,
            self.output + other.output,
            self.cached + other.cached,
            self.cache_write + other.cache_write,
        )

    def as_dict(self) -> dict[str, int]:
        return {
            "input": self.input,
            "output": self.output,
            "cached": self.cached,
            "cache_write": self.cache_write,
        }


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def usage_of(reply: Mapping[str, Any]) -> dict[str, Any]:
    """The reply's usage object as the provider sent it ({} when it sent none)."""
    for key in ("usage", "usageMetadata"):
        found = reply.get(key)
        if isinstance(found, dict):
            return found
    return {}


def tokens(usage: Mapping[str, Any]) -> Tokens:
    """The :class:`Tokens` of a usage object of any of the providers (see the table above)."""
    if "promptTokenCount" in usage or "candidatesTokenCount" in usage:  # Gemini
        return Tokens(
            _int(usage.get("promptTokenCount")) + _int(usage.get("toolUsePromptTokenCount")),
            _int(usage.get("candidatesTokenCount")) + _int(usage.get("thoughtsTokenCount")),
            _int(usage.get("cachedContentTokenCount")),
        )
    if "prompt_tokens" in usage or "completion_tokens" in usage:  # Chat Completions
        details = usage.get("prompt_tokens_details")
        cached = _int(details.get("cached_tokens")) if isinstance(details, dict) else 0
        return Tokens(
            _int(usage.get("prompt_tokens")), _int(usage.get("completion_tokens")), cached
        )
    details = usage.get("input_tokens_details")
    if isinstance(details, dict) or "total_tokens" in usage:  # OpenAI Responses
        cached = _int(details.get("cached_tokens")) if isinstance(details, dict) else 0
        return Tokens(_int(usage.get("input_tokens")), _int(usage.get("output_tokens")), cached)
    read = _int(usage.get("cache_read_input_tokens"))  # Anthropic
    write = _int(usage.get("cache_creation_input_tokens"))
    return Tokens(
        _int(usage.get("input_tokens")) + read + write,
        _int(usage.get("output_tokens")),
        read,
        write,
    )


@dataclass(frozen=True)
class Price:
    """Dollars per million tokens."""

    input: float
    output: float
    cached_input: float | None = None
    cache_write: float | None = None

    def cost(self, t: Tokens) -> float:
        cached = self.input if self.cached_input is None else self.cached_input
        write = self.input if self.cache_write is None else self.cache_write
        plain = max(0, t.input - t.cached - t.cache_write)
        total = plain * self.input + t.cached * cached + t.cache_write * write
        return (total + t.output * self.output) / 1_000_000

    def as_dict(self) -> dict[str, float]:
        out = {"input": self.input, "output": self.output}
        if self.cached_input is not None:
            out["cached_input"] = self.cached_input
        if self.cache_write is not None:
            out["cache_write"] = self.cache_write
        return out


def parse_price(model: str, row: Any) -> Price:
    """A row of the table (``{"input": 3, "output": 15}``), checked; ConfigError says what
    is wrong with it."""
    if not isinstance(row, Mapping):
        raise ConfigError(f"the price of {model!r} must be a table with input and output")
    unknown = sorted(set(row) - set(FIELDS))
    if unknown:
        raise ConfigError(
            f"the price of {model!r} has unknown fields {unknown}: use {', '.join(FIELDS)}"
        )
    values: dict[str, float | None] = {}
    for name in FIELDS:
        value = row.get(name)
        if value is None or value == "":
            if name in ("input", "output"):
                raise ConfigError(f"the price of {model!r} needs {name} (dollars per 1M tokens)")
            values[name] = None
            continue
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise ConfigError(
                f"{name} of {model!r} must be a number of dollars per 1M tokens, not {value!r}"
            ) from None
        if not 0 <= number <= MAX_PRICE or number != number:
            raise ConfigError(f"{name} of {model!r} must be from 0 to {MAX_PRICE:g} dollars")
        values[name] = number
    return Price(
        values["input"] or 0.0,
        values["output"] or 0.0,
        values["cached_input"],
        values["cache_write"],
    )


class PriceTable:
    """The user's prices, read from and saved to ``path`` (see the module docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.prices: dict[str, Price] = {}
        self.problem = ""  # why the file could not be read, if it could not
        self._stamp: tuple[float, int] | None = None
        self.reload()

    def reload(self) -> None:
        """Read the file again if it changed (an edit by hand shows on the next look)."""
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            self.prices, self.problem, self._stamp = {}, "", None
            return
        except OSError as exc:
            self.problem = f"cannot read {self.path}: {exc.strerror}"
            return
        stamp = (stat.st_mtime, stat.st_size)
        if stamp == self._stamp:
            return
        self._stamp = stamp
        try:
            data = tomllib.loads(self.path.read_text(encoding="utf-8"))
            rows = data.get("prices", {})
            if not isinstance(rows, dict):
                raise ConfigError("[prices] must be a table of models")
            self.prices = {str(m): parse_price(str(m), r) for m, r in rows.items()}
            self.problem = ""
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, ConfigError) as exc:
            self.problem = f"{self.path}: {exc}"

    def find(self, model: str) -> Price | None:
        self.reload()
        if model in self.prices:
            return self.prices[model]
        matches = [p for p in self.prices if "*" in p and fnmatch.fnmatchcase(model, p)]
        return self.prices[max(matches, key=len)] if matches else None

    def cost(self, model: str, t: Tokens) -> float | None:
        price = self.find(model)
        return None if price is None else price.cost(t)

    def replace(self, rows: Mapping[str, Any]) -> None:
        """Check every row, then write the whole table (atomically) and use it."""
        checked: dict[str, Price] = {}
        for model, row in rows.items():
            name = str(model).strip()
            if not name:
                raise ConfigError("a price row has no model: write it as provider:model")
            if len(name) > 200 or any(c in name for c in '\n\r"\\'):
                raise ConfigError(f"{name[:60]!r} is not a model name (provider:model)")
            checked[name] = parse_price(name, row)
        lines = [
            "# deskpilot: model prices in US dollars per million tokens (the console's Prices",
            "# page writes this file; edit it by hand as well). `*` in a name matches anything.",
            "",
        ]
        for name, price in sorted(checked.items()):
            lines.append(f"[prices.{json.dumps(name)}]")
            lines += [f"{k} = {v!r}" for k, v in price.as_dict().items()]
            lines.append("")
        write_atomic(self.path, "\n".join(lines))
        self.prices, self.problem, self._stamp = checked, "", None
        self.reload()

    def as_dict(self) -> dict[str, Any]:
        self.reload()
        return {
            "path": str(self.path),
            "prices": {m: p.as_dict() for m, p in sorted(self.prices.items())},
            "problem": self.problem,
        }
