"""Whether a sentence means what its quotes say: deterministic meaning checks.

Sharing words is not agreeing: "rows are removed" and "rows are not removed" share
every content word. So a sentence is read clause by clause, each clause is anchored
to the one quote it restates, and it must agree with the clause of that quote it
aligns with in:

* **anchoring** ("merge", "number", "name", "terms"): the clause's content words,
  figures and names come from its anchor quote, not assembled from several quotes
  (a list "X and Y both..." may draw each member from its own quote); enough of the
  sentence's content words occur in its quotes;
* **polarity** ("negation"): the same parity of negation (not, never, without,
  cannot, fails to, lacks, un-/in-/dis- words against their stems);
* **quantity** ("quantifier"): no stronger quantifier or frequency than the quote's
  (some < many/often < most/usually < all/always), a limiting one not dropped, no
  "only" the quote lacks, "rarely"/"few" on both sides or neither;
* **certainty** ("modality"): no more certain than the quote (a hedge such as
  may/might/can/suggests is not dropped; "proves", "must", "conclusively" are not
  added; association does not become cause), and what the quote states as proved,
  confirmed or to come ("will") is not made a mere possibility;
* **direction** ("comparative", :mod:`shared.verification.direction`): directional
  words (increases/reduces, faster/slower, better/worse, before/after, adds/removes)
  agree on their axis, and a comparison is not stated where the quote states none;
* **roles** ("role"): who does what to whom around the shared verb or "than" is
  kept (a passive restatement flips it back);
* **scope** ("scope", :mod:`shared.verification.scope`): a condition of the quote is kept.

Sentences are read into words and clauses by :mod:`shared.verification.clauses` (words matched by
stem and lemma, so "DELETE" meets "deleted"), each clause's features by
:mod:`shared.verification.clause_reading`, their verbs and voice by :mod:`shared.verification.verb_reading`,
their subjects and parts by :mod:`shared.verification.clause_parts`, who does what to whom by
:mod:`shared.verification.clause_roles`, anchored by :mod:`shared.verification.meaning_anchor`,
polarity compared by :mod:`shared.verification.polarity` (the ways negation is said without
"not" by :mod:`shared.verification.negation_reading`),
and their figures read with units by :mod:`shared.verification.figures`. A sentence that is one of
its quotes (or a whole sentence of one) is ``quoted`` and needs no check.
"""

from __future__ import annotations

import re

from collections import Counter

from shared.verification.certainty_reading import certainty, intended, permits
from shared.verification.clause_reading import direction_of, directions, parts_sharing
from shared.verification.quantity_reading import (
    a_few, every_unit, frequencies, quantified_units, quantity, universals,
)
from shared.verification.clause_parts import subject
from shared.verification.clause_roles import same_verb
from shared.verification.verb_reading import verbness
from shared.verification.clauses import (
    AUX, Clause, Token, aligned_pair, clauses, is_content, token,
)
from shared.verification.direction import converse, direction
from shared.verification.figures import figures, same_figure, share_of
from shared.verification.synonyms import antonyms
from shared.verification.lexicon import (
    CAUSAL, CONVERSES, CORRELATIONAL, HEDGES, NEGATIVE_PREFIXES, OUTCOMES, QUANTIFIERS, STRONG,
)
from shared.verification.negation_reading import denied_before, until_after_negation
from shared.verification.polarity import denied_elsewhere, polarity
from shared.verification.roles import names_exchanged, objects_swapped, roles, sides_swapped
from shared.verification.scope import scope

__all__ = ["compare", "contradicts"]


# -- the assessment ------------------------------------------------------------------------


def compare(said: Clause, source: Clause, whole: Clause | None = None, *,
            sentence: set[str] | None = None) -> tuple[str, str] | None:
    """(category, reason) of the first way clause ``said`` departs from ``source``, the
    clause of its quote it aligns with (``whole``: that entire quote). ``sentence``: the
    word forms of the whole sentence ``said`` is part of, where a condition may stand
    for all its clauses ("In 2022, X died, while Y fell ill")."""
    for check in (polarity, _opposite, _quantifiers, _modality, direction, converse, roles, sides_swapped,
                  objects_swapped, names_exchanged):
        problem = (check(said, source, whole) if check in (direction, roles, objects_swapped, names_exchanged)
                   else check(said, source))
        if problem is None and check is polarity and whole is not None and denied_elsewhere(said, source, whole):
            problem = "negation", "it states what another clause of its quote denies"
        if problem is not None:
            return problem
    return scope(said, source, sentence)


def _opposite(said: Clause, source: Clause) -> tuple[str, str] | None:
    """A word of the clause its quote lacks whose opposite (its antonym in WordNet:
    "rejects" for "accepts", "abolished" for "established") the quote has where the
    clause has not."""
    # (the quote's word is one the clause does not say itself: "fitness" beside "unfit" is another word)
    said_lemmas = {w for u in said.tokens for w in (*u.lemmas, u.low)}
    for t in said.content:
        if t.forms & source.forms or any(_again(u, t) for u in source.tokens):
            continue  # ("opened … again" for "reopened")
        # (a directional word, "fell" against "rise", is read bound to its thing by
        # direction; but an outcome's opposite, "blocked" against "approved", is read here)
        directional = direction_of(t) is not None
        inflected_verb = t.verb and t.low.endswith(("ed", "ing"))  # ("topped" is no top of a thing)
        for lemma in {*t.lemmas, t.low}:
            # (a converse, "borrow from" for "lend to", is read with its sides by converse)
            worded = antonyms(lemma, "verb" if inflected_verb and lemma != t.low else None)
            opposite = ((frozenset() if directional else worded) | OUTCOMES.get(lemma, frozenset())) \
                - CONVERSES.get(lemma, frozenset())
            against = [u for u in source.tokens if u.low.isalpha() and not {*u.lemmas, u.low} & said_lemmas
                       and {*u.lemmas, u.low} & opposite]  # (its words of certainty too: "established")
            if against and _done_to(said, t) and not any(_done_to(source, u) for u in against):
                continue  # "those given the drug" for "patients taking the drug": one act, seen from each side
            if against and denied_before(said, said.tokens.index(t)) \
                    and all(_prefix_negated(u.low, t.low) for u in against):
                continue  # "no statistically distinguishable difference" for "indistinguishable"
            if against:
                return "negation", f'it says "{t.text}" where its quote says the opposite, "{against[0].text}"'
    return None


def _again(word: Token, t: Token) -> bool:
    """``word`` is ``t`` done again ("reopened" for "opened")."""
    return word.low.startswith("re") and len(word.low) > 5 and bool(token(word.low[2:], 0, 0).forms & t.forms)


def _prefix_negated(word: str, plain: str) -> bool:
    """``word`` is ``plain`` with a negating prefix ("indistinguishable", "unsafe")."""
    return any(word == prefix + plain for prefix in NEGATIVE_PREFIXES)


# Those a study or a treatment is done to ("those given the drug", "patients sent home").
_TREATED = frozenset("those people patients participants subjects volunteers children adults women men mice rats "
                     "animals individuals infants".split())


def _done_to(clause: Clause, t: Token) -> bool:
    """``t`` is a participle said of the thing before it, as done to it ("those given
    the drug", "patients sent home")."""
    k = next((n for n, u in enumerate(clause.tokens) if u is t), 0)
    return k > 0 and t.verb and t.low.endswith(("ed", "en")) and clause.tokens[k - 1].low in _TREATED


# Universal words that say the same ("each server", "every server", "all servers").
_UNIVERSAL = {"each": "every", "all": "every", "invariably": "always", "universally": "always"}


_ALL_OF = frozenset("entirely wholly purely".split())
# A quote that restricts says "only" in other words ("Enrolment was restricted to adults",
# "not completed until 1345").
_RESTRICTS = frozenset("restricted restrict restricts limited confined reserved".split())


_GENERIC_VERBS = frozenset("is are does do has have can must".split())


def _generic_plural(said: Clause, source: Clause) -> bool:
    """The thing the sentence says "each", "every" or "any" of is, in its quote, a bare
    plural, the subject of a clause stated in the present ("Reads are served from the
    nearest replica"): a rule of every one, which "each" restates. Not a past finding
    ("Patients improved")."""
    words = said.tokens
    things = {min(words[n + 1].forms) for n, t in enumerate(words[:-1]) if t.low in ("each", "every", "any")
              and is_content(words[n + 1])}
    present = any(u.low in _GENERIC_VERBS or u.verb and u.low.endswith("s") and u.low != u.lemma
                  for u in source.tokens)
    verb = next((n for n, u in enumerate(source.tokens) if n and (u.low in AUX or u.verb)), len(source.tokens))
    return bool(things) and present and any(  # (the plural its subject, before its verb)
        min(u.forms) in things and u.low != u.lemma and u.low.endswith("s")
        and not (n and (source.tokens[n - 1].low in QUANTIFIERS or source.tokens[n - 1].low[:1].isdigit()
                        or source.tokens[n - 1].low in ("the", "these", "those", "its", "their")))
        for n, u in enumerate(source.tokens[:verb]))


# "only two of the houses", "just 3 of the 40 wells": a small number, said as one; and a
# floor that leaves the number open ("at least two of the samples").
_ONLY_N_OF = re.compile(r"\b(?:only|just|merely)\s+(?:\d[\d,]*|one|two|three|four|five|six|seven|eight|nine|ten|"
                        r"a handful)\s+of\b", re.I)
_AT_LEAST_N_OF = re.compile(r"\bat least\s+(?:\d[\d,]*|one|two|three|four|five|six|seven|eight|nine|ten)\s+of\b",
                            re.I)


def _counted_set(said: Clause, source: Clause) -> bool:
    """The clause's "each" or "all" is of a set the quote counts, its figure said before
    it ("the study's 312 participants, all aged 65 or above", "18 segments, each coated
    in gold"): every one of a counted set is the set, no generalisation."""
    toks = said.tokens
    # (standing alone, not before the thing it quantifies: "for all investors" is no
    # counted set's "all", whatever figure came before)
    at = next((t.start for n, t in enumerate(toks) if t.low in ("each", "all") and (
        n + 1 == len(toks) or toks[n + 1].low.endswith(("ed", "ing"))
        or not is_content(toks[n + 1]) and toks[n + 1].low not in _BEFORE_A_NOUN)), None)
    if at is None:
        return False
    theirs = [f for f in figures(source.text) if source.start <= f.start < source.end]
    return any(said.start <= f.start and f.end <= at and f.value >= 2 and any(same_figure(f, q) for q in theirs)
               for f in figures(said.text))


_BEFORE_A_NOUN = frozenset("the its their his her our your these those of".split())


def _level_word(clause: Clause) -> str:
    """The clause's strongest quantifier word ("many", "most", "all")."""
    found = [(QUANTIFIERS[w], w) for w in clause.words() if w in QUANTIFIERS]
    return max(found)[1] if found else "more"


def _quantifiers(said: Clause, source: Clause) -> tuple[str, str] | None:
    (mine, my_often, my_rare, my_only) = quantity(said)
    (theirs, their_often, their_rare, their_only) = quantity(source)
    mine_text, theirs_text = said.text[said.start:said.end], source.text[source.start:source.end]
    if theirs is None and (_A_FEW_OF.search(theirs_text) or _A_NUMBER_OF.search(theirs_text)):
        theirs = 1  # "a small number of users", "a handful of", "a number of": some, not most
    if _NOT_ALL.search(theirs_text) and not _NOT_ALL.search(mine_text) and _NONE & set(said.words()):
        return "quantifier", 'it says none where its quote says "not all"'
    merely = _ONLY_N_OF.search(theirs_text)
    if merely and (mine or 0) >= 2 and not _ONLY_N_OF.search(mine_text):
        return "quantifier", f'it says "{_level_word(said)}" where its quote says "{merely.group()[:-3].lower()}"'
    if _ONLY_N_OF.search(mine_text) and _AT_LEAST_N_OF.search(theirs_text):
        return "quantifier", 'it says "only" where its quote says "at least"'
    one_of = _ONE_OF.search(theirs_text)
    if one_of and not _AMONG.search(mine_text) and re.search(rf"\bthe\s+{re.escape(one_of.group(1))}\b", mine_text, re.I):
        return "quantifier", f'it says "the {one_of.group(1)}" where its quote says "one of the {one_of.group(1)}"'
    if (their_rare and not my_rare) or (their_often is not None and my_often is None):
        # "rarely", "typically" of a part of the quote the clause does not restate
        _, part_often, part_rare, _ = quantity(parts_sharing(source, said))
        their_rare = their_rare and part_rare
        their_often = part_often if my_often is None else their_often
    if my_only and not their_only and not (_ALL_OF | _RESTRICTS) & set(source.words()) \
            and until_after_negation(source) is None:
        # ("solely with its NNUE network" for "relies entirely on the NNUE network")
        return "quantifier", 'it says "only" where its quote does not'
    if their_only and not my_only and (mostly := _MOSTLY & set(said.words())) and not _MOSTLY & set(source.words()):
        return "quantifier", f'it says "{min(mostly)}" where its quote says "only"'  # (there are others, it says)
    small = any(" ".join(c.words()).count("small number") for c in (said, source))  # "few" or "a few", as read
    if my_rare != their_rare and not small:
        return "quantifier", "it changes how rare or common its quote says this is"
    generic = mine == 4 and theirs is None and (_generic_plural(said, source) or _counted_set(said, source))
    if generic:
        theirs = 4  # "each read is served from …" for "Reads are served from …": a rule of every one
    if mine is not None and mine > (theirs if theirs is not None else 3) or every_unit(said) & quantified_units(source):
        return "quantifier", "it generalises beyond its quote's quantifier"  # ("every day" for "on some days")
    if mine == 3 and theirs == 4 or my_often == 1 and (their_often or 0) >= 2:
        # ("most requests" for "every request", "occasionally" for "often": the sentence
        # says that some do not; "some of" for "all of" says less and stays true)
        return "quantifier", "it weakens its quote's quantifier, implying exceptions the quote does not have"
    mostly = _says_most(source) or _MOSTLY & set(source.words())
    share = share_of(theirs_text) if _says_most(said) and not mostly else None
    if share is not None and share <= 0.5:
        return "quantifier", f"it says most where its quote gives {share:.0%} or less"
    if a_few(said) and not a_few(source) and theirs is not None and theirs >= 2:
        return "quantifier", 'it says "a few" where its quote says many or most'
    extra = Counter(_UNIVERSAL.get(w, w) for w in universals(said)) \
        - Counter(_UNIVERSAL.get(w, w) for w in universals(source))
    if extra and not (generic and len(universals(said)) == 1):
        return "quantifier", f'it says "{min(extra)}" more often than its quote does'
    if my_often is not None and my_often > (their_often if their_often is not None else 3):
        return "quantifier", "it says this happens more often than its quote does"
    # each frequency word against its quote's, not only the strongest: "regularly …, usually
    # against stronger opponents" for "occasionally …, usually against stronger opponents"
    mine_left = Counter(frequencies(said)) - Counter(frequencies(source))
    theirs_left = Counter(frequencies(source)) - Counter(frequencies(said))
    if mine_left and theirs_left and max(mine_left) > max(theirs_left):
        return "quantifier", "it says this happens more often than its quote does"
    limiting, _, _, _ = quantity(source, subject_only=True, about=said.forms)
    # ("some historians" said as "historians": a degree elsewhere, "attribute it primarily
    # to drought", limits no subject; "mainly" may restate the quote's "most")
    my_limiting = mine if mine is None or limiting != 1 else quantity(said, subject_only=True, about=source.forms)[0]
    if my_limiting is None and _A_NUMBER_OF.search(mine_text):
        my_limiting = 1  # "in a number of welded joints" for "in several of the welded joints"
    # ("where dogs were walked often" for "with frequent dog walking": the same frequency)
    restated = my_often == limiting and bool({"frequent", "infrequent"} & set(source.words()))
    if my_limiting is None and limiting is not None and limiting < 4 and not restated:
        return "quantifier", "it drops the quote's limiting quantifier (some, many, most...)"
    if my_often is None and their_often is not None and their_often < 4:
        return "quantifier", "it drops the quote's frequency (sometimes, often, usually...)"
    return None


_MOSTLY = frozenset("mostly mainly primarily largely chiefly predominantly".split())
_A_FEW_OF = re.compile(r"\b(?:a\s+small\s+number|a\s+handful|a\s+minority)\s+of\b", re.I)
_A_NUMBER_OF = re.compile(r"\ba\s+number\s+of\b", re.I)
_NOT_ALL = re.compile(r"\bnot\s+(?:all|every|everyone|everything|each)\b", re.I)
_NONE = frozenset("none no nobody nothing never neither".split())
# "one of the main causes": one among others, which "the main cause" is not
_ONE_OF = re.compile(r"\bone\s+of\s+the\s+(\w+)", re.I)
_AMONG = re.compile(r"\b(?:one\s+of|among)\s+the\b", re.I)


_PERMITS = frozenset("may can might could".split())


def _says_most(clause: Clause) -> bool:
    """"most of the states", "the majority of", "nearly all": more than half (not the
    superlative "the most common")."""
    words = clause.words()
    return any(w == "most" and (i == 0 or words[i - 1] not in ("the", "at")) or w == "majority"
               or w == "all" and i and words[i - 1] in ("nearly", "almost") for i, w in enumerate(words))


# Advice, weaker than a duty: "drivers are advised to carry chains" does not say they must.
_ADVICE = re.compile(r"\b(?:advised|recommended|encouraged|urged)\s+(?:to|that)\b|\bshould\b"
                     r"|\b(?:advises?|recommends?|encourages?|urges?)\b", re.I)
# A duty: "must", "are required to", "requires", "mandatory".
_DUTY = re.compile(r"\bmust\b|\brequire[sd]?\b|\b(?:mandatory|compulsory|obligatory|obliged)\b", re.I)


# A sentence may claim less than its quote ("may reduce" for "reduces"), but not turn
# what the quote states as proved, confirmed or to come ("will close") into a possibility.
_POSSIBLY = frozenset("may might could possibly perhaps probably suggest suggests suggested appear appears seem "
                      "seems".split())
_SURE = frozenset("will confirm confirms confirmed".split())
_WILL = frozenset("will shall".split())
_MAY = frozenset("may can".split())


def _done(said: Clause, source: Clause) -> bool:
    """``said`` says an act ``source`` only intends is done: its verb in a past form."""
    acts = intended(source)
    return bool(acts) and any(t.verb and t.low != t.lemma and t.low.endswith(("ed", "en", "t"))
                              and acts & set(t.lemmas) for t in said.tokens)


def _modality(said: Clause, source: Clause) -> tuple[str, str] | None:
    # "must complete" restates "requires … to complete", "forcing … to rebuild" or a rule
    # stated plainly ("the limit … is three years"): an obligation, not certainty. A
    # hedged quote is still hedged ("may be brought" is not "must be brought").
    # (an intention, "hopes to begin", is checked against a sentence that says the act will be)
    # (or against one that says it is done: "has converted the mill" for "plans to convert it")
    theirs = certainty(source, about=said.forms, intent=bool(_WILL & set(said.words())) or _done(said, source))
    obliged = set(said.words()) & STRONG == {"must"} and theirs >= 2
    # ("lets a tenant end the lease" for "a tenant may terminate it": a permission, as the
    # quote's "may" gives it; not for a quote that gives the permission itself, hedged:
    # "may be entitled to")
    permitted = theirs == 1 and permits(said) and not permits(source) and bool(_MAY & set(source.words()))
    if certainty(said) > theirs and not obliged and not permitted and not _strong_word_quoted(said, source):
        return "modality", "it is more certain than its quote (a hedge dropped or certainty added)"
    if certainty(said, about=source.forms) == 1 and (theirs == 3 or theirs == 2 and (
            _POSSIBLY & set(said.words()) and (_SURE & set(source.words()) or _past_hedged(said)) or _doubted(said))):
        return "modality", "it is less certain than its quote (a certainty turned into a hedge)"
    mine_text, theirs_text = said.text[said.start:said.end], source.text[source.start:source.end]
    advice, duty = _ADVICE.search(theirs_text), _DUTY.search(mine_text)
    if advice and duty and not _ADVICE.search(mine_text) and not _DUTY.search(theirs_text):
        return "modality", f'it says "{duty.group().lower()}" where its quote says "{advice.group()}"'  # not a duty
    advised, bound = _ADVICE.search(mine_text), _DUTY.search(theirs_text)
    if advised and advised.group().lower() != "should" and bound and not _ADVICE.search(theirs_text) \
            and not _DUTY.search(mine_text):  # ("should" for "must" is how instructions are reworded)
        return "modality", f'it says "{advised.group()}" where its quote says "{bound.group().lower()}"'  # a duty
    mine, theirs = set(said.words()), set(source.words())
    words = said.words()
    granted = {w for n, w in enumerate(words) if w in _PERMITS and words[n + 1:n + 2] != ["not"]}  # ("may not": a ban)
    if "must" in theirs and granted and not theirs & _PERMITS and "must" not in mine:
        return "modality", f'it says "{min(granted)}" where its quote says "must"'  # leave, not duty
    changes = any(direction_of(t) and verbness(said, i) >= 2 for i, t in enumerate(said.tokens))
    if (mine & CAUSAL or changes) and not theirs & CAUSAL and theirs & CORRELATIONAL and not mine & CORRELATIONAL:
        return "modality", "it states as cause what its quote states as association"
    return None


def _doubted(said: Clause) -> bool:
    """The clause puts its matter in doubt ("it remains uncertain whether …", "it is
    unclear if …"): that the question is open, which a quote stating it plainly denies."""
    words = said.words()
    return any(w in ("unclear", "uncertain", "unknown", "undetermined", "unresolved")
               and words[n + 1:n + 2] in (["whether"], ["if"]) for n, w in enumerate(words))


def _past_hedged(said: Clause) -> bool:
    """The clause hedges a past event ("may have been caused", "might have closed"): what
    happened, which a quote stating it plainly does not leave open."""
    words = said.words()
    return any(w in ("may", "might", "could") and words[n + 1:n + 2] == ["have"] for n, w in enumerate(words))


def _strong_word_quoted(said: Clause, source: Clause) -> bool:
    """The sentence's strong words ("guaranteed", "proves") are each in a clause of its
    quote sentence that shares a content word with it, though not the clause read
    against the sentence ("…, which increases latency but guarantees that reads are
    consistent"), and the quote sentence is not hedged."""
    strong = [t for t in said.tokens if t.low in STRONG]
    if not strong or set(source.text.lower().split()) & HEDGES:
        return False
    mine = {f for t in said.content if t.low not in STRONG for f in t.forms}
    theirs = [c for c in clauses(source.text) if any(t.forms & mine for t in c.content if t.low not in STRONG)]
    return all(any(t.forms & u.forms for c in theirs for u in c.tokens) for t in strong)


def contradicts(statement: str, other: str) -> str | None:
    """The reason (a category: "negation", "quantifier", "comparative", "role",
    "number") when ``other`` states the opposite of ``statement`` about the same
    subject; None when it does not (unrelated, or agreeing)."""
    for a, b in ((statement, other), (other, statement)):
        pair = aligned_pair(a, b)
        if pair is None:
            continue
        said, source = pair
        same_subject = bool(subject(said) & subject(source))
        if polarity(said, source) and same_subject and same_verb(said, source):
            return "negation"  # the same subject, the same verb, one of them negated
        problem = direction(said, source) or roles(said, source)
        if problem and problem[0] in ("comparative", "role") and directions(source) and same_subject:
            return problem[0]
        (mine, my_often, _, _), (theirs, their_often, _, _) = quantity(said), quantity(source)
        if (mine == 4 and theirs is not None and theirs < 4) or \
                (my_often == 4 and their_often is not None and their_often < 4):
            return "quantifier"
        if _figures_disagree(a, b):
            return "number"
    return None


def _figures_disagree(a: str, b: str) -> bool:
    """Both state a figure in the same unit, and no figure of one restates any of the other."""
    fa, fb = figures(a), figures(b)
    units = {f.unit for f in fa if f.unit} & {f.unit for f in fb if f.unit}
    if not units:
        return False
    return not any(same_figure(x, y) for x in fa for y in fb if x.unit in units)


