"""New matter: what a sentence adds that none of its quotes says.

A faithful restatement rewords its quotes a word here and there; a phrase of content
words none of them has ("to counter rising food prices"), a reason they do not give
("after repeated raids") or a record or superlative they do not state ("a club record",
"unanimously", "the lowest") is new matter, and so is a frequency they do not state
("daily flights") or an inference they do not draw (", indicating it could host
oceans"). These readers find such words in the
clauses of a sentence for the anchoring (``shared.verification.meaning_anchor``), and
the parts of a compound the sentence says both of ("leave school" for "school-leaving").
"""

from __future__ import annotations

from collections.abc import Sequence

from shared.verification.clauses import Clause, Token, covered, is_content, token
from shared.verification.clause_parts import REPORTING
from shared.verification.figure_words import NUMBER_WORDS

__all__ = ["CAUSAL_LINKS", "added_part", "cause_added", "compound_parts", "extreme", "frequency_added", "gives_cause",
           "inference_added", "linked_across", "new_run", "said_of_both", "superlative"]


# Words that rank a thing against every other: a record, a first, a unanimous vote.
_EXTREMES = frozenset("record unanimous unanimously unprecedented ever all-time first-ever".split())


def extreme(t: Token) -> bool:
    """``t`` claims a record or a superlative ("record", "unanimously", "lowest")."""
    return t.low in _EXTREMES or any(p in _EXTREMES for p in t.low.split("-")[1:]) or superlative(t)


def superlative(t: Token) -> bool:
    """"lowest", "best-performing", "worst"."""
    head = t.low.split("-")[0]
    return head in ("best", "worst") or head.endswith("est") and t.lemma != t.low and t.low.startswith(t.lemma[:3])


def compound_parts(t: Token, sentence_forms: set[str]) -> set[str]:
    """The forms of the parts of a compound of two words ("school-leaving"), when the
    sentence says both (a "write fault" is no "copy-on-write fault")."""
    words = t.low.split("-")
    parts = [token(p, 0, 0).forms for p in words] if len(words) == 2 and min(map(len, words)) > 2 else []
    if not parts or not all(p & sentence_forms for p in parts):
        return set()
    return {f for p in parts for f in p}


def new_run(said: Sequence[Clause], every: set[str], spans: Sequence[tuple[int, int]],
            acronyms: frozenset[str] = frozenset()) -> list[Token]:
    """The longest run of content words in a row (function words between them aside)
    that none of the quotes has: a phrase of new matter ("to counter rising food
    prices", "driven mainly by customs backlogs"), where a rewording changes a word here
    and there. Figures are read as figures, not as words, and words that spell out an
    acronym of the quotes ("tunnel boring machine" for "TBM") as that acronym."""
    best: list[Token] = []
    for clause in said:
        run: list[Token] = []
        for t in clause.tokens:
            if t.low in NUMBER_WORDS or t.low == "one":
                continue  # "from one to two years": a figure's word, checked as a figure
            if any(a <= t.start < b for a, b in spans) or (is_content(t) and covered(t, every)):
                run = []
            elif is_content(t):
                run.append(t)
                spelled = next((len(a) for a in acronyms if len(a) <= len(run)
                                and "".join(u.low[0] for u in run[-len(a):]).upper() == a), 0)
                run = run[:len(run) - spelled]
                best = max(best, run, key=len)
    return list(best)


# Words that open a cause or an antecedent event ("after repeated raids", "due to heavy rain").
_CAUSES = frozenset("after because due owing following amid thanks".split())
# (quotes that give a cause or a sequence of their own may be reworded round it: "…, so the
# dosing interval should be extended" for "Because the kidneys eliminate it …")
CAUSAL_LINKS = _CAUSES | frozenset("so since therefore thus hence as when once before led caused".split())


def gives_cause(first: Token, said: Sequence[Clause]) -> bool:
    """The run of new words that starts at ``first`` follows a word that opens a cause
    or an earlier event (an article between them aside): a reason the quotes do not give."""
    found = _placed(first, said)
    if found is None:
        return False
    clause, i = found
    before = [u.low for u in clause.tokens[max(0, i - 3):i] if u.low not in ("a", "an", "the", "to", "of")]
    return bool(before) and before[-1] in _CAUSES


def _placed(first: Token, said: Sequence[Clause]) -> tuple[Clause, int] | None:
    """The clause that holds ``first`` and its place in it, else None."""
    for clause in said:
        i = next((n for n, u in enumerate(clause.tokens) if u is first), None)
        if i is not None:
            return clause, i
    return None


def added_part(first: Token, said: Sequence[Clause], every: set[str], *, purposes: bool = False) -> bool:
    """The run of new words that starts at ``first`` lies in a part after a comma none of
    whose content words the quotes have (``every``: their word forms): a detail added
    whole (", most of them on residential streets"), not a rewording of theirs; so is a
    trailing "with" phrase ("… with one-second granularity") and an opening purpose ("To
    conserve water, …", unless the quotes give a purpose of their own: ``purposes``)
    none of whose content words the quotes have. Not an
    attribution (", the researchers found"), nor a part with a figure, which is checked
    as a figure (", including people older than 75")."""
    found = _placed(first, said)
    if found is None:
        return False
    clause, i = found
    toks = clause.tokens
    start = next((n for n in range(i, 0, -1) if clause.pause_before(n)), 0)
    end = clause.pause_after(i)
    # Or a trailing "with" phrase ("… recovery with one-second granularity"), or an
    # opening purpose ("To conserve water, …").
    # (not the complement of a verb: "diagnosed with", "associated with")
    with_at = next((n for n in range(i, start + 1, -1) if toks[n - 1].low == "with" and not toks[n - 2].verb), None)
    if with_at is not None and end == len(toks):
        start = with_at - 1
    elif start == 0 and not (toks[0].low == "to" and end < len(toks) and not purposes) \
            and not (toks[0].low in ("which", "who") and clause is not said[0]):
        return False  # (a relative clause after a comma is such a part: ", which is encrypted at rest")
    part = toks[start:end]
    if toks[start].low == "with" and i > start + 1 and toks[i].verb and toks[i].low.endswith("ed"):
        part = toks[i:end]  # (", with PostgreSQL recommended for production": said of a thing the quotes name)
    if part[0].low == "according" and not any(u.text[:1].isupper() for u in part[1:]):
        return False  # (", according to the outlook": the source's own attribution; a name is checked as a name)
    return not any(is_content(u) and covered(u, every) or u.low[:1].isdigit() for u in part) \
        and part[-1].lemma not in REPORTING


# Words that make one thing the cause of another ("driven by", "following", "led to"), or
# put it after another ("rose 8% after a drought reduced the harvest") or against it
# ("landed despite an explosion").
# ("following" is as often a time: "climbed 18% in March, following export curbs")
_LINKS = frozenset("because due owing thanks driven drove driving fuelled fueled fuelling fueling led leading caused causing "
                   "prompted prompting sent sending pushed pushing triggered after despite".split())
_NOT_VERBS = frozenset("because due owing thanks after despite".split())
# Words of a quote that gives a cause or a sequence of its own, round which a sentence may reword.
_QUOTE_LINKS = CAUSAL_LINKS | _LINKS | frozenset("cause causes result resulted resulting response consequently "
                                                 "intended reason blamed attributed".split())


def linked_across(said: Sequence[Clause], quote_forms: Sequence[set[str]], quotes_words: set[str], *,
                  verbs_only: bool = False) -> str | None:
    """A word that makes what one quote says the cause of what another says ("revenue
    growth … was driven by a restructuring", "resigned … following an inquiry"), where
    no quote gives a cause: the link, else None. The words before it rest on one quote
    and those after it on another. With ``verbs_only``, only a verb links ("led to",
    "triggered"): of two clauses of one quote, "after" restates their order, and
    "because" may restate an explanation the quote gives by a colon or an "or"."""
    if len(quote_forms) < 2 or quotes_words & _QUOTE_LINKS:
        return None
    toks = [t for c in said for t in c.tokens]
    for i, t in enumerate(toks):
        if t.low not in _LINKS or not i or _due_as_date(toks, i) or verbs_only and t.low in _NOT_VERBS:
            continue  # ("is due to be sentenced", "is due to host": a date)
        if t.low == "after" and (i + 1 == len(toks) or toks[i + 1].low == "which"):
            continue  # ("…, after which the crew received …": what came next, told in order)
        before = [u for u in toks[:i] if is_content(u)]
        after = [u for u in toks[i + 1:] if is_content(u)]
        if len(before) < 2 or len(after) < 2:
            continue
        cb = [sum(covered(u, f) for u in before) for f in quote_forms]
        ca = [sum(covered(u, f) for u in after) for f in quote_forms]
        first, second = max(range(len(cb)), key=cb.__getitem__), max(range(len(ca)), key=ca.__getitem__)
        if first != second and ca[first] < ca[second] and cb[second] < cb[first]:
            return t.text
    return None


def _due_as_date(toks: Sequence[Token], i: int) -> bool:
    """The "due" at ``i`` says when ("is due to be sentenced", "was due to host"), not why."""
    return toks[i].low == "due" and i > 0 and toks[i - 1].low in ("is", "are", "was", "were")


# Words that open a cause ("because of falling demand", ", driven by a marine heatwave"):
# the openers of a cause or an earlier event less those of a sequence alone.
_CAUSE_OPENERS = _CAUSES - {"after", "following"}
_CAUSE_VERBS = frozenset("driven caused fuelled fueled triggered prompted spurred sparked".split())


def cause_added(said: Sequence[Clause], every: set[str], quotes_words: set[str]) -> str | None:
    """A cause the sentence gives where no quote gives one ("The factory cut 300 jobs
    because of falling demand" for "The factory cut 300 jobs"): more than half of its
    phrase's content words are in none of the quotes (``every``: their word forms), so it
    is no rewording of a reason the quote gives another way. The phrase, else None. A
    quote that gives a cause or a sequence of its own may be reworded round it
    (:func:`linked_across` reads a cause taken from another quote)."""
    if quotes_words & _QUOTE_LINKS:
        return None
    for clause in said:
        toks = clause.tokens
        for i, t in enumerate(toks):
            opens = t.low in _CAUSE_OPENERS or t.low in _CAUSE_VERBS and toks[i + 1:i + 2] \
                and toks[i + 1].low == "by" and (i == 0 or clause.pause_before(i))  # (not "slabs triggered by…")
            if not opens or _due_as_date(toks, i):
                continue
            part = toks[i:clause.pause_after(i)]
            words = [u for u in part[1:] if is_content(u)]
            if len([u for u in words if not covered(u, every)]) * 2 > len(words):
                return " ".join(u.text for u in part)  # (most of it new: not the quote's reason reworded)
    return None


def said_of_both(clause: Clause, quote_forms: Sequence[set[str]]) -> str | None:
    """The clause says one predicate of two things ("A and B both won …", "A, like B,
    inhibits …") that rest on two quotes, and a word of the predicate is in one of those
    quotes only, and not the other's: what the predicate is wrongly said of, else None."""
    toks = clause.tokens
    words = [t.low for t in toks]
    groups: tuple[list[Token], list[Token]] | None = None
    if "both" in words[2:]:
        b = words.index("both", 2)
        a = max((n for n in range(1, b) if words[n] == "and"), default=None)
        end = b - 1 if words[b - 1] in ("are", "were", "have", "had") else b
        if a is not None and a + 1 < end:
            groups, predicate = (toks[:a], toks[a + 1:end]), toks[b + 1:]
    like = next((n for n in range(1, len(toks) - 1) if words[n] == "like" and clause.pause_before(n)), None)
    if groups is None and like is not None:
        end = next((n for n in range(like + 1, len(toks)) if clause.pause_before(n)), None)
        if end is not None:
            groups, predicate = (toks[:like], toks[like + 1:end]), toks[end:]
    if groups is None:
        return None
    homes = []
    for group in groups:
        content = [t for t in group if is_content(t)]
        scores = [sum(covered(t, forms) for t in content) for forms in quote_forms]
        if not content or not max(scores):
            return None
        homes.append(max(range(len(scores)), key=scores.__getitem__))
    if homes[0] == homes[1]:
        return None
    said = [t for t in predicate if is_content(t) and not t.low[:1].isdigit()]
    for n, home in enumerate(homes):
        other = quote_forms[homes[1 - n]]
        if any(not covered(t, quote_forms[home]) and covered(t, other) for t in said):
            return " ".join(t.text for t in groups[n] if is_content(t))
    return None


# Words of how often a thing happens, and the words of a quote that state the same.
_HOW_OFTEN = {word: frozenset(same.split()) for word, same in (
    ("daily", "daily day days nightly"), ("nightly", "nightly night nights daily"),
    ("weekly", "weekly week weeks"), ("fortnightly", "fortnightly fortnight weeks"),
    ("monthly", "monthly month months"), ("quarterly", "quarterly quarter quarters"),
    ("annually", "annually annual yearly year years"), ("yearly", "annually annual yearly year years"),
    ("hourly", "hourly hour hours"))}


def frequency_added(said: Sequence[Clause], quote_words: set[str]) -> Token | None:
    """A word of how often a thing happens ("daily direct flights") that no quote states
    in any of its words ("weekly" for "every week" is the quote's), else None."""
    return next((t for c in said for t in c.tokens if t.low in _HOW_OFTEN and not quote_words & _HOW_OFTEN[t.low]),
                None)


# Words that open an inference drawn from what was said (", suggesting that …").
_INFERRING = frozenset("indicating suggesting implying meaning signalling signaling showing hinting".split())


def inference_added(said: Sequence[Clause], quote_forms: Sequence[set[str]], quote_words: set[str]) -> str | None:
    """A part after a pause opened by a word of inference (", indicating it could host
    liquid oceans") that no quote draws (none has that word), most of whose content words
    no quote says: the part, else None."""
    own = set().union(*quote_forms)
    for clause in said:
        for i, t in enumerate(clause.tokens):
            if t.low not in _INFERRING or not clause.pause_before(i) or t.lemma in quote_words \
                    or t.low in quote_words:
                continue
            part = clause.tokens[i + 1:clause.pause_after(i)]
            words = [u for u in part if is_content(u)]
            if words and 2 * len([u for u in words if u.forms & own]) < len(words):
                return clause.text[t.start:part[-1].end]
    return None
