"""Anchoring: which quote, and which clause of it, each clause of a sentence restates.

A clause is anchored to the quote that holds most of its content words. Its figures
and names must come from that quote, and so must its other content words, except
new words (synonyms, which only the overall share of supported words limits) and the
members of a list ("X and Y both reduce latency") that each come from a quote saying
the same of them. A word that only another quote has is a sign of a merge: a
sentence assembled from the subject of one quote and the predicate of another.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from shared.verification.derived import is_year, restated
from shared.verification.figures import Figure, figures, period_named, same_figure
from shared.verification.clause_reading import direction_of, only_a_thing
from shared.verification.clause_roles import (
    dated, fronted_parts, passive, pivots, relative_parts, subject, trailing_parts, verbness,
)
from shared.verification.quote_subjects import (
    CARRIERS, aligned_clause, alignment, gives_predicate, grafted_subject, keeps_subject, other_setting, own_subject,
    stands_in, subject_of,
)
from shared.verification.anaphora import anaphoric
from shared.verification.lexicon import CONDITION_OPENERS
from shared.verification.clauses import (
    Clause, Token, abbreviated, broader_forms, clauses, covered, forms_of, is_content, names, token,
)
from shared.verification.figure_words import NUMBER_WORDS

__all__ = ["Anchored", "Failure", "anchor_all"]

# Nouns a sentence may bring that none of its quotes has: room for rewording ("its
# prevalence shows no known variation" for "affects … with no known differences"), not
# for new matter. Three, not two: on the tuning pairs two more faithful rewordings are
# kept and no false sentence more; the machine-turned sentences are unchanged.
MAX_NEW_TERMS = 3
# New words of any kind: at most this many, or this share of its content words.
MAX_NEW_WORDS, MAX_NEW_SHARE = 4, 0.5
# New content words in a row that make a phrase of new matter.
MAX_NEW_RUN = 3
# How many content words another quote must give a clause, beyond its anchor quote's,
# for the clause to condense both ("glaciers lost 267 Gt a year, about 21% of sea-level rise").
MERGE_PART = 2
_COORDINATORS = frozenset({"and", "or", "both", "either", "nor", "as", "well", "plus"})


@dataclass(frozen=True)
class Failure:
    category: str  # "empty", "terms", "number", "name", "merge"
    reason: str
    support: float = 0.0
    missing: tuple[str, ...] = ()


def _fail(category: str, reason: str, support: float = 0.0, missing: Sequence[str] = ()) -> Failure:
    return Failure(category, reason, support, tuple(missing))


@dataclass
class Anchored:
    # For each of the sentence's clauses, the readings it may have: (the clause, the
    # quote clause it restates, that whole quote as one clause), one per quote that
    # holds as many of its words as any (a clause that two quotes share rests on
    # whichever of them it agrees with).
    pairs: list[list[tuple[Clause, Clause, Clause]]]
    support: float


_ACRONYM = re.compile(r"\b[A-Z]{2,6}\b")


# Words that rank a thing against every other: a record, a first, a unanimous vote.
_EXTREMES = frozenset("record unanimous unanimously unprecedented ever all-time first-ever".split())


def _extreme(t: Token) -> bool:
    """``t`` claims a record or a superlative ("record", "unanimously", "lowest")."""
    return t.low in _EXTREMES or any(p in _EXTREMES for p in t.low.split("-")[1:]) or _superlative(t)


def _superlative(t: Token) -> bool:
    """"lowest", "best-performing", "worst"."""
    head = t.low.split("-")[0]
    return head in ("best", "worst") or head.endswith("est") and t.lemma != t.low and t.low.startswith(t.lemma[:3])


def _compound_parts(t: Token, sentence_forms: set[str]) -> set[str]:
    """The forms of the parts of a compound of two words ("school-leaving"), when the
    sentence says both (a "write fault" is no "copy-on-write fault")."""
    words = t.low.split("-")
    parts = [token(p, 0, 0).forms for p in words] if len(words) == 2 and min(map(len, words)) > 2 else []
    if not parts or not all(p & sentence_forms for p in parts):
        return set()
    return {f for p in parts for f in p}


def _new_run(said: Sequence[Clause], every: set[str], spans: Sequence[tuple[int, int]],
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
_CAUSAL_LINKS = _CAUSES | frozenset("so since therefore thus hence as when once before led caused".split())


def _gives_cause(first: Token, said: Sequence[Clause]) -> bool:
    """The run of new words that starts at ``first`` follows a word that opens a cause
    or an earlier event (an article between them aside): a reason the quotes do not give."""
    for clause in said:
        toks = clause.tokens
        i = next((n for n, u in enumerate(toks) if u is first), None)
        if i is None:
            continue
        before = [u.low for u in toks[max(0, i - 3):i] if u.low not in ("a", "an", "the", "to", "of")]
        return bool(before) and before[-1] in _CAUSES
    return False


def _coordinated(clause: Clause, t: Token) -> bool:
    """``t`` is a member of a list in the clause ("X and Y", "X, Y or Z", "both X and Y")."""
    words = clause.words()
    i = next((n for n, u in enumerate(clause.tokens) if u is t), None)
    if i is None:
        return False
    near = words[max(0, i - 2):i] + words[i + 1:i + 3]
    return any(w in _COORDINATORS for w in near)


def anchor_all(sentence: str, quotes: Sequence[str], *, min_support: float) -> Anchored | Failure:
    """Each clause of ``sentence`` with its anchor quote's aligned clause, or the
    failed assessment (figures, names, merge, terms)."""
    quote_clauses = [clauses(q) for q in quotes]
    quote_forms = [forms_of(c) for c in quote_clauses]
    # What a quote covers: its words and the broader names of its nouns ("birds" for "eagles").
    # And the parts of a compound the sentence says all of ("leave school" for "school-leaving").
    sentence_clauses = clauses(sentence)
    sentence_forms = forms_of(sentence_clauses)
    cover = [forms | {f for c in cs for t in c.content for f in broader_forms(t.low)}
             | {f for c in cs for t in c.content for f in _compound_parts(t, sentence_forms)}
             for forms, cs in zip(quote_forms, quote_clauses, strict=True)]
    every = set().union(*cover)
    said = [c for c in sentence_clauses if c.content]
    if not said:
        return _fail("empty", "no content words to check")
    sentence_figures = figures(sentence)
    # The words of a figure ("four times", "a third", "1 TB") are checked as figures.
    spans = [(f.start, f.end) for f in sentence_figures]
    content = {min(t.forms): t for c in said for t in c.content
               if not any(a <= t.start < b for a, b in spans)} or {min(t.forms): t for c in said for t in c.content}
    unsupported = sorted(t.low for t in content.values() if not covered(t, every))
    support = round(1 - len(unsupported) / len(content), 3)
    pairs: list[list[tuple[Clause, Clause, Clause]]] = []
    for n, clause in enumerate(said):
        before = said[n - 1] if n and clause.tokens[0].low in _RELATIVES else None
        problem = _anchor(sentence, clause, quotes, quote_clauses, quote_forms, sentence_figures, support, before,
                          cover)
        if n and not isinstance(problem, Failure):
            problem = _carried_subject(said[n - 1], pairs[-1], clause, problem, quotes) or problem
        if isinstance(problem, Failure):
            each = _each_part(sentence, clause, quotes, quote_clauses, quote_forms, sentence_figures, support, cover)
            if each is not None:
                pairs += each
                continue
        if isinstance(problem, Failure):
            return problem
        pairs.append(problem)
    ranked = any(_superlative(u) or u.low in ("most", "least") for qc in quote_clauses for c in qc for u in c.tokens)
    extreme = next((t for c in said for t in c.tokens if _extreme(t) and not covered(t, every)
                    and not (ranked and _superlative(t))), None)  # ("the lowest area" for "the smallest")
    if extreme is not None:  # "a club record", "the lowest on record", "unanimously", "first-ever"
        return _fail("terms", f'it says "{extreme.text}", a record or superlative none of its quotes states',
                     support, [extreme.text])
    if support < min_support:
        return _fail("terms", f"only {support:.0%} of its terms are in its quotes (needs {min_support:.0%});"
                              f" not found: {', '.join(unsupported[:8])}", support, unsupported)
    run = _new_run(said, every, spans, frozenset(_ACRONYM.findall(" ".join(quotes))))
    if len(run) >= MAX_NEW_RUN or len(run) >= 2 and _gives_cause(run[0], said) \
            and not any(w in _CAUSAL_LINKS for q in quotes for w in re.findall(r"[a-z]+", q.lower())):
        return _fail("terms", f"it adds what none of its quotes says: {' '.join(t.text for t in run)}", support,
                     unsupported)
    things = [w for w in unsupported if only_a_thing(w)]
    if len(things) > MAX_NEW_TERMS:
        return _fail("terms", f"{len(things)} of its nouns are in none of its quotes (at most {MAX_NEW_TERMS}"
                              f" may reword them): {', '.join(things[:8])}", support, unsupported)
    if len(unsupported) > max(MAX_NEW_WORDS, MAX_NEW_SHARE * len(content)):
        return _fail("terms", f"{len(unsupported)} of its terms are in none of its quotes: "
                              f"{', '.join(unsupported[:8])}", support, unsupported)
    return Anchored(pairs, support)


def _anchor(sentence: str, clause: Clause, quotes: Sequence[str], quote_clauses: Sequence[list[Clause]],
            quote_forms: Sequence[set[str]], sentence_figures: Sequence[Figure], support: float,
            antecedent: Clause | None = None, cover: Sequence[set[str]] | None = None,
            ) -> list[tuple[Clause, Clause, Clause]] | Failure:
    """The clause's readings (see :class:`Anchored`), or why it has no anchor.
    ``antecedent``: the clause a relative clause ("which includes…") speaks of, whose
    words count as its subject's."""
    speaks_of = clause if antecedent is None else Clause.joined([antecedent, clause])
    keys = clause.content
    cover = cover or quote_forms
    covers = [[t for t in keys if covered(t, forms)] for forms in cover]
    # A figure the clause shares with a quote ties it to that quote as a word does.
    mine = [f for f in sentence_figures if clause.start <= f.start < clause.end + 1]
    shared = [sum(any(same_figure(f, q) for q in figures(quote)) for f in mine) for quote in quotes]
    best = max(range(len(quotes)), key=lambda i: (len(covers[i]) + shared[i], -i))
    helpers = {best}
    grafted = grafted_subject(clause, quotes, quote_clauses, quote_forms, best)
    if grafted:
        return _fail("merge", f'it gives "{grafted}" what another quote says of something else', support, [grafted])
    for t in keys:
        if covered(t, cover[best]) or direction_of(t) or t.low == "much":
            continue  # (a direction, "more", "as much", "rose", is the direction check's to read)
        # (a word another quote has only as a synonym is a rewording, not a sign of a merge)
        others = [j for j, forms in enumerate(quote_forms) if j != best and t.forms & forms]
        if not others:
            continue  # a new word: counted by the share of supported terms
        parallel = [j for j in others if _coordinated(clause, t) and len(covers[j]) >= len(keys) - 2]
        # A clause that condenses two quotes: the other quote gives a part of its own
        # (two words or more the anchor quote lacks), not one word grafted on.
        # And the anchor quote's own subject is still there: "epoll is limited to 1,024"
        # from "select is limited to 1,024" grafts a subject; that is a merge.
        if anaphoric(quotes[best]):
            parallel += others  # "Its effect is monitored...": the other quote names what "its" is
        elif keeps_subject(speaks_of, quote_clauses[best]):
            parallel += [j for j in others if len([u for u in covers[j] if u not in covers[best]]) >= MERGE_PART
                         and (anaphoric(quotes[j]) or keeps_subject(speaks_of, quote_clauses[j]))]
            # Or both quotes name its subject and give its predicate: "US consumer price
            # inflation eased from 9.1% … to 3.0%" from "US consumer prices rose 9.1%…" and
            # "annual inflation had slowed to 3.0%" (not "Creating a thread do not share
            # memory", one quote's subject on the other's predicate).
            own = subject(clause)
            # Or a word of the other quote's, about the same subject, added beside the anchor
            # quote's words ("Of the estimated 608,000 deaths…"), not standing in for one of
            # them ("a container whose readiness probe fails" for "whose liveness probe fails").
            if not t.forms & own and not stands_in(clause, t, quote_clauses[best], speaks_of):
                parallel += [j for j in others if anaphoric(quotes[j]) or keeps_subject(speaks_of, quote_clauses[j])]
            if t.forms & own and keeps_subject(clause, quote_clauses[best], whole=True):
                parallel += [j for j in others if t.forms & subject_of(clause, quote_clauses[j])
                             and gives_predicate(clause, own, covers[j], covers[best], quotes[j], quotes[best],
                                                  sentence_figures)]
        if not parallel:
            return _fail("merge", f'"{t.text}" comes from another quote than the rest of its clause', support, [t.text])
        helpers.add(parallel[0])
    lending = [j for j in sorted(helpers - {best}) if not anaphoric(quotes[j]) and any(
        same_figure(f, q) for f in mine for q in figures(quotes[j]))]  # (a figure it lends is said of its setting)
    other = other_setting(clause, [quote_clauses[j] for j in lending])
    if other:
        return _fail("merge", f'it gives its clause what another quote says of "{other}"', support, [other])
    problem = _figures_bound(sentence, clause, quotes, quote_clauses, helpers, sentence_figures, support)
    if problem is None:
        problem = _names_bound(sentence, clause, quotes, quote_forms, helpers, support)
    if problem is not None:
        return problem
    tied = [best, *(i for i in range(len(quotes)) if i != best and len(covers[i]) == len(covers[best]))]
    readings = []
    for i in tied:
        tied = _spanned(keys, quote_clauses[i])
        aligned = tied[0] if len(tied) == 1 else Clause.joined(tied)
        whole = quote_clauses[i]
        readings.append((clause, aligned, Clause.joined(whole)))
    if len(helpers) > 1:
        readings.append(_condensed(clause, [quotes[i] for i in sorted(helpers)]))
    return readings


def _each_part(sentence: str, clause: Clause, quotes: Sequence[str], quote_clauses: Sequence[list[Clause]],
               quote_forms: Sequence[set[str]], sentence_figures: Sequence[Figure], support: float,
               cover: Sequence[set[str]]) -> list[list[tuple[Clause, Clause, Clause]]] | None:
    """A clause that condenses two quotes in two parts, each resting on a quote of its
    own: an opening clause and the clause it opens ("After the storm came ashore …,
    90,000 households lost power"), or a clause and an apposition or a relative clause
    that adds what another quote says of something it names ("…, a rise that officials
    attributed to lower vaccination coverage", "… to a fuel target that released 3.15
    megajoules"). The readings of each part, or None. The part that goes on
    keeps its quote's subject (or that quote points back): "…, often negotiates TLS"
    has none, and no subject of one quote takes another's predicate."""
    for parts, holds in ((fronted_parts(clause), _opening_holds), (trailing_parts(clause), _addition_holds),
                         (relative_parts(clause), _addition_holds)):
        if parts is None:
            continue
        # (a relative clause speaks of the words before it, as after a comma)
        each = [_anchor(sentence, part, quotes, quote_clauses, quote_forms, sentence_figures, support,
                        parts[0] if n and part.tokens[0].low in _RELATIVES else None, cover)
                for n, part in enumerate(parts)]
        if any(isinstance(p, Failure) for p in each):
            continue
        rest = parts[1]
        own = max(range(len(quotes)), key=lambda i: (len([t for t in rest.content if covered(t, cover[i])]), -i))
        if holds is _opening_holds and (_participle(parts[0]) or dated(parts[0].tokens)):
            # "Launched in 2018, the Kepler mission …": the participle (or a time alone, "From
            # September 1972, …") is said of the clause's subject, so its quote must be about that
            # subject too (not "TESS, launched in 2018") or point back to it
            opener = max(range(len(quotes)),
                         key=lambda i: (len([t for t in parts[0].content if covered(t, cover[i])]), -i))
            if opener != own and not anaphoric(quotes[opener]) and not keeps_subject(rest, quote_clauses[opener]):
                continue
        if holds(clause, parts, quotes[own], quote_clauses[own], quote_forms):
            return each  # type: ignore[return-value]
    return None


def _participle(opening: Clause) -> bool:
    """The opening clause starts with a participle ("Launched in 2018", "Having won"): it
    has no subject of its own. (Wider than the participles that may open a qualifier in
    ``clause_roles``: "Written in 1820, …" too.)"""
    first = opening.tokens[0] if opening.tokens else None
    return first is not None and first.verb and first.low != first.lemma and first.low.endswith(("ed", "ing", "en"))


def _opening_holds(clause: Clause, parts: tuple[Clause, Clause], quote: str, quote_clauses: Sequence[Clause],
                   quote_forms: Sequence[set[str]]) -> bool:
    """The clause an opening clause opens has a subject, its own quote's (or that quote
    points back)."""
    return bool(subject(parts[1])) and (anaphoric(quote) or keeps_subject(clause, quote_clauses))


def _addition_holds(clause: Clause, parts: tuple[Clause, Clause], quote: str, quote_clauses: Sequence[Clause],
                    quote_forms: Sequence[set[str]]) -> bool:
    """An apposition or relative clause: each part from one quote, and what it adds said
    of something the clause names, not of another quote's setting ("…, with median
    speeds of 310 Mbit/s" from "In the southern region, … speeds were 310 Mbit/s")."""
    return all(_one_source(part, quote_forms) for part in parts) and not other_setting(clause, [quote_clauses]) \
        and (anaphoric(quote) or keeps_subject(clause, quote_clauses))


def _one_source(part: Clause, quote_forms: Sequence[set[str]]) -> bool:
    """Every content word of ``part`` that some quote has is in one same quote."""
    found = [{j for j, forms in enumerate(quote_forms) if t.forms & forms} for t in part.content]
    found = [f for f in found if f]
    return not found or bool(set.intersection(*found))


def _spanned(keys: Sequence[Token], quote: Sequence[Clause]) -> list[Clause]:
    """The clauses of a quote that a sentence clause restates: those that hold most of its
    words, and each clause next to them that holds words of its own (at least
    ``MERGE_PART``) that they lack ("X adjusts requests and should not be paired with Y"
    spans "X adjusts requests" and ", and should not be used with Y")."""
    held = [alignment(keys, qc) for qc in quote]
    chosen = {n for n, h in enumerate(held) if h == max(held)}
    grown = True
    while grown:
        grown = False
        forms = forms_of([quote[n] for n in sorted(chosen)])
        for n in sorted({m + d for m in chosen for d in (-1, 1)} - chosen):
            if 0 <= n < len(quote) and len([t for t in keys if covered(t, forms_of([quote[n]]))
                                            and not covered(t, forms)]) >= MERGE_PART:
                chosen.add(n)
                grown = True
                break
    return [quote[n] for n in sorted(chosen)]


def _condensed(clause: Clause, quotes: Sequence[str]) -> tuple[Clause, Clause, Clause]:
    """The reading of a clause that condenses several quotes: against what they say
    together, the clause of each that it restates joined in the quotes' order."""
    text = " ".join(q.strip() for q in quotes)
    every = clauses(text)
    parts, start = [], 0
    for quote in quotes:
        end = start + len(quote.strip())
        own = [c for c in every if start <= c.start < end]
        if own:
            parts.append(max(own, key=lambda qc: alignment(clause.content, qc)))
        start = end + 1
    return clause, Clause.joined(parts), Clause.joined(every)


_RELATIVES = frozenset("which who whose that where".split())


def _carried_subject(before: Clause, before_readings: list[tuple[Clause, Clause, Clause]], clause: Clause,
                     readings: list[tuple[Clause, Clause, Clause]], quotes: Sequence[str]) -> Failure | None:
    """A clause with no subject of its own ("…, and writes data to disk") says its
    predicate of the subject of the clause before it. When it rests
    on another quote than that clause, the quote must say it of the same thing: "Redis
    keeps its data in memory and writes to a commit log" takes Cassandra's predicate."""
    if not clause.tokens or clause.tokens[0].low not in CARRIERS or subject(clause):
        return None
    if before.tokens and before.tokens[0].low in CONDITION_OPENERS:
        return None  # "When a row grows…, TOAST moves… and compresses…": its subject is not the first words
    carried = subject(before)
    if not carried:
        return None
    earlier = {id(whole.tokens[0]) for _, _, whole in before_readings if whole.tokens}
    for _, aligned, whole in readings:
        if not whole.tokens or id(whole.tokens[0]) in earlier:
            return None  # it rests on the quote the clause before it rests on
        own = {f for f in own_subject(aligned) if not f.endswith("li")}
        if not own or own & carried or anaphoric(whole.text[whole.start:whole.end]) or _agentless(clause, aligned):
            return None
    said = " ".join(t.text for t in before.tokens if min(t.forms) in carried)
    return _fail("merge", f'it gives "{said}" what another quote says of something else',
                 missing=[t.text for t in clause.content[:1]])


def _agentless(clause: Clause, aligned: Clause) -> bool:
    """The quote says the clause's predicate in the passive, naming no one who does it
    ("base quality scores are recalibrated"): its subject is what is done to, and the
    clause's carried subject ("the pipeline … recalibrates") is not another's."""
    found = pivots(clause, aligned)
    if found is None or not passive(aligned, found[1]) or passive(clause, found[0]):
        return False  # ("…, but they should be used to limit…": both passive, of two things)
    return all(u.low != "by" for u in aligned.tokens[found[1] + 1:])


def _figures_bound(sentence: str, clause: Clause, quotes: Sequence[str], quote_clauses: Sequence[list[Clause]],
                   helpers: set[int], sentence_figures: Sequence[Figure], support: float) -> Failure | None:
    for fig in sentence_figures:
        if not clause.start <= fig.start < clause.end + 1:
            continue
        if restated(fig, [q for i in sorted(helpers) for q in figures(quotes[i])], sentence):
            continue
        if any(period_named(fig, quotes[i]) for i in helpers):
            continue  # "in a day" for "daily fluctuations"
        if _next_year(fig, quotes):
            continue  # "in 1998 and 1999" from "won in 1998" and "retained the title the following year"
        found = [(i, q) for i, quote in enumerate(quotes) if i not in helpers for q in figures(quote)
                 if same_figure(fig, q)]
        if any(_same_figure_of(sentence, fig, quotes[i], q) for i, q in found):
            continue  # "India, which supplies about 40% of global rice exports": what that quote says 40% of
        if any(keeps_subject(clause, quote_clauses[i], whole=True) for i, _ in found) and not any(
                _subject_figure_lost(clause, quote_clauses[i]) for i in helpers):
            continue  # "The 22.5-gigawatt Three Gorges Dam generated…": a figure of the same subject
        why = "comes from another quote than the rest of its clause" if found else "is not in its quotes"
        return _fail("number", f"the figure {fig.surface} {why}", support, [fig.surface])
    # Digits the quantity parser did not read as a figure ("C++17", "version 3 of"):
    # each must stand in the clause's own quotes as written.
    spans = [(f.start, f.end) for f in sentence_figures]
    own = {t.low for i in helpers for c in quote_clauses[i] for t in c.tokens}
    for t in clause.tokens:
        if t.low.isdigit() and not any(a <= t.start < b for a, b in spans) and t.low not in own:
            return _fail("number", f"the figure {t.text} is not in its quotes", support, [t.text])
    return None


_FOLLOWING_YEAR = re.compile(r"\b(?:the\s+(?:following|next|subsequent)\s+year|a\s+year\s+later|the\s+year\s+after)\b",
                             re.I)
_YEAR_BEFORE = re.compile(r"\b(?:the\s+(?:previous|preceding|prior)\s+year|a\s+year\s+(?:earlier|before))\b", re.I)


def _next_year(fig: Figure, quotes: Sequence[str]) -> bool:
    """A year the quotes give as "the following year" (or "a year earlier") of a year
    one of them states."""
    if not is_year(fig):
        return False
    years = {q.value for quote in quotes for q in figures(quote) if is_year(q)}
    text = " ".join(quotes)
    return bool(_FOLLOWING_YEAR.search(text) and fig.value - 1 in years
                or _YEAR_BEFORE.search(text) and fig.value + 1 in years)


def _subject_figure_lost(clause: Clause, quote: Sequence[Clause]) -> bool:
    """A figure in the subject of the quote's clause the clause restates ("PostgreSQL 15
    introduced…") that the clause does not have: another figure stands in for it."""
    words = {t.low for t in clause.tokens}
    aligned = aligned_clause(clause, quote)
    verb = next((n for n in range(1, len(aligned.tokens)) if verbness(aligned, n) >= 2), len(aligned.tokens))
    return any(t.low[:1].isdigit() and t.low not in words for t in aligned.tokens[:verb])


def _figure_of(text: str, end: int) -> set[str]:
    """The first three content words after a figure ending at ``end``: what it is a figure of."""
    rest = text[end:]
    if not rest.strip() or not re.match(r"\s+of\b", rest):
        return set()
    return {min(t.forms) for t in [t for t in clauses(rest)[0].tokens if is_content(t)][:3]}


def _same_figure_of(sentence: str, fig: Figure, quote: str, theirs: Figure) -> bool:
    """The sentence and the quote give the figure "of" the same thing, two content words
    or more ("about 40% of global rice exports", "about 40% of world rice exports")."""
    return len(_figure_of(sentence, fig.end) & _figure_of(quote, theirs.end)) >= 2


def _names_bound(sentence: str, clause: Clause, quotes: Sequence[str], quote_forms: Sequence[set[str]],
                 helpers: set[int], support: float) -> Failure | None:
    inside = sentence[clause.start:clause.end]
    units = " ".join(f.surface for f in figures(sentence))  # "TB" in "1 TB": a unit, checked with its figure
    for name in names(sentence):
        if name not in inside or re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", units):
            continue
        word = token(name.lower(), 0, 0)
        # (as a word of its own, "CE" is not in "4th century BCE"; a longer one maybe with an
        # ending, "German" in "Germany's")
        ending = r"\w{0,3}" if len(name) > 3 else ""
        written = re.compile(rf"(?<!\w){re.escape(name.lower())}{ending}(?!\w)")
        own = any(covered(word, quote_forms[i]) or written.search(quotes[i].lower())
                  or abbreviated(name, sentence, quotes[i]) for i in helpers)
        if own:
            continue
        elsewhere = any(covered(word, f) or abbreviated(name, sentence, q) for f, q in zip(quote_forms, quotes,
                                                                                             strict=True))
        why = "comes from another quote than the rest of its clause" if elsewhere else "is not in its quotes"
        return _fail("merge" if elsewhere else "name", f"the name {name} {why}", support, [name])
    return None

