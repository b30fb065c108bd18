"""The words of consequential effects, in the UI's language: English, German, French, Spanish,
Italian, Portuguese, Dutch, Polish, Swedish, Danish/Norwegian and Czech.

Three kinds of words, per :class:`Effect`:

* **verbs** — an element named with one is consequential by itself ("Send", "Senden",
  "Envoyer", "Löschen", "Pay now", "Installieren");
* **context** — words that make a place consequential ("Subject", "Card number", "IBAN",
  "cannot be undone", "Password"): they turn a generic commit button into the effect;
* **drafts** — "Reply", "Forward", "Comment": they send only when they submit a text box next
  to them (else they open a draft);
* **harmless** phrases that hold a verb but act on the view ("Order by price", "Remove
  filter");
* **commit** words (shared) — buttons that carry out what their place is about ("OK",
  "Continue", "Weiter", "Valider", "Speichern"): consequential only in a consequential place.

Matching is whole-word, case- and accent-insensitive (``é`` matches ``e``): see
:func:`normalize` and :class:`WordSet`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from enum import StrEnum


class Effect(StrEnum):
    """The classes of consequential effects (what a person must say yes to)."""

    SEND = "send, post or publish"
    DELETE = "delete"
    PAY = "buy, pay or transfer"
    ACCOUNT = "change account or security settings"
    RUN = "run or install downloaded code"


def normalize(text: str) -> str:
    """Casefolded, accents dropped, whitespace collapsed ("Löschen" → "loschen")."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(plain.replace("ł", "l").replace("ø", "o").replace("ß", "ss").split())


class WordSet:
    """Whole-word (or whole-phrase) matching of a list of words in normalized text."""

    def __init__(self, words: Iterable[str]) -> None:
        self.words = tuple(dict.fromkeys(normalize(w) for w in words if w.strip()))
        alts = "|".join(re.escape(w) for w in sorted(self.words, key=len, reverse=True))
        self._pattern = re.compile(rf"(?<!\w)({alts})(?!\w)") if alts else None

    def without(self, text: str) -> str:
        """``text`` normalized, with every phrase of the set cut out."""
        plain = normalize(text)
        return self._pattern.sub(" · ", plain) if self._pattern is not None else plain

    def find(self, text: str) -> str | None:
        """The first word of the set found in ``text`` (normalized), or None."""
        if self._pattern is None or not text:
            return None
        m = self._pattern.search(normalize(text))
        return m.group(1) if m else None


VERBS: dict[Effect, tuple[str, ...]] = {
    Effect.SEND: (
        # en
        "send", "send now", "submit", "post", "post now", "publish", "tweet", "retweet",
        "repost", "share", "broadcast",
        # de
        "senden", "absenden", "abschicken", "versenden", "jetzt senden", "veröffentlichen",
        "posten", "teilen", "einreichen",
        "übermitteln",
        # fr
        "envoyer", "publier", "poster", "partager", "soumettre",
        # es
        "enviar", "publicar", "compartir",
        # it
        "invia", "inviare", "pubblica", "pubblicare", "condividi",
        # pt
        "partilhar", "compartilhar", "submeter",
        # nl
        "verzenden", "versturen", "verstuur", "verzend", "stuur", "publiceren", "plaatsen",
        "delen", "indienen",
        # pl
        "wyślij", "opublikuj", "udostępnij",
        # sv, da, no
        "skicka", "publicera", "dela", "publicer",
        # cs
        "odeslat", "publikovat",
    ),
    Effect.DELETE: (
        # en
        "delete", "delete permanently", "remove", "erase", "discard", "trash", "move to trash",
        "empty trash", "destroy", "wipe", "purge", "format disk", "format drive",
        "format volume", "format partition", "uninstall",
        # de
        "löschen", "endgültig löschen", "entfernen", "verwerfen", "in den papierkorb",
        "papierkorb leeren", "deinstallieren", "formatieren",
        # fr
        "supprimer", "effacer", "retirer", "mettre à la corbeille", "vider la corbeille",
        "désinstaller",
        # es
        "eliminar", "borrar", "suprimir", "quitar", "descartar", "vaciar papelera",
        "desinstalar",
        # it
        "elimina", "eliminare", "cancella", "rimuovi", "scarta", "svuota cestino",
        "disinstalla",
        # pt
        "excluir", "apagar", "remover", "esvaziar lixeira",
        # nl
        "verwijderen", "verwijder", "wissen", "weggooien", "prullenbak legen",
        # pl
        "usuń", "skasuj", "odinstaluj",
        # sv, da, no
        "ta bort", "radera", "töm papperskorgen", "slet", "slett",
        # cs
        "smazat", "odstranit",
    ),
    Effect.PAY: (
        # en
        "buy", "buy now", "pay", "pay now", "purchase", "order", "place order", "checkout",
        "check out", "transfer", "send money", "donate", "subscribe", "confirm payment",
        "confirm purchase", "add funds", "withdraw",
        # de
        "kaufen", "jetzt kaufen", "bezahlen", "zahlen", "jetzt bezahlen", "bestellen",
        "zahlungspflichtig bestellen", "kaufen und bezahlen", "überweisen", "spenden",
        "abonnieren", "zur kasse",
        # fr
        "acheter", "payer", "commander", "passer la commande", "valider la commande",
        "effectuer le virement", "virement", "faire un don", "s'abonner",
        # es
        "comprar", "pagar", "realizar pedido", "tramitar pedido", "transferir", "donar",
        "suscribirse",
        # it
        "acquista", "compra", "paga", "ordina", "effettua ordine", "trasferisci", "bonifico",
        "dona", "abbonati",
        # pt
        "encomendar", "finalizar compra", "doar", "assinar",
        # nl
        "kopen", "koop", "betalen", "betaal", "bestellen", "bestel", "afrekenen", "overmaken",
        "doneren",
        # pl
        "kup", "zapłać", "zamów", "przelej", "przelew",
        # sv, da, no
        "köp", "betala", "beställ", "överför", "køb", "betal", "kjøp", "bestill",
        # cs
        "koupit", "zaplatit", "objednat",
    ),
    Effect.ACCOUNT: (
        # en
        "change password", "reset password", "update password", "set password",
        "save password", "delete account", "close account", "deactivate account",
        "sign out of all devices", "enable two-factor", "disable two-factor", "revoke",
        "authorize", "grant access", "allow access",
        # de
        "passwort ändern", "kennwort ändern", "passwort zurücksetzen", "konto löschen",
        "autorisieren", "zugriff erlauben", "zugriff gewähren",
        # fr
        "changer le mot de passe", "modifier le mot de passe", "supprimer le compte",
        "autoriser", "révoquer",
        # es
        "cambiar contraseña", "restablecer contraseña", "eliminar cuenta", "autorizar",
        "revocar",
        # it
        "cambia password", "modifica password", "elimina account", "autorizza", "revoca",
        # pt
        "alterar senha", "redefinir senha", "excluir conta", "revogar",
        # nl
        "wachtwoord wijzigen", "account verwijderen", "autoriseren", "intrekken",
        # pl
        "zmień hasło", "usuń konto", "autoryzuj",
        # sv
        "byt lösenord", "ändra lösenord", "radera konto", "auktorisera",
    ),
    Effect.RUN: (
        # en
        "install", "install anyway", "run", "run anyway", "execute", "open anyway",
        "keep anyway", "trust and open", "mark as executable",
        # de
        "installieren", "trotzdem installieren", "ausführen", "trotzdem öffnen",
        "trotzdem behalten",
        # fr
        "installer", "exécuter", "ouvrir quand même",
        # es
        "instalar", "ejecutar", "abrir de todos modos",
        # it
        "installa", "esegui", "apri comunque",
        # pt
        "executar",
        # nl
        "installeren", "installeer", "uitvoeren", "toch openen",
        # pl
        "zainstaluj", "uruchom",
        # sv, da, no
        "installera", "kör", "installer",
        # cs
        "nainstalovat", "spustit",
    ),
}  # fmt: skip

CONTEXT: dict[Effect, tuple[str, ...]] = {
    Effect.SEND: (
        "compose", "new message", "write:", "reply to", "subject", "to:", "cc", "bcc",
        "recipients", "neue nachricht", "verfassen", "betreff", "empfänger",
        "nouveau message", "objet", "destinataire", "nuevo mensaje", "redactar", "asunto",
        "destinatario", "nuovo messaggio", "scrivi", "oggetto", "nova mensagem", "assunto",
        "nieuw bericht", "opstellen", "onderwerp", "nowa wiadomość", "temat", "nytt meddelande",
        "ämne",
    ),
    Effect.PAY: (
        "checkout", "payment", "pay with", "card number", "credit card", "debit card", "cvv",
        "cvc", "security code", "expiry", "expiration date", "iban", "bic", "billing address",
        "order summary", "amount", "recipient account", "kasse", "zahlung", "zahlungsart",
        "kartennummer", "kreditkarte", "prüfnummer", "betrag", "empfängerkonto", "paiement",
        "numéro de carte", "carte bancaire", "cryptogramme", "montant", "pago",
        "número de tarjeta", "tarjeta de crédito", "importe", "pagamento", "numero di carta",
        "carta di credito", "importo", "número do cartão", "cartão de crédito", "valor",
        "afrekenen", "betaling", "kaartnummer", "bedrag", "płatność", "numer karty", "kwota",
        "betalning", "kortnummer", "belopp",
    ),
    Effect.DELETE: (
        "cannot be undone", "can't be undone", "permanently", "will be deleted",
        "will be removed", "move to trash", "kann nicht rückgängig", "endgültig",
        "dauerhaft", "wird gelöscht", "irréversible", "définitivement", "sera supprimé",
        "no se puede deshacer", "permanentemente", "se eliminará", "non può essere annullata",
        "definitivamente", "verrà eliminato", "não pode ser desfeita", "será excluído",
        "kan niet ongedaan", "permanent", "wordt verwijderd", "nie można cofnąć", "trwale",
        "kan inte ångras", "kommer att raderas",
    ),
    Effect.ACCOUNT: (
        "password", "new password", "current password", "security", "two-factor", "2fa",
        "two-step", "recovery", "account settings", "privacy", "permissions", "forwarding",
        "forward all mail", "mail forwarding", "weiterleitung", "transfert du courrier",
        "reenvío", "inoltro", "doorsturen van e-mail", "passwort",
        "kennwort", "sicherheit", "kontoeinstellungen", "berechtigungen", "mot de passe",
        "sécurité", "paramètres du compte", "contraseña", "seguridad", "configuración de la cuenta",
        "sicurezza", "impostazioni account", "senha", "segurança", "wachtwoord", "beveiliging",
        "hasło", "bezpieczeństwo", "lösenord", "säkerhet",
    ),
    Effect.RUN: (
        "unknown publisher", "untrusted", "unverified", "downloaded from the internet",
        "executable", "run this file", "install this", "software installation", "terminal",
        "unbekannter herausgeber", "nicht vertrauenswürdig", "ausführbar",
        "éditeur inconnu", "editor desconocido", "editore sconosciuto", "onbekende uitgever",
    ),
}  # fmt: skip

COMMIT: tuple[str, ...] = (
    # en
    "ok", "okay", "yes", "confirm", "continue", "proceed", "apply", "save", "save changes",
    "accept", "agree", "i agree", "allow", "approve", "finish", "done", "sign", "go",
    # de
    "ja", "bestätigen", "weiter", "fortfahren", "übernehmen", "anwenden", "speichern",
    "annehmen", "akzeptieren", "zustimmen", "erlauben", "fertig", "unterschreiben",
    # fr
    "oui", "confirmer", "continuer", "valider", "appliquer", "enregistrer", "accepter",
    "terminer", "signer",
    # es, pt, it
    "sí", "si", "sim", "confirmar", "continuar", "aplicar", "guardar", "salvar", "aceptar",
    "aceitar", "permitir", "conferma", "continua", "applica", "salva", "accetta", "consenti",
    "firmar", "firma", "assinar",
    # nl
    "bevestigen", "doorgaan", "toepassen", "opslaan", "akkoord", "toestaan", "ondertekenen",
    # pl
    "tak", "potwierdź", "dalej", "zastosuj", "zapisz", "akceptuj", "zezwól",
    # sv, da, no
    "bekräfta", "fortsätt", "verkställ", "spara", "godkänn", "tillåt", "bekræft", "fortsæt",
    "gem", "bekreft", "fortsett", "lagre",
)  # fmt: skip

#: Names of text fields where a person writes a message (Enter sends it in chat apps).
MESSAGE_FIELDS: tuple[str, ...] = (
    "message", "write a message", "type a message", "chat", "comment", "reply", "nachricht",
    "kommentar", "antwort", "message", "commentaire", "réponse", "mensaje", "comentario",
    "messaggio", "commento", "mensagem", "comentário", "bericht", "reactie", "wiadomość",
    "komentarz", "meddelande", "kommentar",
)  # fmt: skip

#: Verbs that send only when they submit what was written next to them (a comment box's
#: "Reply"); a mail app's toolbar "Reply" or "Forward" opens a draft, which sends nothing.
DRAFTS: tuple[str, ...] = (
    "reply", "reply all", "forward", "comment", "antworten", "allen antworten",
    "weiterleiten", "kommentieren", "répondre", "répondre à tous", "transférer", "commenter",
    "responder", "responder a todos", "reenviar", "comentar", "rispondi", "rispondi a tutti",
    "inoltra", "commenta", "encaminhar", "beantwoorden", "doorsturen", "reageren",
    "odpowiedz", "przekaż dalej", "skomentuj", "svara", "vidarebefordra", "kommentera", "svar",
    "odpovědět", "přeposlat",
)  # fmt: skip

#: Phrases that hold a verb but act on the view, not on data ("Order by price", "Remove
#: filter"): a verb inside one of them does not count.
HARMLESS: tuple[str, ...] = (
    "order by", "sort order", "order history", "order status", "order details",
    "order number", "track order", "remove filter", "remove filters", "remove all filters",
    "delete filter", "clear filters", "remove formatting", "remove highlight",
    "remove from cart", "remove from basket", "remove sort", "post code", "postcode",
    "sortieren nach", "filter entfernen", "alle filter entfernen", "bestellstatus",
    "trier par", "supprimer le filtre", "supprimer les filtres", "retirer le filtre",
    "ordenar por", "eliminar filtro", "eliminar filtros", "quitar filtro", "quitar filtros",
    "borrar filtros", "ordina per", "rimuovi filtro", "rimuovi filtri", "remover filtro",
    "remover filtros", "sorteren op", "filter verwijderen", "filters verwijderen",
    "sortuj według", "usuń filtr", "usuń filtry", "sortera efter", "ta bort filter",
)  # fmt: skip

#: Names of search fields (what Enter there fires is a search).
SEARCH_FIELDS: tuple[str, ...] = (
    "search", "find", "filter", "suche", "suchen", "finden", "rechercher", "recherche",
    "buscar", "búsqueda", "cerca", "ricerca", "pesquisar", "zoeken", "szukaj", "sök", "søg",
    "søk", "hledat",
)  # fmt: skip

VERB_SETS: dict[Effect, WordSet] = {effect: WordSet(words) for effect, words in VERBS.items()}
CONTEXT_SETS: dict[Effect, WordSet] = {e: WordSet(words) for e, words in CONTEXT.items()}
COMMIT_SET = WordSet(COMMIT)
DRAFT_SET = WordSet(DRAFTS)
HARMLESS_SET = WordSet(HARMLESS)
SEARCH_SET = WordSet(SEARCH_FIELDS)
MESSAGE_SET = WordSet(MESSAGE_FIELDS)
