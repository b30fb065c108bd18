"""AtspiBus call bookkeeping: the in-flight cap and its queue, timeouts, dead connections.

The desktop tests run every call against a real accessibility bus; these pin the edge cases
that a real app does not produce on demand, against a stand-in for dbus-fast's MessageBus.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from dbus_fast import Message, MessageType

from deskpilot.desktop.atspi.bus import AtspiBus
from deskpilot.desktop.atspi.calls import AtspiCallError, AtspiTimeout
from deskpilot.errors import AccessibilityUnavailable

pytestmark = pytest.mark.asyncio

Reply = Callable[[Message | None, Exception | None], None]


class StandInBus:
    """Records calls; replies only when told to; can be closed."""

    def __init__(self) -> None:
        self.pending: list[tuple[Message, Reply]] = []
        self.closed = False

    def _call(self, msg: Message, callback: Reply) -> None:
        if self.closed:
            raise EOFError("the connection is closed")
        msg.serial = len(self.pending) + 1
        self.pending.append((msg, callback))

    def answer(self, body: list[Any] | None = None, error: str | None = None) -> None:
        msg, callback = self.pending.pop(0)
        if error is not None:
            reply = Message.new_error(msg, error, "it went wrong")
        else:
            reply = Message(
                message_type=MessageType.METHOD_RETURN,
                reply_serial=msg.serial,
                signature="s",
                body=body or ["ok"],
            )
        callback(reply, None)


def bus_over(stand_in: StandInBus, **kwargs: Any) -> AtspiBus:
    return AtspiBus(stand_in, **kwargs)  # type: ignore[arg-type]


async def test_calls_beyond_the_cap_wait_and_go_out_as_replies_come() -> None:
    stand_in = StandInBus()
    bus = bus_over(stand_in, max_in_flight=2)
    futures = [bus.request(":1.5", "/a", "Accessible", "GetRole") for _ in range(5)]
    assert len(stand_in.pending) == 2
    stand_in.answer(["first"])
    assert len(stand_in.pending) == 2  # the third went out in the first's slot
    while stand_in.pending:
        stand_in.answer()
    assert [f.result() for f in futures] == [["first"], ["ok"], ["ok"], ["ok"], ["ok"]]


async def test_an_error_reply_raises_the_call_error() -> None:
    stand_in = StandInBus()
    bus = bus_over(stand_in)
    future = bus.request(":1.5", "/a", "Accessible", "GetRole")
    stand_in.answer(error="org.freedesktop.DBus.Error.UnknownObject")
    with pytest.raises(AtspiCallError) as info:
        await future
    assert info.value.gone and info.value.member == "GetRole"


async def test_a_call_without_a_reply_times_out_and_frees_its_slot() -> None:
    stand_in = StandInBus()
    bus = bus_over(stand_in, max_in_flight=1)
    loop = asyncio.get_running_loop()
    start = loop.time()
    silent = bus.request(":1.5", "/a", "Accessible", "GetRole", timeout=0.2)
    queued = bus.request(":1.5", "/b", "Accessible", "GetRole", timeout=0.2)
    with pytest.raises(AtspiTimeout, match=r"GetRole on :1\.5 timed out"):
        await silent
    assert 0.2 <= loop.time() - start < 0.5
    assert len(stand_in.pending) == 2  # the queued call went out when the first expired
    stand_in.pending.pop(0)  # the late reply to the expired call never comes
    stand_in.answer(["late but fine"])
    assert await queued == ["late but fine"]


async def test_a_late_reply_to_an_expired_call_is_ignored() -> None:
    stand_in = StandInBus()
    bus = bus_over(stand_in)
    future = bus.request(":1.5", "/a", "Accessible", "GetRole", timeout=0.05)
    with pytest.raises(AtspiTimeout):
        await future
    stand_in.answer(["too late"])  # must not raise InvalidStateError
    assert isinstance(future.exception(), AtspiTimeout)


async def test_a_closed_connection_fails_every_queued_call_without_recursing() -> None:
    stand_in = StandInBus()
    bus = bus_over(stand_in, max_in_flight=1)
    first = bus.request(":1.5", "/a", "Accessible", "GetRole")
    queued = [bus.request(":1.5", f"/{i}", "Accessible", "GetRole") for i in range(3000)]
    stand_in.closed = True
    stand_in.answer()  # frees the slot: every queued send now fails
    assert await first == ["ok"]
    for future in queued:
        with pytest.raises(AccessibilityUnavailable, match="bus went away"):
            await future


async def test_once_an_app_stalls_its_queued_calls_fail_at_once_until_it_answers() -> None:
    stand_in = StandInBus()
    bus = bus_over(stand_in, max_in_flight=2)
    loop = asyncio.get_running_loop()
    start = loop.time()
    hung = [bus.request(":1.5", f"/{i}", "Accessible", "GetRole", timeout=0.2) for i in range(40)]
    other = bus.request(":1.6", "/a", "Accessible", "GetRole", timeout=5)
    results = await asyncio.gather(*hung, return_exceptions=True)
    assert all(isinstance(r, AtspiTimeout) for r in results)
    # one timeout for the lot (the two sent first), not twenty rounds of it
    assert loop.time() - start < 1.0
    assert bus.stalled(":1.5") and not bus.stalled(":1.6")
    sent = [m.destination for m, _cb in stand_in.pending]
    assert sent.count(":1.5") <= 3  # the first two, then one probe at most
    # another app is not held up by the hung one
    index = sent.index(":1.6")
    msg, callback = stand_in.pending.pop(index)
    callback(
        Message(message_type=MessageType.METHOD_RETURN, reply_serial=msg.serial, body=[]), None
    )
    assert await other == []
    # a probe while nothing is out goes through; its answer ends the stall
    probe = bus.request(":1.5", "/again", "Accessible", "GetRole")
    stand_in.pending[:] = [p for p in stand_in.pending if p[0].path == "/again"]
    stand_in.answer(["back"])
    assert await probe == ["back"] and not bus.stalled(":1.5")


class StandInPeer(StandInBus):
    """An app's own connection: a stand-in bus that can be closed under its calls."""

    connected = True

    def __init__(self) -> None:
        super().__init__()
        self.gone: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    async def wait_for_disconnect(self) -> None:
        await self.gone

    def disconnect(self) -> None:
        self.connected = False
        if not self.gone.done():
            self.gone.set_result(None)

    def close_under_calls(self) -> None:
        self.connected = False
        for _msg, callback in self.pending:
            callback(None, EOFError("the app closed its connection"))
        self.pending.clear()
        self.gone.set_exception(EOFError("the app closed its connection"))


async def sent(stand_in: StandInBus) -> None:
    """Let the event loop turn until a call is out (a few turns: tasks starting)."""
    for _ in range(50):
        if stand_in.pending:
            return
        await asyncio.sleep(0)
    raise AssertionError("no call went out")


async def open_peer(
    monkeypatch: pytest.MonkeyPatch, stand_in: StandInBus, bus: AtspiBus, app: str
) -> StandInPeer:
    """The app gives its socket's address; connecting to it (the process edge) gives a peer."""
    peer = StandInPeer()

    async def connect(address: str, what: str, timeout: float) -> StandInPeer:
        assert address == "unix:path=/run/app-socket"
        return peer

    monkeypatch.setattr("deskpilot.desktop.atspi.peers.connect_bus", connect)
    opening = asyncio.ensure_future(bus.peers.open(bus, app, wait=1.0))
    await sent(stand_in)
    msg, _cb = stand_in.pending[0]
    assert (msg.member, msg.destination) == ("GetApplicationBusAddress", app)
    stand_in.answer(["unix:path=/run/app-socket"])
    await opening
    return peer


async def test_calls_to_an_app_with_its_own_connection_go_there(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stand_in = StandInBus()
    bus = bus_over(stand_in)
    peer = await open_peer(monkeypatch, stand_in, bus, ":1.5")
    mine = bus.request(":1.5", "/a", "Accessible", "GetRole")
    other = bus.request(":1.6", "/a", "Accessible", "GetRole")
    assert [m.destination for m, _cb in peer.pending] == [":1.5"]
    assert [m.destination for m, _cb in stand_in.pending] == [":1.6"]
    peer.answer(["straight"])
    stand_in.answer(["by the bus"])
    assert await mine == ["straight"] and await other == ["by the bus"]


async def test_an_app_connection_closing_under_a_call_fails_it_as_an_app_that_left(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stand_in = StandInBus()
    bus = bus_over(stand_in)
    peer = await open_peer(monkeypatch, stand_in, bus, ":1.5")
    cut = bus.request(":1.5", "/a", "Accessible", "GetRole")
    peer.close_under_calls()
    with pytest.raises(AtspiCallError) as info:
        await cut
    assert info.value.gone and info.value.app_gone  # not "the accessibility bus went away"
    after = bus.request(":1.5", "/a", "Accessible", "GetRole")  # by the bus from now on
    assert [m.path for m, _cb in stand_in.pending] == ["/a"]
    stand_in.answer(error="org.freedesktop.DBus.Error.ServiceUnknown")
    with pytest.raises(AtspiCallError):
        await after


async def test_an_app_without_a_socket_of_its_own_is_called_by_the_bus() -> None:
    stand_in = StandInBus()
    bus = bus_over(stand_in)
    opening = asyncio.ensure_future(bus.peers.open(bus, ":1.5", wait=1.0))
    await sent(stand_in)
    stand_in.answer(error="org.freedesktop.DBus.Error.UnknownMethod")  # GTK 4, Qt
    await opening
    again = asyncio.ensure_future(bus.peers.open(bus, ":1.5", wait=1.0))
    await again
    assert stand_in.pending == []  # asked once, not at every read
    call = bus.request(":1.5", "/a", "Accessible", "GetRole")
    assert [m.path for m, _cb in stand_in.pending] == ["/a"]
    stand_in.answer(["by the bus"])
    assert await call == ["by the bus"]


async def test_an_app_whose_socket_hangs_up_in_the_handshake_is_called_by_the_bus(
    tmp_path: Any,
) -> None:
    """An app run as another user (the sandbox's unprivileged one, we root) accepts the
    connection and closes it at authentication: its calls stay on the bus, not a traceback."""

    async def refuse(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        # libdbus's way: the SASL exchange succeeds, the uid is refused after it, at BEGIN
        await reader.readexactly(1)  # the credentials byte
        while line := await reader.readline():
            if line.startswith(b"AUTH"):
                writer.write(b"OK " + b"0" * 32 + b"\r\n")
            elif line.startswith(b"NEGOTIATE_UNIX_FD"):
                writer.write(b"AGREE_UNIX_FD\r\n")
            elif line.startswith(b"BEGIN"):
                break
            await writer.drain()
        writer.close()

    path = str(tmp_path / "app-socket")
    server = await asyncio.start_unix_server(refuse, path=path)
    stand_in = StandInBus()
    bus = bus_over(stand_in)
    try:
        opening = asyncio.ensure_future(bus.peers.open(bus, ":1.5", wait=5.0))
        await sent(stand_in)
        stand_in.answer([f"unix:path={path}"])
        await opening  # before: EOFError out of the read
        assert bus.peers.route(":1.5") is None
        call = bus.request(":1.5", "/a", "Accessible", "GetRole")
        assert [m.path for m, _cb in stand_in.pending] == ["/a"]
        stand_in.answer(["by the bus"])
        assert await call == ["by the bus"]
    finally:
        server.close()
