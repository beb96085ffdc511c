"""Adversarial writers for the synthesis stage: responders for the loopback LLM fakes
that read the real prompt's data blocks and write report sentences which cite real
claims but say something else, the way a careless or hostile model would.

* :class:`MeaningTurner` (``negation``, ``quantifier``, ``comparative``,
  ``number``): every sentence is a real claim's text *turned* (one word put in,
  taken out or swapped), keeping its words and citing the claim's real id, plus one
  faithful sentence per part (the claim's own text) so the report is not empty. With
  ``paraphrase=True`` each part also gets a faithful paraphrase ("In addition, ..."),
  which the checks accept as ``supported``, not ``quoted`` (something for a judge to
  judge). ``revise_sentences`` is answered by turning the claim again: still wrong.
* :class:`Merger`: the subject of one claim joined to the predicate of another,
  citing both: each half is in some quote, the whole in none.
* :class:`Connector`: uncited claims about the sources ("All sources support this
  conclusion."), faithful sentences wrapped in links and HTML, and one faithful
  sentence written eight times in the executive summary.
* :func:`approve_all_judge` / :func:`veto_all_judge`: the entailment judge's tool
  (``record_judgements``), answering every numbered statement; approving copies a
  span from that statement's own quotes (so the code trusts the verdict).
* :func:`routed`: one responder for a fake serving the writer, the judge and, for a
  whole job, whatever answers the other stages' tools.

Every writer keeps what it wrote wrong in ``turned`` (or ``merged``) for assertions.
Anything else falls through to ``schema_responder``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from lemminflect import getAllLemmas

from shared.verification.judge import JUDGE_TOOL
from tests.fakes.llm import RecordedRequest, Step, ToolCall, schema_responder
from tests.fakes.report_writer import ReportTools, blocks, claims_of, sections_of

__all__ = [
    "CONNECTIVES",
    "EVIL_URL",
    "Connector",
    "Kind",
    "Merger",
    "MeaningTurner",
    "approve_all_judge",
    "claims_of",
    "routed",
    "sections_of",
    "turn",
    "veto_all_judge",
]

Kind = Literal["negation", "quantifier", "comparative", "number"]
Responder = Callable[[RecordedRequest], Step]

EVIL_URL = "http://evil.example/x"
# Uncited sentences that state something about the sources: each must be removed.
CONNECTIVES = ("All sources support this conclusion.", "The evidence is consistent across studies.")
# An uncited sentence that links and states nothing: allowed to stay.
LINK_WORD = "However,"

_AUX = ("is", "are", "was", "were", "can", "does")
_AUX_ALL = frozenset((*_AUX, "do", "did", "has", "have", "had", "will", "would", "could", "may", "might",
                      "must", "should", "shall", "cannot"))
_MODALS = frozenset({"can", "could", "may", "might", "cannot"})
_DETERMINERS = frozenset({"a", "an", "the", "one", "each", "every", "their", "its", "his", "her", "our", "this",
                          "that", "some", "any", "no", "all", "other"})
_SWAPS = {"more": "less", "less": "more", "increases": "reduces", "reduces": "increases", "increase": "reduce",
          "reduce": "increase", "faster": "slower", "slower": "faster", "higher": "lower", "lower": "higher",
          "before": "after", "after": "before", "cheaper": "more expensive"}
_UNITS = {"mb": "GB", "gb": "MB", "kb": "MB", "microseconds": "milliseconds", "milliseconds": "seconds",
          "seconds": "minutes", "minutes": "hours", "ms": "s", "%": " percentage points", "percent": "times",
          "times": "percent"}
_WORD = re.compile(r"[A-Za-z]+(?:'[a-z]+)?")
_FIGURE = re.compile(r"(?<![\w.])(\d+(?:[.,]\d+)*)(\s*)(%|[A-Za-z]+)?")


# -- reading the prompt ---------------------------------------------------------------


def _sentence(text: str, ids: Sequence[str]) -> dict[str, Any]:
    return {"text": text, "claim_ids": list(ids)}


def _draft(summary: list[dict[str, Any]], sections: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    return {"executive_summary": [{"sentences": summary}] if summary else [],
            "sections": [{"checklist_item_id": item, "paragraphs": [{"sentences": s}] if s else []}
                         for item, s in sections.items()]}


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:] if text[1:2].islower() or len(text) == 1 else text


# -- turning a sentence -------------------------------------------------------------------


def _words(text: str) -> list[re.Match[str]]:
    return list(_WORD.finditer(text))


def _is_verb(word: str) -> bool:
    return "VERB" in getAllLemmas(word.lower()) or "AUX" in getAllLemmas(word.lower())


def _first_verb(text: str) -> re.Match[str] | None:
    """The first word that reads as the clause's verb: an auxiliary, else the first word
    after the subject's first that can be a verb and does not follow a determiner."""
    ws = _words(text)
    for m in ws:
        if m.group().lower() in _AUX_ALL:
            return m
    for k in range(1, len(ws)):
        prev, m, nxt = ws[k - 1], ws[k], ws[k + 1] if k + 1 < len(ws) else None
        if prev.group().lower() in _DETERMINERS or not _is_verb(m.group()):
            continue
        if nxt is not None and _is_verb(nxt.group()) and nxt.group().endswith("s") and not m.group().endswith("s"):
            continue  # "a process switch costs": the noun before the verb
        return m
    return None


def _put(text: str, at: int, words: str) -> str:
    return f"{text[:at]}{words} {text[at:]}"


def _negate(text: str) -> str | None:
    """Insert "not" after the first is/are/was/were/can/does, or remove an existing
    "not" (or "n't"); with neither, put "do/does not" before the main verb."""
    m = re.search(r"\s+not\b", text)
    if m:
        return text[:m.start()] + text[m.end():]
    m = re.search(r"n't\b", text)
    if m:
        return text[:m.start()] + text[m.end():]
    for w in _words(text):
        if w.group().lower() in _AUX:
            return f"{text[:w.end()]} not{text[w.end():]}"
    verb = _first_verb(text)
    if verb is None:
        return None
    word = verb.group()
    base = (getAllLemmas(word.lower()).get("VERB") or (word.lower(),))[0]
    aux = "does" if word.lower() != base and word.lower().endswith("s") else "do"
    return f"{text[:verb.start()]}{aux} not {base}{text[verb.end():]}"


def _generalise(text: str) -> str | None:
    """"some" becomes "all", "often" "always"; a bare plural subject gets "All"; else
    "always" goes before the predicate. A hedged verb ("can", "may") is left alone:
    "always" there makes "can always", a change of certainty as much as of quantity."""
    for few, many in (("some", "all"), ("often", "always"), ("sometimes", "always"), ("many", "all"),
                      ("most", "all")):
        m = re.search(rf"\b{few}\b", text, re.IGNORECASE)
        if m:
            word = many.capitalize() if m.group()[0].isupper() else many
            return text[:m.start()] + word + text[m.end():]
    ws = _words(text)
    verb = _first_verb(text)
    if verb is None or verb.group().lower() in _MODALS:
        return None
    first = ws[0].group()
    if first.lower() not in _DETERMINERS and first.endswith("s") and "NOUN" in getAllLemmas(first.lower()) \
            and verb.start() > ws[0].start():
        return "All " + _lower_first(text)
    if verb.group().lower() in ("is", "are", "was", "were"):
        return f"{text[:verb.end()]} always{text[verb.end():]}"
    return _put(text, verb.start(), "always")


def _reverse(text: str) -> str:
    """Swap a directional word for its opposite; without one, state a comparison the
    claim does not: "significantly more" before its last noun."""
    for w in _words(text):
        swap = _SWAPS.get(w.group().lower())
        if swap is not None:
            swap = swap.capitalize() if w.group()[0].isupper() else swap
            return text[:w.start()] + swap + text[w.end():]
    last = _words(text)[-1]
    return _put(text, last.start(), "significantly more")


def _refigure(text: str, which: int) -> str | None:
    """Change the claim's first figure: its unit when ``which`` is odd and the unit is
    one we know, else the figure times ten. None when it has no figure."""
    m = _FIGURE.search(text)
    if m is None:
        return None
    unit = (m.group(3) or "").lower()
    if which % 2 and unit in _UNITS:
        return f"{text[:m.end(1)]} {_UNITS[unit].strip()}{text[m.end(3):]}"
    number = m.group(1).replace(",", "")
    tenfold = str(int(number) * 10) if number.isdigit() else f"{float(number) * 10:g}"
    return text[:m.start(1)] + tenfold + text[m.end(1):]


def turn(kind: Kind, text: str, which: int = 0) -> str | None:
    """``text`` turned by ``kind``; None when this kind of turn does not apply to it."""
    if kind == "negation":
        return _negate(text)
    if kind == "quantifier":
        return _generalise(text)
    if kind == "comparative":
        return _reverse(text)
    if kind == "number":
        return _refigure(text, which)
    raise ValueError(f"unknown kind of turn: {kind}")


# -- the writers --------------------------------------------------------------------------


@dataclass
class _Writer(ReportTools):
    def revise(self, prompt: str) -> dict[str, Any]:
        """Every rejected sentence sent back as it was: a model that insists."""
        return {"fixes": [{"number": int(a["number"]), "text": text,
                           "claim_ids": [i.strip() for i in a.get("cites", "").split(",")
                                         if i.strip() and i.strip() != "nothing"]}
                          for a, text in blocks(prompt, "sentence")]}


@dataclass
class MeaningTurner(_Writer):
    """Each part: a faithful sentence (its first claim's text), then every claim of the
    part turned by ``kind``, citing that claim (claims the turn does not apply to are
    skipped). The summary turns every claim; a section, the claims its item's evidence
    names."""

    kind: Kind = "negation"
    paraphrase: bool = False  # add "In addition, <next claim>" to each part: supported, not quoted
    turned: list[str] = field(default_factory=list)  # every turned sentence written (a repeat once per part)
    faithful: list[str] = field(default_factory=list)

    def _part(self, ids: Sequence[str], text_of: dict[str, str], order: list[str]) -> list[dict[str, Any]]:
        ids = [i for i in ids if i in text_of]
        if not ids:
            return []
        out = [_sentence(text_of[ids[0]], [ids[0]])]
        self.faithful.append(text_of[ids[0]])
        if self.paraphrase:
            other = ids[1] if len(ids) > 1 else ids[0]
            out.append(_sentence("In addition, " + _lower_first(text_of[other]), [other]))
        for cid in ids:
            wrong = turn(self.kind, text_of[cid], order.index(cid))
            if wrong is not None and wrong != text_of[cid]:
                out.append(_sentence(wrong, [cid]))
                self.turned.append(wrong)
        return out

    def report(self, prompt: str) -> dict[str, Any]:
        claims = claims_of(prompt)
        text_of, order = dict(claims), [cid for cid, _ in claims]
        summary = self._part(order, text_of, order)
        return _draft(summary, {item: self._part(ids, text_of, order) for item, ids in sections_of(prompt)})

    def revise(self, prompt: str) -> dict[str, Any]:
        """Each rejected sentence turned again from its claim: the same wrong sentence."""
        claims = claims_of(prompt)
        text_of, order = dict(claims), [cid for cid, _ in claims]
        fixes = []
        for attrs, text in blocks(prompt, "sentence"):
            cites = [i.strip() for i in attrs.get("cites", "").split(",") if i.strip() in text_of]
            again = turn(self.kind, text_of[cites[0]], order.index(cites[0])) if cites else None
            fixes.append({"number": int(attrs["number"]), "text": again or text, "claim_ids": cites})
        return {"fixes": fixes}


def _split(text: str) -> tuple[str, str] | None:
    """(subject, predicate) at the claim's first verb."""
    verb = _first_verb(text)
    if verb is None or verb.start() == 0:
        return None
    return text[:verb.start()].strip(), text[verb.start():]


_GLUE = frozenset({"a", "an", "the", "in", "on", "of", "one", "each", "to", "for", "by", "with", "and", "or"})


def _stems(text: str) -> set[str]:
    """Its words as lemmas ("processes" and "process" alike), glue words left out."""
    out = set()
    for w in _words(text):
        lemmas = getAllLemmas(w.group().lower())
        out.add((lemmas.get("NOUN") or lemmas.get("VERB") or (w.group().lower(),))[0])
    return out - _GLUE


def merge(a: str, b: str) -> str | None:
    """A's subject with B's predicate, when that makes a sentence neither says: their
    subjects differ, and A's has a word B does not (else it would rest on B alone)."""
    sa, sb = _split(a), _split(b)
    if sa is None or sb is None or sa[0].lower() == sb[0].lower() or _stems(sa[0]) <= _stems(b):
        return None
    return f"{sa[0]} {sb[1]}"


@dataclass
class Merger(_Writer):
    """Each part: a faithful sentence, then for each claim A of the part, A's subject
    with the predicate of the first claim B after it (cyclically) that makes a merge,
    citing both: B's subject is not A's, and A's subject has a word B does not (else
    the sentence would rest on B alone). The same merge is written once a part."""

    merged: list[str] = field(default_factory=list)

    def _merge(self, a: str, b: str) -> str | None:
        return merge(a, b)

    def _part(self, ids: Sequence[str], text_of: dict[str, str]) -> list[dict[str, Any]]:
        ids = [i for i in ids if i in text_of]
        if not ids:
            return []
        out = [_sentence(text_of[ids[0]], [ids[0]])]
        written: set[str] = set()
        for k, a in enumerate(ids):
            for b in [*ids[k + 1:], *ids[:k]]:
                text = self._merge(text_of[a], text_of[b])
                if text is not None:
                    if text not in written:
                        written.add(text)
                        out.append(_sentence(text, [a, b]))
                        self.merged.append(text)
                    break
        return out

    def report(self, prompt: str) -> dict[str, Any]:
        claims = claims_of(prompt)
        text_of = dict(claims)
        summary = self._part([cid for cid, _ in claims], text_of)
        return _draft(summary, {item: self._part(ids, text_of) for item, ids in sections_of(prompt)})


def markups(text: str) -> list[str]:
    """``text`` inside a link, bold HTML and bold markdown."""
    body = text.rstrip(".")
    return [f"[{body}]({EVIL_URL}).", f"<b>{body}</b>.", f"**{body}**."]


@dataclass
class Connector(_Writer):
    """The summary: the first claim's text eight times, the uncited ``CONNECTIVES``, a
    linking "However," and the next claims wrapped in markup (one wrapper each). Each
    section: its first claim's text, the ``CONNECTIVES`` and its other claims in markup."""

    repeats: int = 8
    turned: list[str] = field(default_factory=list)  # uncited claims about the sources written
    repeated: str = ""  # the sentence written ``repeats`` times in the summary
    wrapped: list[str] = field(default_factory=list)  # the markup sentences written

    def _wrapped(self, ids: Sequence[str], text_of: dict[str, str]) -> list[dict[str, Any]]:
        out = []
        for cid, wrapper in zip(ids, [0, 1, 2] * len(ids), strict=False):
            text = markups(text_of[cid])[wrapper]
            self.wrapped.append(text)
            out.append(_sentence(text, [cid]))
        return out

    def report(self, prompt: str) -> dict[str, Any]:
        claims = claims_of(prompt)
        text_of, order = dict(claims), [cid for cid, _ in claims]
        first = order[0]
        self.repeated = text_of[first]
        summary = [_sentence(text_of[first], [first]) for _ in range(self.repeats)]
        summary += [_sentence(c, []) for c in CONNECTIVES] + [_sentence(LINK_WORD, [])]
        self.turned += CONNECTIVES
        summary += self._wrapped(order[1:4], text_of)
        sections: dict[str, list[dict[str, Any]]] = {}
        for item, ids in sections_of(prompt):
            ids = [i for i in ids if i in text_of]
            if not ids:
                sections[item] = []
                continue
            sections[item] = [_sentence(text_of[ids[0]], [ids[0]]), *(_sentence(c, []) for c in CONNECTIVES),
                              *self._wrapped(ids[1:], text_of)]
            self.turned += CONNECTIVES
        return _draft(summary, sections)


# -- the judge --------------------------------------------------------------------------------


def _statements(prompt: str) -> list[tuple[int, str, list[str]]]:
    quotes: dict[int, list[str]] = {}
    for attrs, text in blocks(prompt, "quote"):
        quotes.setdefault(int(attrs["number"]), []).append(text)
    return [(int(a["number"]), text, quotes.get(int(a["number"]), [])) for a, text in blocks(prompt, "statement")]


@dataclass
class _Judge:
    verdict: str
    asked: list[str] = field(default_factory=list)  # the statements judged, in order

    def __call__(self, request: RecordedRequest) -> Step:
        if request.forced_tool != JUDGE_TOOL:
            return schema_responder(request)
        answers = []
        for number, statement, quotes in _statements(request.prompt):
            self.asked.append(statement)
            if self.verdict == "entailed":
                span = " ".join(quotes[0].split()[:6]) if quotes else ""
                answers.append({"number": number, "verdict": "entailed", "span": span,
                                "reason": "the quote states it"})
            else:
                answers.append({"number": number, "verdict": self.verdict, "span": "",
                                "reason": "the quotes do not state it"})
        return ToolCall(input={"judgements": answers})


def approve_all_judge() -> _Judge:
    """A judge that finds every statement entailed, with a span copied from its quotes."""
    return _Judge("entailed")


def veto_all_judge(verdict: str = "not_supported") -> _Judge:
    """A judge that finds no statement entailed."""
    return _Judge(verdict)


_WRITER_TOOLS = frozenset({"write_report", "revise_sentences"})


def routed(writer: Responder, judge: Responder | None = None, rest: Responder | None = None) -> Responder:
    """One responder for a fake that serves the writer, the judge and (``rest``, e.g. a
    ``ReportWriter`` for the scoring tools of a whole job) every other call."""
    def respond(request: RecordedRequest) -> Step:
        if request.forced_tool == JUDGE_TOOL and judge is not None:
            return judge(request)
        if request.forced_tool in _WRITER_TOOLS or rest is None:
            return writer(request)
        return rest(request)
    return respond
