"""The accessibility connections' writes: what one turn of the event loop sends goes out in one
write, in order, and a full socket is waited for (connect._PatientSocket under dbus-fast)."""

from __future__ import annotations

import asyncio
import socket

import pytest

from deskpilot.desktop.atspi.connect import _PatientSocket

pytestmark = pytest.mark.asyncio


class CountingSocket:
    """One end of a socket pair, counting the writes made to it."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.writes = 0
        self.full = 0  # writes refused as if the socket were full

    def send(self, data: bytes) -> int:
        if self.full:
            self.full -= 1
            raise BlockingIOError
        self.writes += 1
        return self.sock.send(data)


async def received(sock: socket.socket, size: int) -> bytes:
    got = b""
    loop = asyncio.get_running_loop()
    while len(got) < size:
        got += await loop.sock_recv(sock, size - len(got))
    return got


async def test_messages_sent_in_one_turn_go_out_in_one_write() -> None:
    near, far = socket.socketpair()
    near.setblocking(False)
    far.setblocking(False)
    counting = CountingSocket(near)
    patient = _PatientSocket(counting, asyncio.get_running_loop())  # type: ignore[arg-type]
    messages = [f"message {i};".encode() for i in range(40)]
    assert all(patient.send(m) == len(m) for m in messages)  # taken at once, all of it
    assert counting.writes == 0
    expected = b"".join(messages)
    assert await received(far, len(expected)) == expected
    assert counting.writes == 1
    near.close()
    far.close()


async def test_a_full_socket_keeps_the_rest_in_order_for_a_later_write() -> None:
    near, far = socket.socketpair()
    near.setblocking(False)
    far.setblocking(False)
    counting = CountingSocket(near)
    counting.full = 2
    patient = _PatientSocket(counting, asyncio.get_running_loop())  # type: ignore[arg-type]
    patient.send(b"first;")
    await asyncio.sleep(0)  # the turn's write finds the socket full
    patient.send(b"second;")
    assert await received(far, 13) == b"first;second;"
    near.close()
    far.close()
