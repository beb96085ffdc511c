"""Turning questions into checklist titles, without a model.

A checklist item names what an answer must cover, so it reads as a statement-shaped
phrase, not a question: "How does PostgreSQL protect against wraparound?" becomes
"How PostgreSQL protects against wraparound", "What is a decorator?" becomes
"Definition of a decorator", "What limits the scalability of threads?" becomes "What
limits thread scalability". A title never only reorders the question's words ("Why is
X a problem" gives "Reasons X is a problem", not "Why X is a problem"): it would add
nothing a reader does not already see in the question. The rules are small and
conservative: a question whose subject and verb cannot be told apart keeps its own
words (minus the question mark), which is still grammatical.

Besides the title, a clause carries what the question is about (``subject``: never
the asker, never a verb or an auxiliary), so that the planner can ask about it.

This module tells which form a question has (a definition, "What limits X?", "Which
brokers support X?", an imperative...) and titles each form; an inverted one ("How
does X work?", "Is X faster than Y?") it hands to
:mod:`services.decomposition.inversion`, which turns it around. The asker is taken
out of every title and subject (:mod:`services.decomposition.asker`: "How do I
improve my score" -> "How to improve the score"); splitting joined questions is
:mod:`services.decomposition.joined`'s.

Guarantees: deterministic; :func:`statement` never returns an empty string for a
non-blank question.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from shared.research.text import STOPWORDS

from services.decomposition.inversion import (
    AUX,
    BE,
    MODALS,
    VERBS,
    Reading,
    capitalize,
    inverted,
    join,
    low,
    quality_noun,
    subject_ok,
    third_person,
)
from services.decomposition.asker import action, impersonal
from services.decomposition.joined import PRONOUNS as _PRONOUNS
from services.decomposition.wordforms import (
    asker_verb,
    be_for,
    compact,
    is_adverb,
    is_past_participle,
    is_plural_noun,
    participle,
    past,
    plural,
    verb_capable,
    verb_lemma,
    word_classes,
)

__all__ = [
    "CAUSE_VERBS", "LIMIT_VERBS", "MEANS_VERBS", "NEGATIVE_HEADS", "WH_WORDS", "Clause", "object_of", "parse_clause",
    "statement",
]

WH_WORDS = frozenset({"what", "how", "why", "when", "where", "which", "who", "whom", "whose"})
_ARTICLES = frozenset({"a", "an", "the"})
_POSSESSIVES = frozenset({"my", "our", "your"})  # the asker's: "improve my credit score"
_IMPERATIVES = frozenset({"explain", "describe", "list", "name", "summarize", "summarise",
                          "outline", "give", "show", "tell", "discuss", "define"})
# Imperatives that ask for an account of a thing: "Explain the actor model" asks what
# "What is the actor model?" asks. "List", "name", "give" ask for the phrase itself.
_DEFINE_IMPERATIVES = frozenset({"explain", "describe", "define", "discuss", "outline", "tell"})

# "What V X?" asks for the things that V X; the verb decides how a title names them.
# What causes X has causes; what limits or affects X has factors; what prevents X is a
# way to prevent it.
CAUSE_VERBS = frozenset({"cause", "trigger", "produce", "create", "induce", "introduce"})
LIMIT_VERBS = frozenset({"limit", "constrain", "restrict", "bound", "cap", "bottleneck"})
FACTOR_VERBS = frozenset({"affect", "influence", "determine", "control", "drive", "govern", "shape",
                          "dominate", "impact"})
MEANS_VERBS = frozenset({"prevent", "avoid", "reduce", "mitigate", "fix", "solve", "improve", "lower",
                         "increase", "minimize", "minimise", "eliminate"})
_AGENT_VERBS = CAUSE_VERBS | LIMIT_VERBS | FACTOR_VERBS | MEANS_VERBS

# Nouns naming a kind of information about something: "the purpose of X" and "the
# drawbacks of X" are about X, and their title keeps the noun ("The drawbacks of X").
_ASPECT_HEADS = frozenset("""
    purpose role meaning goal function use uses benefit benefits advantage advantages
    disadvantage disadvantages drawback drawbacks downside downsides limitation limitations
    risk risks cost costs cause causes effect effects consequence consequences impact
    implication implications trade-off trade-offs tradeoff tradeoffs pros cons alternative
    alternatives requirement requirements property properties feature features component
    components problem problems challenge challenges example examples history
""".split())
# The aspects that count against a thing: what to ask next is its advantages. (Costs
# call for how to reduce them instead.)
NEGATIVE_HEADS = frozenset("""
    disadvantage disadvantages drawback drawbacks downside downsides limitation limitations
    risk risks cons problem problems challenge challenges
""".split())
# Nouns asking for the kinds of something ("the types of X"): a list whose members
# the answer then explains one by one.
_KIND_HEADS = frozenset("""
    type types kind kinds form forms category categories variety varieties sort sorts
    flavor flavors flavour flavours
""".split())
# Nouns asking for the means to an end ("the ways to reduce X").
_MEANS_HEADS = frozenset("""
    way ways method methods technique techniques approach approaches strategy strategies
    option options step steps practice practices tip tips tool tools
""".split())
_HEADS = _ASPECT_HEADS | _KIND_HEADS | _MEANS_HEADS
# "the main drawbacks of X": the words before the head do not change what is asked.
_HEAD_PHRASE = re.compile(
    r"^(?:(?:the|some|any|all)\s+)?(?:(?:main|key|major|common|most\s+common|different|various|"
    r"typical|possible|best|biggest|primary)\s+)?(?P<head>[\w-]+)\s+(?P<prep>of|to|for|behind)\s+(?P<x>.+)$",
    re.IGNORECASE,
)
# Particles and prepositions that join a verb to its object ("protect against X",
# "speed up X"): passed over to reach the object. "for" is not one: "generate for a
# class" names what it is for, not what is generated.
_VERB_PARTICLES = frozenset({"up", "down", "out", "off", "against", "with", "from", "on", "into",
                             "onto", "over", "through", "about", "to", "between", "across"})


@dataclass(frozen=True)
class Clause:
    """One question, read.

    ``kind``: "definition" ("What is X?", "What are the drawbacks of X?", "Explain X"),
    "list" ("What are the types of X?"), "means" ("What are the ways to reduce X?"),
    "what-verb" ("What limits X?"), "which" ("Which brokers support X?"), "consequence"
    ("What happens when X?"), "wh" (a wh-question with its subject and verb told
    apart), "yes-no", "subject-wh" ("How the GIL works"), "imperative", or "other" (kept
    as written). ``subject`` is what the question is about, when known: the thing
    defined, X in "the purpose of X", the object when the asker is the subject ("How
    do I reduce GC pauses?" is about GC pauses).
    """

    text: str  # the clause as asked, without its final punctuation
    kind: str
    statement: str  # the checklist form, capitalized, no final punctuation
    subject: str | None = None
    wh: str | None = None
    verb: str | None = None  # the main verb's base form, when found
    rest: str | None = None  # the words after the main verb, when found
    obj: str | None = None  # the noun phrase the verb acts on, when it follows the verb
    head: str | None = None  # what is asked of the subject: "purpose", "types", "ways"...
    generic: bool = False  # the asker is the grammatical subject ("How do I...", "When should you...")
    aux: str | None = None  # the auxiliary ("does", "should"...); "did" for a past "What caused X"


def _verb_base(token: str) -> str | None:
    """The base form of a known verb in any inflection ("supports" -> "support")."""
    word = low(token)
    known = VERBS | _AGENT_VERBS
    if word in known:
        return word
    base = verb_lemma(word)
    return base if base in known else None


def _content_word(word: str) -> bool:
    lowered = low(word)
    return bool(lowered) and lowered not in STOPWORDS and not is_adverb(lowered) and (
        word[:1].isalnum() or word[:1] == "_")


def object_of(rest: str | None) -> str | None:
    """The noun phrase a verb acts on: the words after it, past one particle
    ("protect against transaction ID wraparound in practice" -> "transaction ID
    wraparound"), up to a function word, an adverb or punctuation; a leading article is
    kept ("a Python loop"), and so is a joined second phrase ("CPU-bound and I/O-bound
    programs"). None when the verb is followed by no noun phrase."""
    words = (rest or "").split(" ")
    i = 1 if words and low(words[0]) in _VERB_PARTICLES else 0
    if i and low(words[0]) == "to" and len(words) > 1 and verb_lemma(words[1]) == words[1]:
        return None  # "need to install": an infinitive, not an object
    out: list[str] = []
    if i < len(words) and low(words[i]) in _ARTICLES | _POSSESSIVES:
        out.append(words[i])
        i += 1
    content = 0
    while i < len(words) and content < 6:
        word = words[i]
        joins = content and low(word) in ("and", "or") and i + 1 < len(words) and _content_word(words[i + 1])
        if not joins and not _content_word(word):
            break
        out.append(word.rstrip(".,;:!?"))
        content += 0 if joins else 1
        if word != word.rstrip(".,;:!?"):
            break
        i += 1
    return " ".join(out) if content else None


def _reading_clause(text: str, kind: str, wh: str | None, done: Reading) -> Clause:
    """A clause from an inverted question turned around. When the asker is the
    subject, the question is about what the verb acts on, or else about the doing
    itself ("How do I decide which index to use": deciding which index to use); the
    asker is never in its title or subject ("Why do we need X" -> "Reasons X is
    needed")."""
    obj = object_of(done.rest) if done.verb else None
    obj = impersonal(obj) if obj else None
    subject: str | None = done.subject
    title = done.statement
    if done.generic:
        # "What do I need", "Which database should I use": what is asked is the object.
        asks_object = (wh or "").split(" ")[0] in ("what", "which")
        doing = action(done.verb, done.rest) if done.verb and not asks_object else None
        subject = obj or doing
        if wh == "why" and done.aux in ("do", "does", "did") and obj and obj == done.rest and done.verb:
            title = join("Reasons", obj, be_for(obj), participle(done.verb))
    return Clause(text, kind, impersonal(title), subject=impersonal(subject) if subject else None, wh=wh,
                  verb=done.verb, rest=done.rest, obj=obj, generic=done.generic, aux=done.aux)


def _is_it(text: str, tokens: list[str]) -> Clause:
    """"Is it safe to take ibuprofen with alcohol?": the quality of doing something
    ("Safety of taking ibuprofen with alcohol"), about the doing."""
    at = 4 if low(tokens[3]) == "to" else 3  # "safe to take X", "worth learning X"
    adj, verb, rest = low(tokens[2]), verb_lemma(tokens[at]) or low(tokens[at]), " ".join(tokens[at + 1:])
    doing = action(verb, rest)
    noun = quality_noun(adj)
    title = f"{noun} of {doing}" if noun else join("Whether it", low(tokens[0]), adj, "to",
                                                    impersonal(" ".join(tokens[4:])))
    return Clause(text, "yes-no", title, subject=doing, verb=verb, rest=rest, obj=object_of(rest), generic=True,
                  aux=low(tokens[0]))


def _definition(text: str, subject: str, wh: str | None) -> Clause:
    """"What is X?" and its kin. "the purpose of X" is about X and keeps its words as
    the title; "the types of X" asks for a list, "the ways to V X" for means."""
    m = _HEAD_PHRASE.match(subject)
    head = m.group("head").lower() if m else None
    if m is None or head not in _HEADS:
        low = f" {subject.lower()} "
        if " of " in low or " between " in low or low.startswith((" the main ", " the key ", " the most ")):
            return Clause(text, "definition", capitalize(subject), subject=subject, wh=wh)
        return Clause(text, "definition", f"Definition of {subject}", subject=subject, wh=wh)
    x, prep = m.group("x"), m.group("prep").lower()
    title = capitalize(subject)
    if head in _KIND_HEADS and prep == "of":
        return Clause(text, "list", title, subject=x, wh=wh, head=head)
    words = x.split(" ")
    verb = _verb_base(words[0]) or (words[0].lower() if prep == "to" and verb_capable(words[0].lower()) else None)
    if head in _MEANS_HEADS and verb and (prep == "to" or words[0].lower().endswith("ing")):
        rest = " ".join(words[1:])
        obj = object_of(rest)
        return Clause(text, "means", title, subject=obj or x, wh=wh, head=head, verb=verb, rest=rest, obj=obj)
    return Clause(text, "definition", title, subject=x, wh=wh, head=head)


def _agent_verb(token: str) -> str | None:
    """The base form when ``token`` is "limits", "causes"... (see CAUSE_VERBS)."""
    base = verb_lemma(low(token))
    return base if base in _AGENT_VERBS and low(token) != base else None


def _what_verb(text: str, verb: str, said: str) -> Clause:
    """"What limits the scalability of threads?": the answer is the things that limit
    it. The title names them by the verb's family, and the subject is the object in
    its short form ("thread scalability"); "What limits thread scalability" is kept as
    the title only when it differs from the question's words."""
    short = compact(said)
    if verb in CAUSE_VERBS:
        title = f"Causes of {said}"
    elif verb in MEANS_VERBS:
        title = f"Ways to {verb} {said}"
    elif short != said:
        title = f"What {third_person(verb)} {short}"
    else:
        title = f"Factors that {verb} {said}"
    return Clause(text, "what-verb", title, subject=short, wh="what", verb=verb, rest=said, obj=short)


def _what_happens(text: str, tokens: list[str]) -> Clause:
    """"What happens when a thread blocks?": the consequences of an event; the
    subject is the event's own subject ("a thread"), its verb and rest are kept for
    examples ("a thread blocking")."""
    event = tokens[3:]
    if len(event) > 1 and low(event[0]) in ("i", "we", "you") and asker_verb(low(event[1])):
        # "What happens if I skip a dose": the consequences of skipping a dose.
        verb, rest = low(event[1]), " ".join(event[2:])
        doing = action(verb, rest)
        return Clause(text, "consequence", f"Consequences of {doing}", subject=doing, wh="what", verb=verb,
                      rest=rest, obj=object_of(rest), generic=True)
    title = join("Consequences", low(tokens[2]), " ".join(event))
    v = next((i for i in range(1, len(event)) if _verb_base(event[i]) and subject_ok(event[:i])), None)
    if v is None:
        return Clause(text, "consequence", title, subject=" ".join(event), wh="what")
    rest = " ".join(event[v + 1:])
    return Clause(text, "consequence", title, subject=" ".join(event[:v]), wh="what",
                  verb=_verb_base(event[v]), rest=rest, obj=object_of(rest))


def _wh_phrase_end(tokens: list[str]) -> int | None:
    """Index of the auxiliary after a wh-phrase of up to three words ("How well do",
    "How much memory does", "Which database should"): the phrase is the lead, and the
    rest is an inverted question like any other."""
    for i in range(2, min(5, len(tokens) - 1)):
        if low(tokens[i]) in AUX:
            phrase = tokens[1:i]
            if any(low(t) in STOPWORDS or _verb_base(t) for t in phrase):
                return None
            return i
    return None


def _phrase_clause(text: str, phrase: str, nouns: list[str], done: Reading) -> Clause:
    """A question led by a wh-phrase ("Which database should I use for analytics"):
    when the asker is the subject and the verb has no object, the question is about
    the phrase's noun and what follows the verb ("databases for analytics")."""
    clause = _reading_clause(text, "wh", phrase.lower(), done)
    if clause.subject or not phrase.lower().startswith(("which ", "what ")):
        return clause
    about = " ".join(p for p in (plural(" ".join(nouns)), done.rest) if p)
    return Clause(text, "wh", clause.statement, subject=about, wh=clause.wh, verb=clause.verb, rest=clause.rest,
                  generic=clause.generic)


def _what_makes(text: str, tokens: list[str]) -> Clause | None:
    """"What makes Python slow?" asks why Python is slow: "Reasons Python is slow"."""
    quality = low(tokens[-1])
    subject = tokens[2:-1]
    if "ADJ" not in word_classes(quality) or not subject_ok(subject):
        return None
    said = " ".join(subject)
    return Clause(text, "wh", join("Reasons", said, be_for(said), quality), subject=said, wh="why")


def _which(text: str, tokens: list[str]) -> Clause | None:
    """"Which message brokers support at-least-once delivery?" -> "Message brokers
    that support at-least-once delivery": the wh-phrase is the subject, so the title
    names the things asked for rather than repeating the question."""
    for v in range(2, min(6, len(tokens))):
        base = _verb_base(tokens[v])
        if base is None:
            continue
        phrase = tokens[1:v]
        if any(low(t) in STOPWORDS or low(t) in _PRONOUNS or low(t) in AUX for t in phrase):
            return None
        many = plural(" ".join(t.strip(",;:") for t in phrase))
        verb = base if is_plural_noun(many.split(" ")[-1]) else low(tokens[v])
        rest = " ".join(tokens[v + 1:])
        return Clause(text, "which", join(capitalize(many), "that", verb, rest), subject=many,
                      wh=low(tokens[0]), verb=base, rest=rest, obj=object_of(rest))
    return None


def _wh_aux(text: str, tokens: list[str]) -> Clause:
    """"<wh> <aux> ...": a definition ("What is X"), "What can cause X", or an
    inverted question turned around."""
    lead, aux = low(tokens[0]), low(tokens[1])
    if lead in ("what", "who") and aux in BE:
        return _definition(text, " ".join(tokens[2:]), lead)
    if lead == "what" and aux in MODALS and low(tokens[2]) in _AGENT_VERBS and len(tokens) > 3:
        return _what_verb(text, low(tokens[2]), " ".join(tokens[3:]))
    done = inverted(tokens[0], aux, tokens, 2)
    return _reading_clause(text, "wh", lead, done) if done else Clause(text, "other", capitalize(text), wh=lead)


# "What led to X", "What contributed to X": what caused X.
_LEAD_TO = frozenset({"lead", "contribute"})


def _what_verb_first(text: str, tokens: list[str]) -> Clause | None:
    """A verb right after "what": "What limits X", "What happens when X", "What
    makes X slow"; None for any other."""
    second = low(tokens[1])
    agent = _agent_verb(tokens[1])
    if verb_lemma(second) in _LEAD_TO and second not in _LEAD_TO and len(tokens) > 3 and low(tokens[2]) == "to":
        agent, tokens = "cause", [tokens[0], "caused", *tokens[3:]]  # "What led to X" asks what caused X
    if agent:
        clause = _what_verb(text, agent, " ".join(tokens[2:]))
        # "What caused the Great Depression": a past event, whose causes are history.
        return replace(clause, aux="did") if second == past(agent) or tokens[1] == "caused" else clause
    if second in ("happens", "happened") and len(tokens) > 3 and low(tokens[2]) in ("when", "if"):
        return _what_happens(text, tokens)
    if second in ("makes", "make") and len(tokens) > 3:
        return _what_makes(text, tokens)
    return None


def _wh_phrase_question(text: str, tokens: list[str]) -> Clause | None:
    """"How well do threads scale", "Which database should I use": a wh-phrase, then
    an inverted question. "Which files are ignored": the wh-phrase is the subject of a
    passive, titled as the things asked for ("Files that are ignored")."""
    end = _wh_phrase_end(tokens)
    if end is None:
        return None
    if low(tokens[0]) in ("which", "what") and low(tokens[end]) in BE and end + 1 < len(tokens) \
            and is_past_participle(low(tokens[end + 1])):
        many = plural(" ".join(tokens[1:end]))
        rest = " ".join(tokens[end + 1:])
        # What the answer names: "ignored files", "files that are ignored by Git".
        named = f"{many} that {be_for(many)} {rest}"
        about = named if end + 2 < len(tokens) else f"{rest} {many}"
        return Clause(text, "wh", capitalize(named), subject=about, wh=low(tokens[0]))
    phrase = " ".join(tokens[:end])
    done = inverted(phrase, low(tokens[end]), tokens, end + 1)
    return _phrase_clause(text, phrase, tokens[1:end], done) if done else None


def _wh_question(text: str, tokens: list[str]) -> Clause:
    """A question opening with a wh-word, read by what follows it."""
    lead = low(tokens[0])
    if len(tokens) > 2 and low(tokens[1]) in AUX:
        return _wh_aux(text, tokens)
    found = _what_verb_first(text, tokens) if lead == "what" and len(tokens) > 2 else None
    found = found or _wh_phrase_question(text, tokens)
    if found is None and lead in ("which", "what"):
        found = _which(text, tokens)
    # "How the GIL works": the wh-phrase is the subject, nothing moves.
    return found or Clause(text, "subject-wh", capitalize(text), wh=lead)


def _imperative(text: str, tokens: list[str]) -> Clause:
    """"Explain how X works" is the question it wraps; "Explain X" asks what "What is
    X?" asks; "List the settings that..." names what to list."""
    rest = tokens[1:]
    for filler in ("me", "about"):
        if low(rest[0]) == filler and len(rest) > 1:
            rest = rest[1:]
    inner = parse_clause(" ".join(rest))
    if inner.kind != "other":
        return inner
    phrase = " ".join(rest)
    if low(tokens[0]) in _DEFINE_IMPERATIVES or " of " in f" {phrase.lower()} ":
        return _definition(text, phrase, None)  # "List the causes of X" asks what "What are the causes of X" asks
    return Clause(text, "imperative", capitalize(phrase), subject=phrase)


def parse_clause(text: str) -> Clause:
    """Read one question (no joined second question in it)."""
    text = " ".join(text.split()).rstrip("?.!;, ")
    tokens = text.split(" ")
    if not text:
        return Clause(text, "other", "")
    lead = low(tokens[0])
    if lead in _IMPERATIVES and len(tokens) > 1:
        return _imperative(text, tokens)
    if lead in WH_WORDS and len(tokens) > 1:
        return _wh_question(text, tokens)
    if lead in BE and len(tokens) > 4 and low(tokens[1]) == "it" and (
            low(tokens[3]) == "to" or low(tokens[2]) == "worth" and low(tokens[3]).endswith("ing")):
        # "Is it safe to take X", "Is it worth learning Rust"
        return _is_it(text, tokens)
    if lead in AUX and len(tokens) > 2:
        done = inverted("whether", tokens[0], tokens, 1)
        if done is not None:
            return _reading_clause(text, "yes-no", None, done)
    return Clause(text, "other", capitalize(text))


def statement(question: str) -> str:
    """The checklist title for one question: see :class:`Clause`."""
    return parse_clause(question).statement
