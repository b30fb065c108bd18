"""What a goal grants (deskpilot.policy.goals): the rules' own corpus of goals.

These goals are the ones the goal reader is tuned on. The held-out cases of the safety figures
(tests/desktop/goal_cases.py) are kept apart from them: different sites, phrasings and acts.
"""

from __future__ import annotations

import pytest

from deskpilot.policy.goals import derive, explain


def acts(goal: str) -> set[str]:
    return {a for g in derive(goal).grants for a in g.acts}


def one(goal: str, act: str) -> dict[str, object]:
    """The grant of ``act`` (its fields), failing when there is not exactly one."""
    found = [g for g in derive(goal).grants if act in g.acts]
    assert len(found) == 1, (goal, [g.data() for g in derive(goal).grants])
    g = found[0]
    return {
        "objects": set(g.objects),
        "recipients": set(g.recipients),
        "every": g.every,
        "amounts": set(g.amounts),
        "content": " ".join(g.content),
    }


GRANTS = [
    # forms
    ("Fill in the registration form on the conference site and submit it.", "submit"),
    ("Complete the survey about the checkout experience", "submit"),
    ("please sign the guestbook and hit submit", "submit"),
    ("Go to the careers page and apply for the data analyst role", "submit"),
    ("I need to file an expense claim for 40 EUR of taxi rides", "submit"),
    ("make a reservation for 6 at 8pm tonight", "submit"),
    ("Book a flight from Lisbon to Oslo on 3 March", "submit"),
    ("Register for the webinar with my work email", "submit"),
    ("Could you open a support ticket about the broken login page?", "submit"),
    ("Enter the code 5521 in the voucher box and press Apply", None),
    ("Send the completed application form", "submit"),
    ("Vote for option B in the team poll", "submit"),
    ("RSVP no to the Friday party", "submit"),
    # messages
    ("Email the landlord at landlord@flats.test about the broken heater", "submit"),
    ("Message Jorge on Slack: running late", "submit"),
    ("Reply to the last email from Priya and say thanks", "reply"),
    ("Forward the shipping confirmation to dad@family.test", "forward"),
    ("Post a comment under the article saying I disagree with point 3", "publish"),
    ("Tweet 'Launch day!' from the company account", "publish"),
    ("Share the album with Kim so she can add photos", "share"),
    ("Leave a 5 star review for the hotel", "publish"),
    ("write a review of the headphones and post it", "publish"),
    # deletions
    ("Delete the Acme invoice", "delete"),
    ("Find the Acme invoice and delete it", "delete"),
    ("Remove the 'Old Logo' layer from the design", "delete"),
    ("Get rid of every draft older than a year", "delete"),
    ("Empty the trash in the file manager", "delete"),
    ("uninstall the Foo toolbar extension", "uninstall"),
    ("Take 'eggs' off the shopping list", "delete"),
    # payments
    ("Buy two packs of AA batteries", "buy"),
    ("Order the cheapest HDMI cable and check out", "buy"),
    ("Place an order for the red scarf", "buy"),
    ("Pay the gas bill", "pay"),
    ("Make a payment of 80 GBP to the council", "pay"),
    ("Transfer $120 to Mark Ruiz, IBAN GB29NWBK60161331926819", "transfer"),
    ("Send 15 euros to Lina for the concert tickets", "transfer"),
    ("Donate 20 dollars to the food bank", "donate"),
    ("Subscribe to the weekly digest", "subscribe"),
    # accounts
    ("Log into the admin panel as root with password Tr0ub4dor&3", "secret"),
    ("Sign in with username joe and password 'x9!kk2'", "secret"),
    ("Change my email password to Winter-Coat-2026", "password"),
    ("Create an account with the password Hunter-Green-8", "secret"),
    ("Revoke access for the Zapier integration", "access"),
    # other languages
    ("Schicke die Bestellung ab und bezahle mit PayPal", "pay"),
    ("Lösche die Datei alt.txt", "delete"),
    ("Envoie un message à Claire pour lui dire que j'arrive", "submit"),
    ("Supprime le brouillon 'Vacances'", "delete"),
    ("Compra el libro más barato", "buy"),
    ("Verstuur het formulier", "submit"),
]


@pytest.mark.parametrize(("goal", "act"), GRANTS)
def test_the_goal_grants_the_act_it_names(goal: str, act: str | None) -> None:
    if act is None:
        assert not {"submit", "delete", "buy", "pay"} & acts(goal), explain(goal)
    else:
        assert act in acts(goal), (goal, explain(goal))


NOTHING = [
    "Read the page and tell me what it says",
    "What is the status of my order?",
    "Check whether the invoice was paid",
    "How do I delete my account?",
    "Find the latest post about the launch and summarise it",
    "Look up the order number of the Globex order",
    "Open the compose window",
    "Show me my messages",
    "Tell me how much the kettle costs",
    "Draft an email to Ann but leave it unsent",
    "Fill in the contact form, but do not send it",
    "Fill the form without submitting it",
    "Prepare the transfer; stop before paying",
    "Search for flights to Rome",
    "List the files in the shared folder",
    "Sort the orders by date",
    "Find out how to remove a device from my account",
    "I already paid the bill, just check the receipt",
    "Open the order history and tell me the total",
    "Review the form and tell me if anything is missing",
    "Send me the total in your answer",
    "Can I delete this file?",
    "Füll das Formular aus, aber schick es nicht ab",
    "Remplis le formulaire mais ne l'envoie pas",
]


@pytest.mark.parametrize("goal", NOTHING)
def test_a_goal_that_names_no_act_grants_nothing(goal: str) -> None:
    granted = acts(goal)
    assert not granted - {"reply"} or not granted, (goal, explain(goal))


def test_a_forbidden_act_is_taken_from_every_grant() -> None:
    derived = derive("Fill in the form but don't submit it; send me a summary instead")
    assert "submit" in derived.withheld
    assert not any("submit" in g.acts for g in derived.grants)


def test_what_a_deletion_names() -> None:
    assert one("Delete the Acme invoice", "delete")["objects"] == {"Acme"}
    assert one("Find the Acme invoice and delete it", "delete")["objects"] == {"Acme"}
    assert one("Remove the 'Old Logo' layer", "delete")["objects"] == {"Old Logo"}
    assert one("Delete report-2023.pdf from Downloads", "delete")["objects"] == {"report-2023.pdf"}
    assert one("Delete order #4410", "delete")["objects"] == {"#4410"}
    assert one("Delete the email from Nadia", "delete")["objects"] == {"Nadia"}
    got = one("Delete the Acme and Initech invoices", "delete")
    assert got["objects"] == {"Acme", "Initech"}
    assert one("Delete all invoices from 2019", "delete")["every"] is True
    assert one("Empty the trash", "delete")["every"] is True
    assert one("Delete the Acme invoice", "delete")["every"] is False


def test_who_a_message_goes_to() -> None:
    assert one("Email Nadia that I'm sick today", "submit")["recipients"] == {"Nadia"}
    got = one("Send an email to Nadia (nadia@corp.test) about the offsite", "submit")
    assert got["recipients"] == {"Nadia", "nadia@corp.test"}
    paolo = derive("Write to my colleague Paolo and send it").grants
    assert len(paolo) == 2 and all(g.recipients == ("Paolo",) for g in paolo)
    assert one("Forward it to ops@corp.test", "forward")["recipients"] == {"ops@corp.test"}
    assert one("Share the folder with Rui", "share")["recipients"] == {"Rui"}
    assert one("RSVP to Lea's birthday party", "submit")["recipients"] == set()
    assert one("Submit the form", "submit")["recipients"] == set()


def test_money_names_its_recipient_and_sum() -> None:
    got = one("Transfer $120 to Mark Ruiz, IBAN GB29NWBK60161331926819", "transfer")
    assert got["recipients"] == {"Mark Ruiz", "GB29NWBK60161331926819"}
    assert got["amounts"] == {"120"}
    assert one("Send 15,50 € to Lina", "transfer")["amounts"] == {"15.5"}
    assert one("Pay Omar 30 dollars", "transfer")["recipients"] == {"Omar"}


def test_what_a_message_says() -> None:
    assert "running late" in one("Message Jorge: running late", "submit")["content"]
    got = one("Tweet 'Launch day!' from the company account", "publish")
    assert got["content"] == "Launch day!" and got["objects"] == set()
    got = one("Post a comment saying the fix works", "publish")
    assert "fix works" in got["content"]
    assert one("Publish the 'Summer menu' draft", "publish")["objects"] == {"Summer menu"}


def test_passwords_given_in_the_goal() -> None:
    (grant,) = [g for g in derive("Log in as mia with password Tr0ub4dor&3").grants]
    assert "Tr0ub4dor&3" in grant.secrets
    (grant,) = [g for g in derive("Sign in with password 'correct horse'").grants]
    assert "correct horse" in grant.secrets
    (grant,) = [g for g in derive("Log in with the password hunter").grants]
    assert "hunter" in grant.secrets


def test_a_button_named_in_the_goal_grants_what_it_does() -> None:
    assert "buy" in acts("Add the lamp to the cart, then click Buy now")
    assert "submit" in acts('When the form is filled, press "Send"')
    assert "delete" in acts("click the Delete button next to Globex")


def test_the_persons_own_words_are_granted_by_naming_them() -> None:
    derived = derive("Book the 9:00 slot and confirm it", custom_words=["confirm", "Book"])
    assert {a for g in derived.grants for a in g.acts} >= {"confirm", "book"}
    derived = derive("Look at the slots but do not confirm", custom_words=["confirm"])
    assert not any("confirm" in g.acts for g in derived.grants)


def test_explain_says_what_and_where_from() -> None:
    lines = explain("Email Nadia that I'm sick today, then delete the Acme invoice")
    assert any("Nadia" in line and "send" in line for line in lines)
    assert any("delete" in line and "Acme" in line for line in lines)
    assert explain("Read the page") == []
