"""Who may use the console: a one-time login link swapped for a cookie, or the kept token.

``deskpilot serve`` prints ``http://127.0.0.1:PORT/login?token=…`` (Jupyter's pattern): the
token in that link works once, and is swapped for a cookie named after the port (cookies are
shared across ports on one host, so each console has its own name) that is HttpOnly and
SameSite=Strict, holding a random session secret that lives as long as the process. Scripts
send ``Authorization: Bearer TOKEN`` with the token kept in the MCP token file
(``deskpilot mcp token``), which the login page also accepts. Failed logins are limited.

A link that fails says why (:meth:`ConsoleAuth.why`): used already (each link works once), or
not one of this console's (a link from before a restart, or mistyped).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections import deque
from typing import Literal

from deskpilot.mcp.tokens import TokenFile

#: Failed logins allowed per LOGIN_WINDOW seconds (code-server allows 2/min, 12/hour).
LOGIN_FAILURES = 5
LOGIN_WINDOW = 60.0

Why = Literal["used", "unknown", "limited", "expired"]


class ConsoleAuth:
    def __init__(self, tokens: TokenFile, port: int) -> None:
        self.tokens = tokens
        self.cookie_name = f"deskpilot_console_{port}"
        self._one_time: set[str] = set()
        self._used: set[str] = set()  # hashes of one-time tokens already swapped for a cookie
        self._sessions: set[str] = set()
        self._failures: deque[float] = deque()

    def one_time_token(self) -> str:
        token = secrets.token_urlsafe(32)
        self._one_time.add(token)
        return token

    def redeem(self, token: str) -> str | None:
        """A new cookie secret for a valid one-time or kept token, else None."""
        if not token or self.limited() or _digest(token) in self._used:
            return None  # (a link used twice is no guess at a token: it counts no failure)
        match = next((t for t in self._one_time if hmac.compare_digest(t, token)), None)
        if match is not None:
            self._one_time.discard(match)
            self._used.add(_digest(match))
        elif not self.tokens.accepts(token.encode()):
            self._failures.append(time.monotonic())
            return None
        secret = secrets.token_urlsafe(32)
        self._sessions.add(secret)
        return secret

    def why(self, token: str) -> Why:
        """Why ``token`` was refused: ``used`` (a one-time link used before), ``limited`` (too
        many failed logins), else ``unknown``."""
        if _digest(token) in self._used:
            return "used"
        return "limited" if self.limited() else "unknown"

    def limited(self) -> bool:
        now = time.monotonic()
        while self._failures and now - self._failures[0] > LOGIN_WINDOW:
            self._failures.popleft()
        return len(self._failures) >= LOGIN_FAILURES

    def cookie_ok(self, value: str | None) -> bool:
        return bool(value) and any(hmac.compare_digest(s, value or "") for s in self._sessions)

    def bearer_ok(self, header: str | None) -> bool:
        if not header:
            return False
        scheme, _, credential = header.partition(" ")
        return scheme.lower() == "bearer" and self.tokens.accepts(credential.strip().encode())

    def cookie_header(self, secret: str) -> str:
        return f"{self.cookie_name}={secret}; Path=/; HttpOnly; SameSite=Strict"


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()
