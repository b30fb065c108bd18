"""deskpilot's one exception tree.

Every error deskpilot raises on purpose derives from :class:`DeskpilotError`. Foreign errors
(D-Bus, X11, HTTP, OS) are translated at the seam that meets them, with ``raise ... from exc``.

::

    DeskpilotError
    ├── ConfigError                 bad flag, env value or config file
    ├── SandboxError                the headless desktop failed to start or stop
    ├── DesktopError                the desktop layer could not do what was asked
    │   ├── DisplayUnavailable      no X display (DISPLAY unset or unreachable)
    │   ├── AccessibilityUnavailable  no AT-SPI bus / registry
    │   ├── DesktopLost         the display or its bus went away mid-session
    │   ├── NotAnswering            an app did not answer a call in time (busy, frozen, hung)
    │   ├── ElementCallFailed       an app refused a question about one element (gone, unable)
    │   └── AppGone                 an app left the accessibility bus mid-call (it exited)
    │       └── ActionCutOff        … before it answered an action: whether it acted is unknown
    ├── RulesError                  the page-rule library cannot be read, written or imported
    ├── ToolError                   an expected tool failure; its text goes to the model
    │   ├── InvalidArguments        missing, mistyped or out-of-range arguments
    │   ├── UnknownTool             no tool by that name
    │   ├── WindowNotFound          a windowID that names no open window
    │   ├── ElementGone             a stale element ID (re-read needed)
    │   ├── AppNotFound             open_app could not resolve a name
    │   ├── AppBlocked              the app is on the blocklist
    │   ├── ActionFailed            the app refused or did not perform an action
    │   ├── AppNotResponding        the target app does not answer (said with its name)
    │   ├── AppClosed               the target window closed while it was being used
    │   ├── BrowserUnavailable      the agent browser is not running or not reachable (CDP)
    │   ├── PageError               a page tool could not do its work in the page
    │   └── ActionDeclined          a person (or policy) declined the action
    ├── ProviderError               a model provider failed (HTTP, auth, bad reply)
    │   └── ProviderNotConfigured   no model, key or SDK: the message says how to fix it
    ├── AuditError                  the audit log cannot be written or read
    │   └── AuditIntegrityError     verification found an edited or missing record
    └── EvalError                   ``deskpilot eval``: a suite, task or run cannot be used
        ├── TaskError               a task file is invalid (the message names file and field)
        ├── SetupFailed             a task's setup did not complete (a setup error, not a fail)
        ├── CheckFailed             the end state is not what the task asks (inside checkers)
        ├── OracleFailed            a step of a task's oracle failed (the checks then decide)
        └── CheckBroken             a checker could not read the state (a checker error)

Tool errors carry the exact text the model reads (``str(exc)``); keep them to fixed phrases
plus identifiers, never raw exception text that might carry screen content.
"""

from __future__ import annotations


class DeskpilotError(Exception):
    """Base of every error deskpilot raises on purpose."""

    exit_code = 1


class ConfigError(DeskpilotError):
    """A setting (flag, environment variable or config file entry) is invalid."""

    exit_code = 2


class SandboxError(DeskpilotError):
    """The sandbox desktop could not be started, found or stopped."""


class DesktopError(DeskpilotError):
    """The desktop layer failed (X11, AT-SPI, a launched process)."""


class DisplayUnavailable(DesktopError):
    """No X display to work on."""


class AccessibilityUnavailable(DesktopError):
    """The AT-SPI accessibility bus or registry cannot be reached."""


class DesktopLost(DesktopError):
    """The display (or its accessibility bus) went away while deskpilot was using it.

    Long-lived surfaces (the MCP server) drop the dead connection and open the desktop again
    on the next call, so calls work again once the display is back."""


class RulesError(DeskpilotError):
    """The page-rule library cannot be opened, written, exported or imported."""


class NotAnswering(DesktopError):
    """An app did not answer a call in time: it is busy, frozen (stopped) or hung."""


class ElementCallFailed(DesktopError):
    """An app refused a question about one of its accessible elements: the element is gone,
    or it lacks the ability asked about (no text, no value). Each backend raises its own
    subclass (AT-SPI: ``AtspiCallError``); the skills catch this one."""


class AppGone(DesktopError):
    """An app left the accessibility bus while it was being used (its process exited)."""


class ActionCutOff(AppGone):
    """An app left the bus before it answered an action sent to it (killed or crashed while
    the action waited on it): whether the action was done is not known, so the window's
    closing cannot be taken as the action's effect."""


class ToolError(DeskpilotError):
    """An expected failure of a tool call. ``str(exc)`` is the text the model receives."""


class InvalidArguments(ToolError):
    """A tool was called with missing, mistyped or out-of-range arguments."""


class UnknownTool(ToolError):
    """No tool has the requested name."""


class WindowNotFound(ToolError):
    """A window ID does not name an open window."""

    def __init__(self, window_id: str) -> None:
        super().__init__(
            f"Window {window_id} not found — run list_windows again; the window may have closed."
        )
        self.window_id = window_id


class ElementGone(ToolError):
    """An element ID no longer names the element it named when it was read."""

    def __init__(self, element_id: str, detail: str = "") -> None:
        why = f" ({detail})" if detail else ""
        super().__init__(
            f"Element @{element_id} is no longer available{why} — the UI changed. "
            "Call read_screen_ax again and use the new element IDs."
        )
        self.element_id = element_id


class AppNotFound(ToolError):
    """open_app could not resolve an app id or name."""


class AppBlocked(ToolError):
    """The target app is on the blocklist."""

    def __init__(self, app: str) -> None:
        super().__init__(
            f"{app} is on the blocked apps list: deskpilot will not open, read or control it. "
            "Stop trying to use this app and tell the user it is blocked "
            "(they can change the list with `deskpilot blocklist`)."
        )
        self.app = app


class ActionFailed(ToolError):
    """The target app refused or did not perform an action."""


class BrowserUnavailable(ToolError):
    """The agent browser is not running, or its DevTools endpoint cannot be reached."""


class PageError(ToolError):
    """A page tool could not run its code in the page, or the page refused it."""


class AppNotResponding(ToolError):
    """The target app does not answer. ``then`` says what became of the call: one of
    NOTHING_DONE, NOTHING_READ, MAY_TAKE_EFFECT."""

    NOTHING_DONE = "Nothing was done."
    NOTHING_READ = "Nothing was read."
    MAY_TAKE_EFFECT = (
        "The action was sent and may still take effect when the app recovers: read the window "
        "again before retrying it."
    )

    def __init__(self, app: str, window_id: str, then: str) -> None:
        super().__init__(
            f"{app} ({window_id}) is not responding: it did not answer in time (it may be "
            f"busy, frozen or hung). {then} Wait a moment and try again; if it stays like "
            "this, tell the user the app seems frozen."
        )
        self.app = app


class AppClosed(ToolError):
    """The target window closed (its app exited) while a tool was using it. ``cut_off``: the
    app left before it answered the action itself (whether it acted is not known)."""

    def __init__(self, app: str, window_id: str, *, cut_off: bool = False) -> None:
        how = (
            "; the app left before the action was sent or answered, so it may not have been "
            "done (the app may have crashed or been killed)"
            if cut_off
            else " (the app may have exited)"
        )
        super().__init__(
            f"The window {window_id} of {app} closed while it was being used{how}. Call "
            "list_windows to see what is open, or open_app to start it again."
        )
        self.app = app
        self.cut_off = cut_off


class ActionDeclined(ToolError):
    """A person, or the confirmation policy, declined the action; nothing ran.

    ``why`` says in a few words who or what declined ("the user declined")."""

    def __init__(self, message: str, why: str = "") -> None:
        super().__init__(message)
        self.why = why or message


class ProviderError(DeskpilotError):
    """A model provider failed: HTTP error, authentication, or an unusable reply."""


class ProviderNotConfigured(ProviderError):
    """No model, API key or SDK is available. The message says how to fix it."""

    exit_code = 2


class AuditError(DeskpilotError):
    """The audit log cannot be written or read."""


class AuditIntegrityError(AuditError):
    """Verification found an edited, reordered or missing audit record."""


class EvalError(DeskpilotError):
    """``deskpilot eval`` cannot go on: a suite, a run directory or a backend is unusable."""


class TaskError(EvalError):
    """A task file is invalid; the message names the file and the field."""

    exit_code = 2


class SetupFailed(EvalError):
    """A task's setup did not complete: the trial is a setup error, never a model failure."""


class CheckFailed(EvalError):
    """The end state is not what the task asks (raised inside checkers: a failed check)."""


class OracleFailed(EvalError):
    """A step of a task's oracle could not run or its tool failed (the checks then decide)."""


class CheckBroken(EvalError):
    """A checker could not read the end state: the trial is a checker error, not a failure."""
