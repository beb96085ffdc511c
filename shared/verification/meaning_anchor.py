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

from shared.verification.added_matter import (
    CAUSAL_LINKS, added_part, cause_added, compound_parts, extreme, frequency_added, gives_cause, inference_added, linked_across,
    new_run, said_of_both, superlative,
)
from shared.verification.figure_binding import Failure, fail, figures_bound, names_bound
from shared.verification.figure_base import Figure
from shared.verification.figures import figures, same_figure
from shared.verification.clause_reading import direction_of, only_a_thing
from shared.verification.clause_parts import (
    after_adverb, dated, fronted_parts, irregular_participle, relative_parts, subject, subject_tokens, trailing_parts,
)
from shared.verification.quote_subjects import (
    alignment, gives_predicate, grafted_subject, keeps_subject, other_setting, stands_in, subject_of,
)
from shared.verification.anaphora import anaphoric
from shared.verification.carried_subjects import carried_subject
from shared.verification.roles import effect_swapped
from shared.verification.negation_reading import denied_before
from shared.verification.acronyms import abbreviated
from shared.verification.clauses import (Clause, Token, broader_forms, clauses, covered, forms_of,
                                         is_content, token)

__all__ = ["Anchored", "anchor_all"]

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


@dataclass
class Anchored:
    # For each of the sentence's clauses, the readings it may have: (the clause, the
    # quote clause it restates, that whole quote as one clause), one per quote that
    # holds as many of its words as any (a clause that two quotes share rests on
    # whichever of them it agrees with).
    pairs: list[list[tuple[Clause, Clause, Clause]]]
    support: float


_ACRONYM = re.compile(r"\b[A-Z]{2,6}\b")


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
             | {f for c in cs for t in c.content for f in compound_parts(t, sentence_forms)}
             for forms, cs in zip(quote_forms, quote_clauses, strict=True)]
    every = set().union(*cover)
    said = [c for c in sentence_clauses if c.content]
    if not said:
        return fail("empty", "no content words to check")
    sentence_figures = figures(sentence)
    # The words of a figure ("four times", "a third", "1 TB") are checked as figures.
    spans = [(f.start, f.end) for f in sentence_figures]
    content = {min(t.forms): t for c in said for t in c.content
               if not any(a <= t.start < b for a, b in spans)} or {min(t.forms): t for c in said for t in c.content}
    # (an acronym the quotes spell out is theirs: "ECB", "Q2" for "the second quarter")
    unsupported = sorted(t.low for t in content.values() if not covered(t, every) and not (
        t.text[:1].isupper() and any(abbreviated(t.text, sentence, q) for q in quotes)))
    support = round(1 - len(unsupported) / len(content), 3)
    pairs: list[list[tuple[Clause, Clause, Clause]]] = []
    for n, clause in enumerate(said):
        before = said[n - 1] if n and clause.tokens[0].low in _RELATIVES else None
        problem = _anchor(sentence, clause, quotes, quote_clauses, quote_forms, sentence_figures, support, before,
                          cover)
        if n and not isinstance(problem, Failure):
            antecedent = said[n - 2] if n > 1 and said[n - 1].tokens[0].low in _RELATIVES else None
            problem = carried_subject(said[n - 1], pairs[-1], clause, problem, quotes, antecedent) or problem
        if isinstance(problem, Failure):
            each = _each_part(sentence, clause, quotes, quote_clauses, quote_forms, sentence_figures, support, cover)
            if each is not None:
                pairs += each
                continue
        if isinstance(problem, Failure):
            return problem
        pairs.append(problem)
    # ("its highest level" for "peak": a quote's peak or maximum ranks too)
    ranked = any(superlative(u) or u.low in _RANKS for qc in quote_clauses for c in qc for u in c.tokens)
    claimed = next((t for c in said for n, t in enumerate(c.tokens)
                    if (extreme(t) or not ranked and _most(c, n)) and not covered(t, every)
                    and not (ranked and superlative(t)) and not _ever_denied(c, n)),
                   None)  # ("the lowest area" for "the smallest")
    if claimed is not None:  # "a club record", "the lowest on record", "unanimously", "first-ever"
        return fail("terms", f'it says "{claimed.text}", a record or superlative none of its quotes states',
                    support, [claimed.text])
    quote_words = {w for q in quotes for w in re.findall(r"[a-z]+", q.lower())}
    often = frequency_added(said, quote_words)
    if often is not None:  # "daily direct flights" for "direct flights"
        return fail("quantifier", f'it says "{often.text}", a frequency none of its quotes states', support,
                    [often.text])
    drawn = inference_added(said, quote_forms, quote_words)
    if drawn is not None:  # ", indicating it could host liquid oceans"
        return fail("terms", f'it draws what none of its quotes says: "{drawn}"', support, [drawn])
    both = next((found for c in said if (found := said_of_both(c, quote_forms)) is not None), None)
    if both is not None:  # "Marie Curie and her daughter both won the Nobel Prize in Chemistry"
        return fail("merge", f'it says of "{both}" what only another quote says of something else', support,
                    [both])
    traded = effect_swapped(sentence, quotes)
    if traded is not None:  # "the elk declined, and wolves were reintroduced as a result"
        return fail("role", f'it makes the effect its quote gives the cause ("{traded}")', support, [traded])
    link = linked_across(said, quote_forms, quote_words)
    if link is None and len(quotes) == 1 and len(quote_clauses[0]) > 1:
        # (or two clauses of one quote, told side by side: "The railway reached the town in
        # 1864, and its first mill opened three years later" does not say the one led to the other)
        link = linked_across(said, [forms_of([c]) for c in quote_clauses[0]], quote_words, verbs_only=True)
    if link is not None:
        return fail("merge", f'it links by "{link}" what its quotes state apart, none of them linking them',
                    support, [link])
    reason = cause_added(said, every, quote_words)
    if reason is not None:  # "… because of falling demand" where no quote gives a cause
        return fail("terms", f'it gives a cause none of its quotes gives: "{reason}"', support, [reason])
    if support < min_support:
        return fail("terms", f"only {support:.0%} of its terms are in its quotes (needs {min_support:.0%});"
                             f" not found: {', '.join(unsupported[:8])}", support, unsupported)
    run = new_run(said, every, spans, frozenset(_ACRONYM.findall(" ".join(quotes))))
    if len(run) >= MAX_NEW_RUN or len(run) >= 2 and added_part(run[0], said, every, purposes=_purposes(quote_clauses)) \
            or len(run) >= 2 and gives_cause(run[0], said) \
            and not any(w in CAUSAL_LINKS for q in quotes for w in re.findall(r"[a-z]+", q.lower())):
        return fail("terms", f"it adds what none of its quotes says: {' '.join(t.text for t in run)}", support,
                    unsupported)
    things = [w for w in unsupported if only_a_thing(w)]
    if len(things) > MAX_NEW_TERMS:
        return fail("terms", f"{len(things)} of its nouns are in none of its quotes (at most {MAX_NEW_TERMS}"
                             f" may reword them): {', '.join(things[:8])}", support, unsupported)
    if len(unsupported) > max(MAX_NEW_WORDS, MAX_NEW_SHARE * len(content)):
        return fail("terms", f"{len(unsupported)} of its terms are in none of its quotes: "
                             f"{', '.join(unsupported[:8])}", support, unsupported)
    return Anchored(pairs, support)


_RANKS = frozenset("most least peak peaks peaked peaking maximum minimum".split())


def _most(clause: Clause, n: int) -> bool:
    """The word at ``n`` is ranked by "the most" or "the least" before it ("one of the
    most successful agreements"): a superlative in two words."""
    toks = clause.tokens
    return n >= 2 and is_content(toks[n]) and toks[n - 1].low in ("most", "least") \
        and toks[n - 2].low in ("the", "its", "their", "his", "her")


def _ever_denied(clause: Clause, i: int) -> bool:
    """"without ever using it", "has not ever failed": "ever" that strengthens a negation
    claims no record."""
    return clause.tokens[i].low == "ever" and denied_before(clause, i)


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
        return fail("merge", f'it gives "{grafted}" what another quote says of something else', support, [grafted])
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
                         and (anaphoric(quotes[j]) or _kind_again(quotes[j], quote_clauses[best], j > best, clause)
                              or keeps_subject(speaks_of, quote_clauses[j]))]
            # Or both quotes name its subject and give its predicate: "US consumer price
            # inflation eased from 9.1% … to 3.0%" from "US consumer prices rose 9.1%…" and
            # "annual inflation had slowed to 3.0%" (not "Creating a thread do not share
            # memory", one quote's subject on the other's predicate).
            own = subject(clause)
            # Or a word of the other quote's, about the same subject, added beside the anchor
            # quote's words ("Of the estimated 608,000 deaths…"), not standing in for one of
            # them ("a container whose readiness probe fails" for "whose liveness probe fails").
            # (not an adverb of the other quote's verb: "periodically makes no distinction")
            if not t.forms & own and not stands_in(clause, t, quote_clauses[best], speaks_of) \
                    and not (t.low.endswith("ly") and not t.verb):
                parallel += [j for j in others if anaphoric(quotes[j]) or _kind_again(quotes[j], quote_clauses[best], j > best, clause)
                             or keeps_subject(speaks_of, quote_clauses[j])]
            if t.forms & own and keeps_subject(clause, quote_clauses[best], whole=True):
                parallel += [j for j in others if t.forms & subject_of(clause, quote_clauses[j])
                             and gives_predicate(clause, own, covers[j], covers[best], quotes[j], quotes[best],
                                                  sentence_figures)]
        if not parallel and _told_of_anchor(speaks_of, t, cover[best]):
            parallel += [j for j in others if j > best and _goes_on(quotes[j])]
        if not parallel:
            return fail("merge", f'"{t.text}" comes from another quote than the rest of its clause', support, [t.text])
        helpers.add(parallel[0])
    lending = [j for j in sorted(helpers - {best}) if not anaphoric(quotes[j]) and any(
        same_figure(f, q) for f in mine for q in figures(quotes[j]))]  # (a figure it lends is said of its setting)
    other = other_setting(clause, [quote_clauses[j] for j in lending])
    if other:
        return fail("merge", f'it gives its clause what another quote says of "{other}"', support, [other])
    problem = figures_bound(sentence, clause, quotes, quote_clauses, helpers, sentence_figures, support)
    if problem is None:
        problem = names_bound(sentence, clause, quotes, quote_forms, helpers, support)
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


def _kind_again(quote: str, anchor: Sequence[Clause], later: bool, clause: Clause) -> bool:
    """``quote`` comes ``later`` than the anchor quote (whose clauses are ``anchor``) and
    opens with "the" and a noun that the clause does not say, of a kind ("The plant
    flowers in July") the anchor quote names a thing of ("Quillweed is a perennial herb",
    "Construction of the cathedral…" for "The building"): it names the anchor's thing
    again by its kind. Or the noun is what a passive is said of ("The fee was reported
    to be €28 million" after "The club signed the striker"): a part of what the anchor
    quote told, not a doer of its own ("The government launched…", "The fourth is…")."""
    words = quote.split()
    if not later or len(words) < 3 or words[0] != "The" or not words[1][:1].islower():
        return False
    noun = token(re.sub(r"['’]s$", "", words[1]).strip(",;:").lower(), 0, 0)
    verb = token(words[2].lower().strip(",;:"), 0, 0)  # (inflected: "The standard fix is…" has no verb after "standard")
    if noun.forms & clause.forms or not (words[1].endswith(("'s", "’s"))
                                         or verb.verb and verb.low != verb.lemma and verb.low.endswith(("s", "ed"))):
        return False
    kinds = {f for c in anchor for u in c.content for f in broader_forms(u.low)}
    done = token(words[3].lower().strip(",;:"), 0, 0) if len(words) > 3 else None
    return bool(noun.forms & kinds) or words[2] in _BE and not words[1].endswith(("'s", "’s")) \
        and done is not None and done.verb and done.low != done.lemma and done.low.endswith(("ed", "en"))


_BE = frozenset(("was", "were", "is", "are"))


def _told_of_anchor(clause: Clause, t: Token, anchor: set[str]) -> bool:
    """``t`` is said of the clause's subject, which the anchor quote names: so a later
    quote that goes on about "it" ("It was the warmest year on record") may give it."""
    head = [u for u in subject_tokens(clause) if is_content(u)]
    return bool(head) and not any(t.forms & u.forms for u in head) and all(covered(u, anchor) for u in head)


def _goes_on(quote: str) -> bool:
    """The quote opens with "It", "Its", "They" or "Their", or with a time word before
    one ("Today it holds …"): it goes on about the thing the quote before it names ("It
    was released in October")."""
    words = re.findall(r"[\w']+", quote)[:3]
    return bool(words) and (words[0] in _GOING_ON or words[0] in _THEN and any(
        w.capitalize() in _GOING_ON for w in words[1:3]))


_GOING_ON = frozenset(("It", "Its", "They", "Their"))
_THEN = frozenset("Today Now Currently Later Then Afterwards Eventually Subsequently Since".split())


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
    ``clause_parts``: "Written in 1820, …" too; "Last seen in 1986, …", after an adverb.)"""
    toks = opening.tokens
    first = toks[after_adverb(toks)] if toks else None
    return first is not None and first.verb and first.low != first.lemma and (
        first.low.endswith(("ed", "ing", "en")) or irregular_participle(first))


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


def _purposes(quote_clauses: Sequence[Sequence[Clause]]) -> bool:
    """Whether a quote states a purpose of its own ("to mark its 100th anniversary"),
    round which a sentence may reword."""
    return any(t.low == "to" and u.verb and is_content(u)
               for qc in quote_clauses for c in qc for t, u in zip(c.tokens, c.tokens[1:], strict=False))
