"""The console's confirmation cards are never declined unseen (deskpilot.serve.approver): the
time to answer counts from the moment a page showed the banner; until then a card waits while
a page is connected, and is declined only when no page was there for its whole timeout. A yes
for the task is passed on as such, and a session's grants can be listed and revoked.
"""

from __future__ import annotations

import asyncio

import pytest

from deskpilot.errors import ActionDeclined
from deskpilot.policy import ApprovalRequest, Risk, Scope
from deskpilot.policy.tasks import TaskGrants
from deskpilot.serve.approver import Answer, Confirmations, ConsoleApprover


def request(call_id: str, offer: str = "") -> ApprovalRequest:
    return ApprovalRequest(
        "perform",
        {"elementID": "e1"},
        Risk.CONSEQUENTIAL,
        "Send",
        call_id,
        sentence='Click "Send" in “Postbox”',
        offer=offer,
    )


async def opened(cards: Confirmations, session: str) -> None:
    while not cards.of(session):
        await asyncio.sleep(0)


def test_an_unseen_card_outlives_its_timeout_while_a_page_is_connected() -> None:
    async def go() -> None:
        cards = Confirmations(lambda s: None)
        approver = ConsoleApprover("s1", cards, lambda: True, timeout=0.05)
        asking = asyncio.create_task(approver.approve(request("c1")))
        await opened(cards, "s1")
        (card,) = cards.of("s1")
        assert card.card()["sentence"].startswith('Click "Send"') and card.deadline == 0
        await asyncio.sleep(0.3)  # six timeouts: still waiting, nobody has seen it
        assert not asking.done()
        assert cards.seen("s1", "c1") == Answer.ANSWERED and card.deadline > 0
        with pytest.raises(ActionDeclined, match=r"within 0\.05 seconds"):
            await asking

    asyncio.run(go())


def test_a_card_no_page_was_there_to_show_is_declined_saying_so() -> None:
    async def go() -> None:
        cards = Confirmations(lambda s: None)
        pages = [True]
        approver = ConsoleApprover("s1", cards, lambda: pages[0], timeout=0.1)
        asking = asyncio.create_task(approver.approve(request("c1")))
        await opened(cards, "s1")
        pages[0] = False  # the last page closed before it showed the card
        with pytest.raises(ActionDeclined, match="before one showed the request"):
            await asking
        assert cards.of("s1") == []

    asyncio.run(go())


def test_a_yes_for_the_task_is_passed_on_only_when_offered() -> None:
    async def go() -> None:
        cards = Confirmations(lambda s: None)
        approver = ConsoleApprover("s1", cards, lambda: True, timeout=5)
        asking = asyncio.create_task(approver.approve(request("c1", offer="send in this window")))
        await opened(cards, "s1")
        cards.answer("s1", "c1", True, scope="task")
        assert await asking == Scope.TASK
        asking = asyncio.create_task(approver.approve(request("c2")))
        await opened(cards, "s1")
        cards.answer("s1", "c2", True, scope="task")  # nothing offered: this once
        assert await asking is True

    asyncio.run(go())


def test_a_sessions_grants_are_listed_and_revoked() -> None:
    cards = Confirmations(lambda s: None)
    ledger = TaskGrants()
    recorded: list[str] = []
    ledger.begin(
        "Delete the Globex order", source="console", record=lambda kind, data: recorded.append(kind)
    )
    cards.track("s1", ledger)
    (grant,) = cards.grants_of("s1")
    assert grant["acts"] == ["delete"] and grant["objects"] == ["Globex"]
    assert cards.revoke("s1", grant["id"]) is True
    assert cards.grants_of("s1") == [] and cards.revoke("s1", grant["id"]) is False
    assert recorded == ["policy.grants", "grant.revoked"]
