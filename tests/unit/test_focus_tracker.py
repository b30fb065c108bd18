"""The focus tracker: what apps report decides; a read stands in for an app that said nothing."""

from __future__ import annotations

from dbus_fast import Message, MessageType, Variant

from deskpilot.desktop.atspi.focus import FocusTracker

APP, OTHER = ":1.7", ":1.9"


def focus_event(sender: str, path: str, gained: bool) -> Message:
    msg = Message(
        message_type=MessageType.SIGNAL,
        path=path,
        interface="org.a11y.atspi.Event.Object",
        member="StateChanged",
        signature="siiva{sv}",
        body=["focused", int(gained), 0, Variant("i", 0), {}],
    )
    msg.sender = sender
    return msg


def test_a_read_stands_for_an_app_that_reported_no_focus_until_it_does() -> None:
    tracker = FocusTracker()
    tracker.learn(APP, "/a/9")  # the read found it focused: the app said nothing yet
    assert tracker.of([APP]) == (APP, "/a/9")
    assert tracker.changes == 0  # the focus did not move: it was learnt
    tracker.on_message(focus_event(APP, "/a/9", gained=False))  # it left, to nothing
    assert tracker.of([APP]) is None
    tracker.learn(APP, "/a/9")  # a read from before the event (or a stale one) changes nothing
    assert tracker.of([APP]) is None


def test_once_an_app_reported_focus_a_read_never_overrides_it() -> None:
    tracker = FocusTracker()
    tracker.on_message(focus_event(APP, "/a/3", gained=True))
    tracker.learn(APP, "/a/9")
    assert tracker.of([APP]) == (APP, "/a/3")
    tracker.learn(OTHER, "/b/1")  # another app, silent so far: learnt
    assert tracker.of([OTHER, APP]) == (OTHER, "/b/1")
