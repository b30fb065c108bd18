"""What a person's goal grants: the acts it names, on what it names (:func:`derive`).

The goal is read as people write one ("Fill in the booking form and submit it", "Email Ann
(ann@example.test) that the report is ready", "Delete the Globex order", "Buy the blue kettle
with my saved card", "Log in as dana.k with the password Sunflower-19"):

* it is cut into clauses (at ``.``, ``;``, ``,``, dashes, "and", "then", "but" and their
  German, French, Spanish, Italian and Dutch kin), quoted text kept whole;
* in each clause a verb of an act counts where a verb is given as an instruction: at the
  clause's start (after "please", "then", "can you", an adverb…), after "to" ("I need to
  transfer…"), or as a participle after "be"/"get" ("make sure it gets sent"); "the order" or
  "my latest post" are nouns, and "how to delete" a question;
* a verb under a negation in its clause ("but don't submit it", "without sending", "before
  paying", "nicht", "pas") grants nothing, and takes its act from every other grant too;
* what the verb acts on comes from the rest of the clause: names (capitalised words, quoted
  text, file names, numbers with 3 or more digits: "the Globex order", "'buy milk'",
  "draft-old.txt", "invoice 4471"), recipients (e-mail addresses, IBANs, a name after "to",
  "with" or after "email"/"message"/"tell"), sums with a currency, the message to send (after
  "saying", "that", "asking", a colon, or quoted after "post"), and passwords given (quoted, or
  after "password"); "it" and "them" stand for what the clause before named; "all" or
  "every" lets it act on all of them;
* light verbs with a noun count too: "place an order", "make a payment", "leave a comment",
  "complete the form", "finish the checkout"; and a button named in the goal ("click Pay
  now") grants what the judge says that button does.

Everything here is pure: text in, :class:`~deskpilot.policy.grants.Grant` s out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from deskpilot.policy.acts import SECRET
from deskpilot.policy.grants import Grant, number
from deskpilot.policy.vocabulary import VERB_SETS, normalize

SEND = ("submit", "reply", "forward")
POST = ("publish", "comment", "submit", "reply")
BUY = ("buy", "pay")
MONEY = ("transfer", "pay", "submit")
JOIN = ("submit", "subscribe", SECRET)

#: Verbs of a goal (base forms; English inflections are made) and the acts each grants.
VERBS_EN: dict[str, tuple[str, ...]] = {
    "send": SEND, "email": SEND, "e-mail": SEND, "mail": SEND, "message": SEND,
    "text": SEND, "dm": SEND, "ping": SEND, "cc": SEND, "notify": SEND, "inform": SEND,
    "tell": SEND, "remind": SEND, "contact": ("submit",), "reply": ("reply", "submit", "comment"),
    "respond": ("reply", "submit", "comment"), "answer": ("reply", "submit", "comment"),
    "forward": ("forward", "submit"), "invite": ("submit", "share"),
    "submit": ("submit",), "apply": ("submit",), "book": ("submit",), "reserve": ("submit",),
    "rsvp": ("submit",), "register": JOIN, "enrol": JOIN, "enroll": JOIN, "join": JOIN,
    "vote": ("submit",), "request": ("submit",), "report": ("submit",), "rate": ("submit",),
    "schedule": ("submit",), "file": ("submit",), "lodge": ("submit",),
    "post": POST, "publish": POST, "tweet": POST, "repost": POST, "retweet": POST,
    "comment": POST, "share": ("share", "submit"), "subscribe": ("subscribe", "submit"),
    "delete": ("delete",), "remove": ("delete",), "erase": ("delete",), "trash": ("delete",),
    "discard": ("delete",), "destroy": ("delete",), "wipe": ("delete",), "purge": ("delete",),
    "clear": ("delete",), "empty": ("delete",), "uninstall": ("uninstall", "delete"),
    "format": ("format",),
    "buy": BUY, "purchase": BUY, "order": BUY, "checkout": BUY, "pay": ("pay", "buy"),
    "settle": ("pay",), "transfer": MONEY, "wire": MONEY, "donate": ("donate", "pay"),
    "withdraw": ("funds",), "authorize": ("access",), "authorise": ("access",),
    "revoke": ("access",), "install": ("install",), "run": ("run",), "execute": ("run",),
}  # fmt: skip

#: Phrases of more than one word (each word's English inflections are made for the first).
PHRASES_EN: dict[str, tuple[str, ...]] = {
    "send off": ("submit",), "send in": ("submit",), "hand in": ("submit",),
    "turn in": ("submit",), "reach out to": SEND, "get in touch with": SEND,
    "write to": SEND, "write back": SEND, "sign up": JOIN, "sign me up": JOIN,
    "log in": (SECRET,), "log me in": (SECRET,), "log on": (SECRET,), "login": (SECRET,),
    "log into": (SECRET,), "sign into": (SECRET,), "sign in": (SECRET,),
    "sign me in": (SECRET,), "signin": (SECRET,),
    "check out": BUY, "get rid of": ("delete",), "throw away": ("delete",),
    "throw out": ("delete",), "dispose of": ("delete",), "take off": ("delete",),
    "cross off": ("delete",), "move to trash": ("delete",), "move to the trash": ("delete",),
    "add funds": ("funds",), "top up": ("funds",), "send money": MONEY,
    "change password": ("password", SECRET), "reset password": ("password", SECRET),
    "update password": ("password", SECRET), "set password": ("password", SECRET),
    "grant access": ("access",), "allow access": ("access",),
    "close account": ("close account",), "delete account": ("close account",),
    "deactivate account": ("close account",),
    "enable two-factor": ("two-factor",), "disable two-factor": ("two-factor",),
    "turn on two-factor": ("two-factor",), "turn off two-factor": ("two-factor",),
    "sign out of all devices": ("sign out",), "log out everywhere": ("sign out",),
}  # fmt: skip

#: Verbs of other languages, as people write them in a goal (infinitive and imperatives).
VERBS_OTHER: dict[str, tuple[str, ...]] = {
    # de
    "senden": SEND, "sende": SEND, "sendet": SEND, "schicken": SEND, "schick": SEND,
    "schicke": SEND, "abschicken": ("submit",), "absenden": ("submit",), "versenden": SEND,
    "antworten": ("reply", "submit"), "antworte": ("reply", "submit"),
    "weiterleiten": ("forward", "submit"), "einreichen": ("submit",), "buchen": ("submit",),
    "buche": ("submit",), "reservieren": ("submit",), "reserviere": ("submit",),
    "anmelden": JOIN, "melde": JOIN, "registrieren": JOIN, "registriere": JOIN,
    "veröffentlichen": POST, "veröffentliche": POST, "posten": POST, "poste": POST,
    "teilen": ("share", "submit"), "teile": ("share", "submit"), "löschen": ("delete",),
    "lösche": ("delete",), "entfernen": ("delete",), "entferne": ("delete",),
    "kaufen": BUY, "kaufe": BUY, "bestellen": BUY, "bestelle": BUY, "bezahlen": ("pay", "buy"),
    "bezahle": ("pay", "buy"), "zahlen": ("pay", "buy"), "zahle": ("pay", "buy"),
    "überweisen": MONEY, "überweise": MONEY, "spenden": ("donate", "pay"),
    "spende": ("donate", "pay"),
    # fr
    "envoyer": SEND, "envoie": SEND, "envoyez": SEND, "écrire": SEND, "écris": SEND,
    "écrivez": SEND, "soumettre": ("submit",), "soumets": ("submit",),
    "soumettez": ("submit",), "répondre": ("reply", "submit"), "réponds": ("reply", "submit"),
    "répondez": ("reply", "submit"), "transférer": ("forward", "submit"),
    "transfère": ("forward", "submit"), "réserver": ("submit",), "réserve": ("submit",),
    "réservez": ("submit",), "publier": POST, "publie": POST, "publiez": POST,
    "partager": ("share", "submit"), "partage": ("share", "submit"),
    "supprimer": ("delete",), "supprime": ("delete",), "supprimez": ("delete",),
    "effacer": ("delete",), "efface": ("delete",), "acheter": BUY, "achète": BUY,
    "achetez": BUY, "commander": BUY, "commande": BUY, "commandez": BUY, "payer": ("pay", "buy"),
    "paie": ("pay", "buy"), "paye": ("pay", "buy"), "payez": ("pay", "buy"),
    "virer": MONEY, "vire": MONEY, "inscris": JOIN, "inscrire": JOIN,
    # es
    "enviar": SEND, "envía": SEND, "envia": SEND, "envíe": SEND, "responder": ("reply", "submit"),
    "responde": ("reply", "submit"), "reservar": ("submit",), "reserva": ("submit",),
    "publicar": POST, "publica": POST, "compartir": ("share", "submit"),
    "comparte": ("share", "submit"), "borrar": ("delete",), "borra": ("delete",),
    "eliminar": ("delete",), "elimina": ("delete",), "comprar": BUY, "compra": BUY,
    "pagar": ("pay", "buy"), "paga": ("pay", "buy"), "transferir": MONEY, "transfiere": MONEY,
    # it
    "inviare": SEND, "invia": SEND, "rispondi": ("reply", "submit"),
    "pubblicare": POST, "pubblica": POST, "cancellare": ("delete",), "cancella": ("delete",),
    "acquistare": BUY, "acquista": BUY, "pagare": ("pay", "buy"),
    # nl
    "verzenden": SEND, "verstuur": SEND, "versturen": SEND, "stuur": SEND, "sturen": SEND,
    "verwijder": ("delete",), "verwijderen": ("delete",), "koop": BUY, "kopen": BUY,
    "bestel": BUY, "betaal": ("pay", "buy"), "betalen": ("pay", "buy"),
}  # fmt: skip

#: Light verbs that grant with the noun they take ("place an order", "leave a comment").
LIGHT = frozenset({
    "make", "place", "leave", "write", "add", "complete", "finish", "confirm", "finalize",
    "finalise", "do", "put", "give", "drop", "create", "open", "raise",
})  # fmt: skip
NOUNS: dict[str, tuple[str, ...]] = {
    "form": ("submit",), "survey": ("submit",), "questionnaire": ("submit",),
    "application": ("submit",), "registration": JOIN, "signup": JOIN, "sign-up": JOIN,
    "request": ("submit",), "ticket": ("submit",), "complaint": ("submit",),
    "claim": ("submit",), "feedback": POST, "rsvp": ("submit",), "booking": ("submit",),
    "reservation": ("submit",), "appointment": ("submit",), "report": ("submit",),
    "comment": POST, "reply": POST, "review": POST, "note": SEND, "rating": POST,
    "email": SEND, "e-mail": SEND, "message": SEND, "letter": SEND, "order": BUY,
    "purchase": BUY, "checkout": BUY, "check-out": BUY, "payment": ("pay", "transfer"),
    "transfer": MONEY, "donation": ("donate", "pay"), "account": JOIN, "post": POST,
}  # fmt: skip
#: Nouns a light verb may not make into acts with "open" or "create" (opening a form is not
#: sending it).
OPENERS = frozenset({"open", "create", "write", "add", "raise"})
OPENABLE = frozenset({"ticket", "account", "comment", "review", "reply", "email", "e-mail",
                      "message", "letter", "note", "post", "rating", "feedback", "request",
                      "complaint", "claim", "report"})  # fmt: skip

#: Verbs whose direct object is the person a message goes to ("email Ann").
TO_WHOM = frozenset({"email", "e-mail", "mail", "message", "text", "dm", "ping", "tell",
                     "notify", "inform", "remind", "invite", "cc", "contact", "send", "pay",
                     "write", "answer"})  # fmt: skip
#: Verbs whose text is the message ("post 'Back from holiday'").
SAYS = frozenset({"post", "tweet", "publish", "comment", "reply", "respond", "answer",
                  "message", "text", "send", "write", "say"})  # fmt: skip
#: Verbs that act on all of what they name ("empty the trash").
EVERYTHING = frozenset({"empty", "wipe", "purge", "clear"})

#: Words that may come before a verb given as an instruction.
LEADERS = frozenset({
    "to", "please", "pls", "and", "then", "also", "just", "now", "finally", "first", "next",
    "lastly", "simply", "kindly", "you", "me", "us", "we", "i", "can", "could", "would", "will",
    "should", "must", "shall", "let's", "lets", "go", "ahead", "help", "try", "ok", "okay",
    "so", "i'll", "you'll", "we'll", "i'd", "then,", "by", "bitte", "dann", "und", "puis",
    "et", "s'il", "plaît", "por", "favor", "per", "favore", "alsjeblieft",
})  # fmt: skip
#: Words that turn a verb after them (in the same clause) into "not".
NEGATORS = frozenset({
    "not", "don't", "dont", "never", "no", "without", "avoid", "instead", "rather", "except",
    "before", "until", "till", "nor", "doesn't", "won't", "shouldn't", "mustn't", "can't",
    "cannot", "didn't", "ohne", "nie", "niemals", "kein", "keine", "sans", "jamais", "sin",
    "nunca", "senza", "mai", "zonder", "nooit",
})  # fmt: skip
#: Negations that follow the verb ("schick es nicht ab", "ne l'envoie pas").
NEGATORS_AFTER = frozenset({"nicht", "pas", "niet", "non", "no"})
#: Ends an object phrase: where it happens, with what, or what is said.
PLACES_WORDS = frozenset({
    "on", "in", "at", "via", "through", "using", "with", "into", "onto", "within", "under",
    "inside", "for", "from", "off", "by", "auf", "im", "bei", "mit", "über", "sur", "dans",
    "avec", "en", "con", "su", "op", "met",
})  # fmt: skip
SAYING = frozenset({
    "saying", "that", "telling", "asking", "about", "whether", "because", "since", "so",
    "which", "who", "to say", "says", "explaining", "mentioning", "letting", "stating",
    "dass", "que", "che", "dat",
})  # fmt: skip
QUESTIONS = frozenset({"how", "whether", "where", "when", "what", "why", "if", "which"})
CURRENCY = frozenset({
    "$", "€", "£", "¥", "eur", "euro", "euros", "usd", "dollar", "dollars", "bucks", "gbp",
    "pound", "pounds", "chf", "sek", "nok", "dkk", "pln", "czk", "kr", "zł", "kč",
})  # fmt: skip
NOT_NAMES = frozenset({
    "i", "i'm", "i'll", "i've", "i'd", "ok", "okay", "eur", "usd", "gbp", "chf", "am", "pm",
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "mon",
    "tue", "wed", "thu", "fri", "sat", "sun", "january", "february", "march", "april", "may",
    "june", "july", "august", "september", "october", "november", "december", "jan", "feb",
    "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "today",
    "tomorrow", "yesterday", "please", "the", "a", "an", "my", "our", "your", "it", "this",
    "that", "then", "and", "also", "iban", "pin", "url", "pdf", "png", "csv",
})  # fmt: skip
PRONOUNS = frozenset({"it", "them", "this", "that", "these", "those", "one", "es", "le", "la",
                      "les", "lo", "los", "las"})  # fmt: skip
SELF = frozenset({"me", "myself", "us", "ourselves", "mir", "mich", "moi", "mí", "mi"})
SECRET_CUES = frozenset({"password", "passwort", "kennwort", "passcode", "passphrase", "pw",
                         "pwd", "contraseña", "senha", "wachtwoord", "pin"})  # fmt: skip
CLICKS = frozenset({"click", "press", "hit", "tap", "push", "select", "choose", "klicke",
                    "klick", "clique", "cliquez", "pulsa", "haz"})  # fmt: skip
CONJUNCTIONS = frozenset({
    "and", "then", "but", "&", "+", "afterwards", "und", "dann", "aber", "puis", "et", "mais",
    "y", "luego", "pero", "poi", "ma", "daarna", "maar", "och", "sedan", "men", "or",
})  # fmt: skip
SENTENCE_ENDS = frozenset({".", "!", "?", "\n"})
BOUNDARIES = frozenset({".", "!", "?", ";", ":", ",", "-", "–", "—", "(", ")", "\n", "…"})

QUOTES = re.compile(
    r'"([^"\n]{1,300})"|“([^”\n]{1,300})”|„([^“”\n]{1,300})[“”]|«\s?([^»\n]{1,300}?)\s?»'
    r"|`([^`\n]{1,300})`|‘([^’\n]{1,300})’|(?<![\w'’])'([^'\n]{1,200}?)'(?![\w])"
)
TOKEN = re.compile(
    r"⟦\d+⟧|[$€£]?\d+(?:[.,]\d+)+(?![\w.,])|[\w@#$€£]+(?:[.'’+/@-][\w@#]+)*|\n|[^\s\w]"
)
IBAN = re.compile(r"^[A-Z]{2}\d{2}[A-Z0-9]{8,30}$")
EMAIL = r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"


@dataclass(frozen=True)
class Derived:
    """What a goal grants, and the acts it names only to forbid them."""

    grants: tuple[Grant, ...]
    withheld: tuple[str, ...] = ()


@dataclass
class _Mention:
    acts: tuple[str, ...]
    verb: str
    start: int  # token index in its clause
    end: int  # first token after the verb phrase
    negated: bool = False
    objects: list[str] = field(default_factory=list)
    recipients: list[str] = field(default_factory=list)
    content: list[str] = field(default_factory=list)
    amounts: list[str] = field(default_factory=list)
    every: bool = False


@dataclass
class _Clause:
    tokens: list[str]  # as written (quotes as ⟦n⟧)
    mentions: list[_Mention] = field(default_factory=list)
    ends: str = ""  # the boundary after it ("," ":" "and"…)

    @property
    def low(self) -> list[str]:
        return [t.casefold().replace("’", "'") for t in self.tokens]


def _inflect(verb: str) -> dict[str, str]:
    """English forms of ``verb`` → "base", "s", "past" or "ing"."""
    irregular = {
        "send": "sent", "buy": "bought", "pay": "paid", "tell": "told", "write": "written",
        "leave": "left", "put": "put", "make": "made", "give": "given", "run": "run",
        "drop": "dropped", "throw": "thrown", "get": "got", "wire": "wired", "set": "set",
        "hit": "hit", "do": "done",
    }  # fmt: skip
    if verb.endswith("e"):
        ing, past = verb[:-1] + "ing", verb + "d"
    elif verb.endswith("y") and verb[-2:-1] not in "aeiou":
        ing, past = verb + "ing", verb[:-1] + "ied"
    elif re.fullmatch(r"[^aeiou]*[aeiou][bdgmnprt]", verb) and len(verb) <= 4:
        ing, past = verb + verb[-1] + "ing", verb + verb[-1] + "ed"
    else:
        ing, past = verb + "ing", verb + "ed"
    s = verb + ("es" if verb.endswith(("s", "sh", "ch", "x", "z")) else "s")
    forms = {verb: "base", s: "s", past: "past", ing: "ing"}
    if verb in irregular:
        forms[irregular[verb]] = "past"
        forms.pop(past, None)
    if verb == "write":
        forms["wrote"] = "past"
    return forms


def _lexicon() -> dict[tuple[str, ...], tuple[tuple[str, ...], str, str]]:
    """Every verb phrase as tokens → (acts, base verb, form)."""
    out: dict[tuple[str, ...], tuple[tuple[str, ...], str, str]] = {}
    for verb, acts in VERBS_EN.items():
        for form, kind in _inflect(verb).items():
            out[(form,)] = (acts, verb, kind)
    for phrase, acts in PHRASES_EN.items():
        head, *rest = phrase.split()
        for form, kind in _inflect(head).items():
            out[(form, *rest)] = (acts, phrase, kind)
            if rest and rest[-1] in ("password", "account", "two-factor"):
                out[(form, "my", *rest)] = (acts, phrase, kind)
                out[(form, "the", *rest)] = (acts, phrase, kind)
    for verb, acts in VERBS_OTHER.items():
        out.setdefault((verb,), (acts, verb, "base"))
    return out


LEXICON = _lexicon()
LONGEST = max(len(k) for k in LEXICON)


def derive(goal: str, *, custom_words: Iterable[str] | None = None) -> Derived:
    """What ``goal`` grants (see the module docstring). ``custom_words``: the person's own
    list of consequential words (``[consequential] words``), which the goal grants by naming."""
    text, quoted = _mask_quotes(goal)
    clauses = _clauses(text)
    mentions: list[tuple[_Clause, _Mention]] = []
    previous_names: list[str] = []
    last: tuple[_Clause, _Mention] | None = None
    said_by: _Mention | None = None
    for clause in clauses:
        if said_by is not None:  # "Message Jorge: running late": what it says
            said_by.content += [_unquote(t, quoted) for t in clause.tokens]
            said_by = None
            continue
        found = [] if _question(clause.low) else _mentions(clause, quoted)
        clause.mentions = found
        for mention in found:
            _fill(clause, mention, quoted, previous_names, mentions[-1][1] if mentions else None)
            mentions.append((clause, mention))
        if not found and last is not None:
            _continue(clause, last[1], quoted)
        last = (clause, found[-1]) if found else None
        if found and clause.ends == ":" and set(found[-1].acts) & set(SEND + POST):
            said_by = found[-1]
        names = _names(clause, 0, len(clause.tokens), quoted)
        if names:
            previous_names = names
    withheld = sorted({a for _c, m in mentions if m.negated for a in m.acts})
    grants = []
    for _clause, m in mentions:
        if m.negated:
            continue
        acts = frozenset(a for a in m.acts if a not in withheld)
        if not acts:
            continue
        grants.append(
            Grant(
                acts=acts,
                source="goal",
                words=m.verb,
                objects=tuple(dict.fromkeys(m.objects)),
                recipients=tuple(dict.fromkeys(m.recipients)),
                content=tuple(dict.fromkeys(m.content)),
                amounts=tuple(dict.fromkeys(m.amounts)),
                secrets=_secrets(goal, quoted) if SECRET in acts else (),
                every=m.every,
                by="the goal",
            )
        )
    grants += _custom(goal, custom_words)
    return Derived(tuple(_words_of(grants, goal)), tuple(withheld))


def explain(goal: str, *, custom_words: Iterable[str] | None = None) -> list[str]:
    """What ``goal`` grants, one line each, for a person (``deskpilot run --explain-grants``)."""
    derived = derive(goal, custom_words=custom_words)
    lines = [f"- {g.describe()}  (from “{g.words}”)" for g in derived.grants]
    if derived.withheld:
        lines.append(
            f"- never without asking: {', '.join(derived.withheld)} (the goal says not to)"
        )
    return lines


# -- reading ------------------------------------------------------------------------------------


def _mask_quotes(goal: str) -> tuple[str, list[str]]:
    quoted: list[str] = []

    def keep(m: re.Match[str]) -> str:
        quoted.append(next(g for g in m.groups() if g is not None))
        return f" ⟦{len(quoted) - 1}⟧ "

    return QUOTES.sub(keep, goal), quoted


def _clauses(text: str) -> list[_Clause]:
    out: list[_Clause] = []
    current: list[str] = []
    for token in TOKEN.findall(text):
        low = token.casefold()
        if token in BOUNDARIES or low in CONJUNCTIONS:
            if current:
                out.append(_Clause(current, ends=low))
            elif out and out[-1].ends == ":" and token in SENTENCE_ENDS:
                out[-1].ends = low  # "Send:." introduces nothing: the next sentence is not said
            current = []
            continue
        current.append(token)
    if current:
        out.append(_Clause(current))
    return out


def _mentions(clause: _Clause, quoted: list[str]) -> list[_Mention]:
    low = clause.low
    found: list[_Mention] = []
    i = 0
    while i < len(low):
        hit = _verb_at(low, i)
        if hit is not None:
            size, acts, verb, kind = hit
            if _instructed(low, i, kind):
                found.append(_Mention(acts, verb, i, i + size, _negated(low, i)))
                i += size
                continue
        light = _light_at(low, i)
        if light is not None:
            acts, verb, end = light
            if _instructed(low, i, "base"):
                found.append(_Mention(acts, verb, i, end, _negated(low, i)))
                i = end
                continue
        click = _click_at(clause, i, quoted)
        if click is not None:
            found.append(click)
            i = click.end
            continue
        i += 1
    return found


def _question(low: list[str]) -> bool:
    """ "How do I delete…", "Can I delete this?": asked, not told."""
    if not low:
        return False
    if low[0] in QUESTIONS:
        return True
    return low[0] in ("can", "could", "should", "may", "do", "shall", "must") and (
        len(low) > 1 and low[1] in ("i", "we")
    )


def _verb_at(low: list[str], i: int) -> tuple[int, tuple[str, ...], str, str] | None:
    for size in range(min(LONGEST, len(low) - i), 0, -1):
        hit = LEXICON.get(tuple(low[i : i + size]))
        if hit is not None:
            if size == 1 and hit[1] in VERBS_EN:
                split = _separable(low, i)
                if split is not None:
                    return split
            return size, *hit
    return _separable(low, i)


#: Phrasal verbs whose object may sit between verb and particle ("take 'eggs' off the list").
SEPARABLE: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "take": (("off", "out"), ("delete",)),
    "cross": (("off", "out"), ("delete",)),
    "throw": (("away", "out"), ("delete",)),
    "sign": (("up",), JOIN),
    "log": (("in",), (SECRET,)),
    "send": (("off", "in"), ("submit",)),
    "hand": (("in",), ("submit",)),
    "turn": (("in",), ("submit",)),
}
#: Verbs that with "password" within a few words change it ("change my email password").
PASSWORD_VERBS = frozenset({"change", "reset", "update", "set", "replace", "ändere", "ändern",
                            "changer", "modifier", "cambiar", "cambia"})  # fmt: skip


def _separable(low: list[str], i: int) -> tuple[int, tuple[str, ...], str, str] | None:
    head = next((v for v in SEPARABLE if low[i] in _inflect(v)), None)
    if head is not None:
        particles, acts = SEPARABLE[head]
        for j in range(i + 1, min(i + 6, len(low))):
            if low[j] in particles:
                kind = _inflect(head)[low[i]]
                return 1, acts, f"{head} … {low[j]}", kind
    verb = next((v for v in PASSWORD_VERBS if low[i] in _inflect(v) or low[i] == v), None)
    if verb is not None:
        for j in range(i + 1, min(i + 5, len(low))):
            if low[j] in ("password", "passwort", "kennwort", "mot", "contraseña", "passcode"):
                return j - i + 1, ("password", SECRET), f"{verb} … password", "base"
    return None


def _light_at(low: list[str], i: int) -> tuple[tuple[str, ...], str, int] | None:
    """ "place an order", "leave a comment", "complete the form": (acts, phrase, end)."""
    base = next((v for v in LIGHT if low[i] in _inflect(v)), None)
    if base is None:
        return None
    for j in range(i + 1, min(i + 5, len(low))):
        noun = low[j].rstrip("s") if low[j] not in NOUNS else low[j]
        if noun in NOUNS:
            if base in OPENERS and noun not in OPENABLE:
                return None
            if base in ("open", "create", "raise") and noun in OPENABLE - {
                "ticket",
                "request",
                "complaint",
                "claim",
                "report",
                "account",
            }:
                return None  # opening a draft sends nothing
            return NOUNS[noun], f"{base} … {noun}", j + 1
        if low[j] in PLACES_WORDS or low[j] in SAYING:
            return None
    return None


def _click_at(clause: _Clause, i: int, quoted: list[str]) -> _Mention | None:
    """ "click Pay now", 'press "Send"': what the judge says that button does."""
    low = clause.low
    if low[i] not in CLICKS or not _instructed(low, i, "base"):
        return None
    j = i + 1
    while j < len(low) and low[j] in ("on", "the", "a", "auf", "sur", "en"):
        j += 1
    label: list[str] = []
    while j < len(low) and len(label) < 4:
        token = clause.tokens[j]
        if token.startswith("⟦"):
            label.append(quoted[int(token[1:-1])])
            j += 1
            break
        if low[j] in ("button", "link", "knopf", "bouton", "botón") or low[j] in PLACES_WORDS:
            break
        if not token[:1].isupper() and not any(v.find(token) for v in VERB_SETS.values()):
            break
        label.append(token)
        j += 1
    if not label:
        return None
    name = " ".join(label)
    found = [(e, w) for e, verbs in VERB_SETS.items() if (w := verbs.find(name))]
    if not found:
        return None
    from deskpilot.policy.acts import act_of

    effect, word = max(found, key=lambda f: len(f[1]))
    return _Mention((act_of(effect.value, word),), f"click {name}", i, j, _negated(low, i))


def _instructed(low: list[str], i: int, kind: str) -> bool:
    """Whether the verb at ``i`` is given as an instruction (see the module docstring)."""
    if kind == "past":
        prev = low[i - 1] if i else ""
        return prev in ("be", "been", "get", "gets", "got", "getting", "it", "them")
    start = 0
    while start < i and (
        low[start] in LEADERS
        or _adverb(low[start])
        or low[start] in NEGATORS
        or low[start]
        in (
            "do",
            "don't",
            "forget",
            "remember",
            "sure",
            "make",
            "want",
            "need",
            "like",
            "would",
            "be",
        )
    ):
        start += 1
    if start == i:
        return kind != "ing" or i == 0 or low[i - 1] in ("by", "without", "before", "avoid")
    prev = low[i - 1]
    if prev == "to" and i >= 2 and low[i - 2] in QUESTIONS:
        return False  # "how to delete": a question
    if kind == "ing":
        return prev in ("by", "without", "before", "avoid", "and", "then", "start", "finish")
    return prev in LEADERS or _adverb(prev)


def _adverb(token: str) -> bool:
    return len(token) > 4 and token.endswith("ly") and token not in ("only", "reply", "apply")


def _negated(low: list[str], i: int) -> bool:
    before = " ".join(low[:i])
    before = re.sub(r"\b(do not|don't|dont) forget\b|\bno matter\b|\bnot only\b", " ", before)
    if any(t in NEGATORS for t in before.split()):
        return True
    return any(t in NEGATORS_AFTER for t in low[i + 1 :]) and "no" not in low[i + 1 : i + 2]


def _fill(
    clause: _Clause,
    m: _Mention,
    quoted: list[str],
    previous: list[str],
    earlier: _Mention | None = None,
) -> None:
    """What the verb acts on: objects, recipients, message, sums (see the module docstring)."""
    low, tokens = clause.low, clause.tokens
    base = m.verb.split()[0]
    m.every = base in EVERYTHING
    # sums: a number next to a currency
    for j, t in enumerate(low):
        if re.fullmatch(r"[$€£¥]?\d+(?:[.,]\d+)?", t) and (
            t[:1] in "$€£¥"
            or (j + 1 < len(low) and low[j + 1] in CURRENCY)
            or (j and low[j - 1] in CURRENCY)
        ):
            m.amounts.append(number(t.lstrip("$€£¥")))
    if (
        m.amounts
        and ("submit" in m.acts or "pay" in m.acts)
        and base in ("send", "pay", "give", "schick", "envoie")
    ):
        m.acts = tuple(dict.fromkeys((*MONEY, *m.acts)))  # "send 25 EUR to Bob"
    # recipients: addresses and accounts anywhere in the clause
    for t in tokens:
        if re.fullmatch(EMAIL, t) or IBAN.match(t):
            m.recipients.append(t)
    j = m.end
    if m.verb.endswith((" to", " with")):  # "write to my colleague Paolo"
        name = _recipient_after(tokens, j)
        if name:
            m.recipients.append(name)
            j = next(k for k in range(j, len(tokens)) if tokens[k] == name.split()[0]) + len(
                name.split()
            )
    # the person a message goes to, right after the verb ("email Ann", "pay Bob")
    if base in TO_WHOM and j < len(tokens):
        if low[j] in SELF and base in (
            "send",
            "email",
            "e-mail",
            "mail",
            "message",
            "text",
            "tell",
        ):
            m.acts = ()  # "send me the total", "tell me": an answer for the person
            return
        run = _name_run(tokens, j)
        if run:
            m.recipients.append(" ".join(run))
            j += len(run)
    if base in ("tell", "notify", "inform", "remind") and not m.recipients:
        m.acts = ()  # "tell me what it says" is an answer, not a message to someone
        return
    objects_end = len(tokens)
    k = j
    while k < len(tokens):
        w = low[k]
        if w in SAYING or (w == "to" and k + 1 < len(low) and low[k + 1] == "say"):
            m.content += [_unquote(t, quoted) for t in tokens[k + 1 :]]
            objects_end = min(objects_end, k)
            break
        if (
            w in ("to", "with", "an", "à", "a", "para", "cc")
            and m.acts
            and (set(m.acts) & {"submit", "reply", "forward", "share", "transfer", "pay", "donate"})
        ):
            name = _recipient_after(tokens, k + 1)
            if name:
                m.recipients.append(name)
            objects_end = min(objects_end, k)
        elif w in PLACES_WORDS:
            objects_end = min(objects_end, k)
        k += 1
    said = base in SAYS
    objects = _names(clause, j, objects_end, quoted, said_first=said)
    if said:
        for t in tokens[j:objects_end]:
            if t.startswith("⟦") and (not objects or quoted[int(t[1:-1])] not in objects):
                m.content.append(quoted[int(t[1:-1])])
    if (
        not objects
        and objects_end < len(tokens)
        and low[objects_end] == "from"
        and "delete" in m.acts
    ):
        objects = _names(clause, objects_end + 1, len(tokens), quoted)
    words = low[j:objects_end]
    if any(w in PRONOUNS for w in words[:2]) and not objects:
        if set(m.acts) & {"submit", "reply", "forward"} and earlier is not None:
            m.recipients += [r for r in earlier.recipients if r not in m.recipients]
            m.content += earlier.content
        elif not set(m.acts) & {"submit", "reply", "forward"}:
            objects = list(previous)
    m.objects += objects
    m.every = m.every or any(
        w
        in (
            "all",
            "every",
            "everything",
            "each",
            "alle",
            "tous",
            "toutes",
            "todos",
            "todas",
            "tutti",
        )
        for w in words
    )
    m.content = [c for c in m.content if c.strip()]


def _continue(clause: _Clause, m: _Mention, quoted: list[str]) -> None:
    """A clause with no verb after one with a mention: more of the same names ("Email Ann,
    Bob and Carol"; "delete the Globex and Initech orders")."""
    tokens = clause.tokens
    if set(m.acts) & {"submit", "reply", "forward", "share", "transfer", "pay", "donate"}:
        m.recipients += [t for t in tokens if IBAN.match(t) or re.fullmatch(EMAIL, t)]
    first = tokens[0]
    if not (first[:1].isupper() or first.startswith("⟦") or "@" in first):
        return
    if first.casefold() in NOT_NAMES:
        return
    names = _names(clause, 0, len(tokens), quoted, first=True)
    if m.recipients and not m.objects:
        m.recipients += [n for n in names if n not in m.recipients]
    else:
        m.objects += names


def _names(
    clause: _Clause,
    start: int,
    end: int,
    quoted: list[str],
    *,
    said_first: bool = False,
    first: bool = False,
) -> list[str]:
    """Distinctive names in tokens[start:end]: quoted text, capitalised words (runs), file
    names, numbers of 3+ digits (not sums, times or dates)."""
    tokens, low = clause.tokens, clause.low
    out: list[str] = []
    run: list[str] = []

    def flush() -> None:
        if run:
            out.append(" ".join(run))
            run.clear()

    for j in range(start, min(end, len(tokens))):
        t, w = tokens[j], low[j]
        if t.startswith("⟦"):
            flush()
            if said_first and j == start:
                continue  # "post 'Back from holiday'": the message, not a name
            prev = low[j - 1] if j else ""
            if said_first and prev not in ("the", "a", "my", "our", "file", "post", "draft"):
                continue
            out.append(quoted[int(t[1:-1])])
            continue
        if _distinct(t, w, j, low) or (
            first and j == start and t[:1].isupper() and w not in NOT_NAMES and "@" not in t
        ):
            run.append(t.rstrip("'s").rstrip("’s") if w.endswith(("'s", "’s")) else t)
            if w.endswith(("'s", "’s")):
                flush()
            continue
        flush()
    flush()
    return out


def _distinct(t: str, w: str, j: int, low: list[str]) -> bool:
    if w in NOT_NAMES or w in CURRENCY:
        return False
    if "@" in t:
        return False  # an address is a recipient
    if re.fullmatch(r"[\w-]+\.[a-z][a-z0-9]{0,4}", w) and not re.fullmatch(r"\d+\.\d+", w):
        return True  # a file name
    if w.startswith("#") and len(w) > 1:
        return True
    digits = sum(c.isdigit() for c in w)
    if digits:
        near_money = (j + 1 < len(low) and low[j + 1] in CURRENCY) or (
            j > 0 and low[j - 1] in CURRENCY
        )
        if near_money or re.fullmatch(r"\d{1,2}(am|pm|h|st|nd|rd|th)?", w) or "$" in w:
            return False
        return digits >= 3 or (any(c.isalpha() for c in w) and len(w) >= 3)
    return j > 0 and t[:1].isupper() and len(t) > 1 and low[j - 1] not in (".", "!", "?")


def _name_run(tokens: list[str], j: int) -> list[str]:
    run: list[str] = []
    while j < len(tokens) and len(run) < 3:
        t = tokens[j]
        if not t[:1].isupper() or t.casefold() in NOT_NAMES or t.startswith("⟦"):
            break
        if t.casefold().endswith(("'s", "’s")):
            return []  # "to Lea's dinner": whose, not to whom
        run.append(t)
        j += 1
    return run


def _recipient_after(tokens: list[str], j: int) -> str:
    """The name after "to"/"with", skipping a few words ("to my colleague Ann")."""
    skipped = 0
    while j < len(tokens) and skipped < 3 and not tokens[j][:1].isupper():
        if "@" in tokens[j] or tokens[j].startswith("⟦") or IBAN.match(tokens[j]):
            return ""
        if tokens[j].casefold() in SELF:
            return ""
        j += 1
        skipped += 1
    return " ".join(_name_run(tokens, j))


def _unquote(token: str, quoted: list[str]) -> str:
    return quoted[int(token[1:-1])] if token.startswith("⟦") else token


def _secrets(goal: str, quoted: list[str]) -> tuple[str, ...]:
    """Passwords the goal gives: quoted text, and words after "password" or with letters,
    digits and signs together."""
    found = list(quoted)
    tokens = re.findall(r"\S+", goal)
    for i, raw in enumerate(tokens):
        t = raw.strip(".,;:!?()\"'“”‘’")
        if not t:
            continue
        if tokens[i - 1].strip(":").casefold() in SECRET_CUES if i else False:
            found.append(t)
        if (
            i >= 2
            and tokens[i - 1].casefold() in ("is", "to", "from", "as")
            and (tokens[i - 2].strip(":").casefold() in SECRET_CUES)
        ):
            found.append(t)
        kinds = [
            any(c.isdigit() for c in t),
            any(c.isalpha() for c in t),
            any(not c.isalnum() for c in t),
        ]
        if sum(kinds) >= 2 and len(t) >= 6 and "@" not in t:
            found.append(t)
    return tuple(dict.fromkeys(s for s in found if len(s) >= 3))


def _custom(goal: str, words: Iterable[str] | None) -> list[Grant]:
    """The person's own consequential words that the goal names (not under a negation)."""
    if not words:
        return []
    out = []
    for clause in _clauses(_mask_quotes(goal)[0]):
        low = clause.low
        for word in words:
            key = normalize(word)
            parts = key.split()
            for i in range(len(low)):
                if [normalize(t) for t in low[i : i + len(parts)]] == parts and not _negated(
                    low, i
                ):
                    out.append(
                        Grant(acts=frozenset({key}), source="goal", words=word, by="the goal")
                    )
    return out


def _words_of(grants: list[Grant], goal: str) -> list[Grant]:
    """Each grant with the goal's words it came from (its verb, in the goal's own spelling)."""
    out = []
    plain = " ".join(goal.split())
    for g in grants:
        m = re.search(rf"(?i)\b{re.escape(g.words.split(' … ')[0])}\w*", plain)
        words = plain[m.start() : m.start() + 80].split(". ")[0] if m else g.words
        out.append(replace(g, words=words))
    return out


__all__ = ["Derived", "derive", "explain"]
