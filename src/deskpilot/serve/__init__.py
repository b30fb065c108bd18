"""``deskpilot serve``: the web console — background sessions you watch, approve, talk to, take
over and stop, with what each step costs.

One process on loopback owns the sessions (up to six at once, each on a new sandbox desktop
or on this desktop) and serves the console page and the MCP server on one port:

::

    server       the process: socket, uvicorn, the first-line login link, shutdown order
    guard        every request: Host, Origin, Sec-Fetch-Site, JSON POSTs, login, strict CSP
    auth         one-time login link → cookie; the kept token for scripts
    app          the routes (pages, sessions, confirmations, events, frames, windows)
    sessions     starting, running (through runtime.open_session), talking to and stopping
                 sessions; a finished one keeps its desktop for a follow-up
    runs         a session's runs: the goal's, then each continuation in the same context
    inbox        what a person says to a running agent, and its pause for a take-over (the
                 agent loop's inbox and before_call hooks)
    takeover     a person drives a session's desktop from the preview; the agent waits
    metering     every model call as sent and answered: tokens, the raw exchange
    prices       tokens from each provider's usage fields; the editable price table
    places       where a session runs: its own sandbox, or this desktop (and its cleanup)
    shared_input sessions on one display take turns for raw input
    approver     confirmation cards: first answer wins, timeout or no page → declined
    capture      one session's live preview: its window's pixels, grabbed when they change
    thumbs       a card's thumbnail, kept up to date one changed box at a time
    frames       the previews' stream (one per page) and a capturer per live session
    hub          the numbered event stream every page follows (SSE, replay on reconnect)
    chips        recorded events as page data (texts cut, no images)
    status       card states, status lines, outcomes → Done / Needs attention / Stopped
    audit_api    the audit log: runs, replay with screenshots, verify, Markdown export
    static/      the page: plain HTML, CSS and JS (no build step, no CDN)
"""

from __future__ import annotations

from deskpilot.serve.server import CONSOLE_CLASS, Console, ServeOptions, serve

__all__ = ["CONSOLE_CLASS", "Console", "ServeOptions", "serve"]
