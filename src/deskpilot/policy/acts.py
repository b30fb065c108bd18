"""Acts: the kinds of consequential effect, finer than an :class:`Effect` class.

An act is what a person would name in a goal ("submit", "publish", "delete", "buy",
"transfer"…); each belongs to one effect class. Every built-in verb of the UI vocabulary
(:data:`deskpilot.policy.vocabulary.VERBS` and the draft verbs) belongs to exactly one act
(:func:`act_of`): "Senden" and "Submit" are ``submit``, "Post comment" is ``publish``,
"Löschen" is ``delete``, "Jetzt kaufen" is ``buy``. A finding of the judge carries its act, and
a grant names the acts it allows (:mod:`deskpilot.policy.grants`).

Acts that no word names:

* ``place`` — a generic commit button ("OK", "Continue") judged by its place (a checkout
  form, a dialog that says it cannot be undone): any act of the place's effect class covers it;
* ``secret`` — a secret put into a password field;
* ``unknown`` — Enter in a window that cannot be read: nothing covers it.
"""

from __future__ import annotations

from deskpilot.policy.vocabulary import Effect, WordSet, normalize

#: The acts of every effect class, each with the UI's words for it (all languages).
ACT_WORDS: dict[str, tuple[Effect, tuple[str, ...]]] = {
    "submit": (Effect.SEND, (
        "send", "send now", "submit", "senden", "absenden", "abschicken", "versenden",
        "jetzt senden", "einreichen", "übermitteln", "envoyer", "soumettre", "enviar", "invia",
        "inviare", "submeter", "verzenden", "versturen", "verstuur", "verzend", "stuur",
        "indienen", "wyślij", "skicka", "odeslat",
    )),
    "publish": (Effect.SEND, (
        "post", "post now", "publish", "tweet", "retweet", "repost", "broadcast",
        "veröffentlichen", "posten", "publier", "poster", "publicar", "pubblica", "pubblicare",
        "publiceren", "plaatsen", "opublikuj", "publicera", "publicer", "publikovat",
    )),
    "share": (Effect.SEND, (
        "share", "teilen", "partager", "compartir", "condividi", "partilhar", "compartilhar",
        "delen", "udostępnij", "dela",
    )),
    "reply": (Effect.SEND, (
        "reply", "reply all", "antworten", "allen antworten", "répondre", "répondre à tous",
        "responder", "responder a todos", "rispondi", "rispondi a tutti", "beantwoorden",
        "odpowiedz", "svara", "svar", "odpovědět",
    )),
    "forward": (Effect.SEND, (
        "forward", "weiterleiten", "transférer", "reenviar", "inoltra", "encaminhar",
        "doorsturen", "przekaż dalej", "vidarebefordra", "přeposlat",
    )),
    "comment": (Effect.SEND, (
        "comment", "kommentieren", "commenter", "comentar", "commenta", "reageren",
        "skomentuj", "kommentera",
    )),
    "uninstall": (Effect.DELETE, (
        "uninstall", "deinstallieren", "désinstaller", "desinstalar", "disinstalla",
        "odinstaluj",
    )),
    "format": (Effect.DELETE, (
        "format disk", "format drive", "format volume", "format partition", "formatieren",
    )),
    "delete": (Effect.DELETE, ()),  # every other verb of the class
    "buy": (Effect.PAY, (
        "buy", "buy now", "purchase", "order", "place order", "checkout", "check out",
        "confirm purchase", "kaufen", "jetzt kaufen", "bestellen", "zahlungspflichtig bestellen",
        "kaufen und bezahlen", "zur kasse", "acheter", "commander", "passer la commande",
        "valider la commande", "comprar", "realizar pedido", "tramitar pedido", "acquista",
        "compra", "ordina", "effettua ordine", "encomendar", "finalizar compra", "kopen",
        "koop", "bestel", "afrekenen", "kup", "zamów", "köp", "beställ", "køb", "kjøp",
        "bestill", "koupit", "objednat",
    )),
    "transfer": (Effect.PAY, (
        "transfer", "send money", "überweisen", "effectuer le virement", "virement",
        "transferir", "trasferisci", "bonifico", "overmaken", "przelej", "przelew", "överför",
    )),
    "donate": (Effect.PAY, (
        "donate", "spenden", "faire un don", "donar", "dona", "doar", "doneren",
    )),
    "subscribe": (Effect.PAY, (
        "subscribe", "abonnieren", "s'abonner", "suscribirse", "abbonati", "assinar",
    )),
    "funds": (Effect.PAY, ("add funds", "withdraw")),
    "pay": (Effect.PAY, ()),  # every other verb of the class ("Pay now", "Bezahlen")
    "close account": (Effect.ACCOUNT, (
        "delete account", "close account", "deactivate account", "konto löschen",
        "supprimer le compte", "eliminar cuenta", "elimina account", "excluir conta",
        "account verwijderen", "usuń konto", "radera konto",
    )),
    "access": (Effect.ACCOUNT, (
        "revoke", "authorize", "grant access", "allow access", "autorisieren",
        "zugriff erlauben", "zugriff gewähren", "autoriser", "révoquer", "autorizar", "revocar",
        "autorizza", "revoca", "revogar", "autoriseren", "intrekken", "autoryzuj", "auktorisera",
    )),
    "two-factor": (Effect.ACCOUNT, ("enable two-factor", "disable two-factor")),
    "sign out": (Effect.ACCOUNT, ("sign out of all devices",)),
    "password": (Effect.ACCOUNT, ()),  # changing a password, and a secret typed
    "install": (Effect.RUN, (
        "install", "install anyway", "installieren", "trotzdem installieren", "installer",
        "instalar", "installa", "installeren", "installeer", "zainstaluj", "installera",
        "nainstalovat",
    )),
    "run": (Effect.RUN, ()),  # every other verb of the class
}  # fmt: skip

#: Acts no UI word names (see the module docstring).
PLACE, SECRET, UNKNOWN = "place", "secret", "unknown"

_SETS = {act: WordSet(words) for act, (_effect, words) in ACT_WORDS.items() if words}
#: The act taking every verb of a class that no other act of it lists.
_REST = {effect: act for act, (effect, words) in ACT_WORDS.items() if not words}


def effect_of(act: str) -> Effect | None:
    found = ACT_WORDS.get(act)
    return found[0] if found is not None else None


def act_of(effect: str, word: str) -> str:
    """The act of a UI verb ``word`` (one entry of the vocabulary) found for ``effect`` (an
    :class:`Effect` value)."""
    plain = normalize(word)
    for act, (cls, _words) in ACT_WORDS.items():
        words = _SETS.get(act)
        if cls.value == effect and words is not None and plain in words.words:
            return act
    for cls, act in _REST.items():
        if cls.value == effect:
            return act
    return UNKNOWN
