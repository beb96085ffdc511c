"""A question's shape, read from its words: an enumeration ("X, Y and Z") or a
comparison ("X vs Y", "the trade-offs between X and Y", "X or Y for Z"), with its
items or its two sides as the question names them (:func:`shape`).

Apart from :mod:`services.decomposition.offline` because it reads tokens, not
clauses: a question of either shape gets the sub-questions and checklist items of its
shape, and only a plain one is read clause by clause
(:mod:`services.decomposition.phrasing`).
"""

from __future__ import annotations

from typing import NamedTuple

from shared.research.text import STOPWORDS

from services.decomposition.wordforms import is_plural_noun, word_classes

__all__ = ["Listing", "Sides", "bare", "shape"]

_TOKEN_EDGE = ".,;:!?()[]{}\"'“”‘’"
_DETERMINERS = frozenset({"the", "a", "an", "some", "any", "my", "our", "your", "their", "its"})
# Words that open a part of what came before, not another thing of a list ("by several
# fields, some ascending and some descending").
_PARTITIVES = frozenset({"some", "several", "many", "most", "others", "all", "each", "one", "both", "none"})
# Words that end a noun phrase although shared.research.text does not treat them as stop words.
_BOUNDARY = frozenset({"use", "using", "choose", "pick", "prefer", "better", "worse", "best",
                       "compare", "compared", "differ", "work", "works", "i", "we", "it"})


def bare(token: str) -> str:
    return token.strip(_TOKEN_EDGE)


def _ends_clause(token: str) -> bool:
    return token != token.rstrip(".,;:!?")


def _is_boundary(token: str) -> bool:
    low = bare(token).lower()
    return not low or low in STOPWORDS or low in _BOUNDARY


def _walk_back(tokens: list[str], end: int, limit: int = 3) -> list[str]:
    """The noun phrase ending just before ``end``."""
    out: list[str] = []
    i = end - 1
    while i >= 0 and len(out) < limit:
        if _is_boundary(tokens[i]) or (out and _ends_clause(tokens[i])):
            break
        out.insert(0, bare(tokens[i]))
        i -= 1
    return out


def _walk_forward(tokens: list[str], start: int, limit: int = 3) -> list[str]:
    """The noun phrase starting at ``start`` (leading determiners skipped)."""
    i = start
    while i < len(tokens) and bare(tokens[i]).lower() in _DETERMINERS:
        i += 1
    out: list[str] = []
    while i < len(tokens) and len(out) < limit:
        if _is_boundary(tokens[i]):
            break
        out.append(bare(tokens[i]))
        if _ends_clause(tokens[i]):
            break
        i += 1
    return out


class Listing(NamedTuple):
    """The things an enumeration names, and whose they are when the question says:
    "the causes, symptoms and treatments of diabetes" names causes, symptoms and
    treatments, each of diabetes. "Treatments" alone names nothing one could look up;
    a member keeps its owner."""

    names: list[str]
    owner: str = ""  # "diabetes"

    def members(self) -> list[str]:
        """Each name as the thing it is: "the treatments of diabetes"."""
        return [f"the {name} of {self.owner}" for name in self.names] if self.owner else list(self.names)

    def whole(self) -> str:
        """All of them, as the question lists them."""
        names = self.names[0] if len(self.names) == 1 else ", ".join(self.names[:-1]) + " and " + self.names[-1]
        return f"the {names} of {self.owner}" if self.owner else names


def _owner_after(tokens: list[str], end: int) -> tuple[str, str]:
    """Whose the listed things are, when an "of" phrase follows the last of them
    ("... and treatments of diabetes"), and what the last of them says beyond its first
    word when a second "of" phrase follows ("… and number of decimal places of a
    value": "number of decimal places", of "a value"); ("", "") otherwise. A verb that
    ends the question ("… depth of a box relate?") is no part of the owner."""
    if end >= len(tokens) or bare(tokens[end]).lower() != "of":
        return "", ""
    start = end + 1
    while start < len(tokens) and bare(tokens[start]).lower() in _DETERMINERS:
        start += 1  # (as _walk_forward skips them)
    owner = _walk_forward(tokens, start)
    if owner and word_classes(owner[-1].lower()) == {"VERB"}:
        owner = owner[:-1]
    after = start + len(owner)
    if owner and not _ends_clause(tokens[after - 1]) and after < len(tokens) and bare(tokens[after]).lower() == "of":
        inner, _ = _owner_after(tokens, after)
        if inner:
            return inner, "of " + " ".join(owner)
    article = bare(tokens[start - 1]).lower() if start > end + 1 else ""
    return " ".join(([article] if owner and article in ("a", "an", "the") else []) + owner), ""


def _listing(tokens: list[str]) -> Listing | None:
    """An enumeration "A, B and C" (or "A, B, or C"); None if there is none."""
    first = next((i for i, t in enumerate(tokens) if t.endswith(",")), None)
    if first is None:
        return None
    head = _walk_back(tokens, first + 1)
    if not head:
        return None
    before = first - len(head)
    if before >= 0 and bare(tokens[before]).lower() in ("is", "are", "was", "were"):
        return None  # "Which is faster, asyncio or threads": "faster" is said of them, not one of them
    if before >= 1 and bare(tokens[before]).lower() in ("for", "in", "on", "with") and any(
            bare(t).lower() in ("is", "are", "was", "were") for t in tokens[:before]):
        return None  # "Which is better for beginners, Python or Java": what it is better for
    items = [" ".join(head)]
    i = first + 1
    current: list[str] = []
    owner = ""
    while i < len(tokens):
        low = bare(tokens[i]).lower()
        if not current and low in _PARTITIVES:
            return None  # "several fields, some ascending and some descending": what some of them are
        if low in ("and", "or"):
            if current:
                items.append(" ".join(current))
            # The last item is as long as the longest earlier one: nothing marks
            # where it ends ("..., Go and Rust handle memory").
            start = i + 1
            while start < len(tokens) and bare(tokens[start]).lower() in _DETERMINERS:
                start += 1
            tail = _walk_forward(tokens, start, limit=max(len(x.split()) for x in items))
            if tail:
                items.append(" ".join(tail))
                owner, more = ("", "") if _ends_clause(tokens[start + len(tail) - 1]) else _owner_after(
                    tokens, start + len(tail))
                if more:
                    items[-1] = f"{items[-1]} {more}"
            break
        current.append(bare(tokens[i]))
        if tokens[i].endswith(","):
            items.append(" ".join(current))
            current = []
        elif _ends_clause(tokens[i]) or len(current) > 3:
            return None
        i += 1
    else:
        return None
    items = [item for item in items if item]
    return Listing(items, owner) if len(items) >= 3 else None


class Sides(NamedTuple):
    """The two things a comparison weighs, as the question names them (with their
    article: "a mutex", "a semaphore"), and what the choice is for, if it says."""

    a: str
    b: str
    purpose: str = ""  # "for CPU-bound work in Python"


# Words that make "between X and Y" a comparison ("the trade-offs between threads and
# processes"); otherwise it only places the subject ("backpressure between producers
# and consumers" is about backpressure).
_BETWEEN_COMPARES = frozenset({"difference", "differences", "differ", "differs", "trade-off", "trade-offs",
                               "tradeoff", "tradeoffs", "choice", "choose", "choosing", "comparison",
                               "compare", "decide", "deciding", "pick", "distinction", "distinguish",
                               "similarities", "pros", "cons"})
# Words after the second side that start what the choice is for: "threads or processes
# for CPU-bound work", "... when latency matters". A place ("in Python") is not a
# purpose: the definitions and the difference hold there too.
_PURPOSE_LEAD = frozenset({"for", "when"})


def _forward(tokens: list[str], start: int, limit: int = 3) -> tuple[list[str], int]:
    """The noun phrase starting at ``start`` with its article (other determiners
    skipped), and the index just after it."""
    i = start
    article: list[str] = []
    while i < len(tokens) and bare(tokens[i]).lower() in _DETERMINERS:
        if bare(tokens[i]).lower() in ("a", "an", "the"):
            article = [bare(tokens[i])]
        i += 1
    out: list[str] = []
    while i < len(tokens) and len(out) < limit and not _is_boundary(tokens[i]):
        out.append(bare(tokens[i]))
        i += 1
        if _ends_clause(tokens[i - 1]):
            break
    return (article + out if out else []), i


def _back(tokens: list[str], end: int) -> list[str]:
    """The noun phrase ending just before ``end``, with the article before it. The
    question's first word is capitalized only for being first: a plural common noun
    there ("Threads vs processes") is lower-cased, a name ("Postgres") kept."""
    words = _walk_back(tokens, end)
    start = end - len(words)
    if words and start > 0 and bare(tokens[start - 1]).lower() in ("a", "an", "the"):
        return [bare(tokens[start - 1]), *words]
    if words and start == 0 and words[0][1:].islower() and is_plural_noun(words[0].lower()):
        words[0] = words[0].lower()
    return words


def _shared_head(left: list[str], right: list[str]) -> list[str]:
    """The left side with the noun both sides share: in "annotated and lightweight tags"
    or "Keynesian and monetarist economics" the first side is a modifier alone
    ("annotated"), and the head noun after the second belongs to it too."""
    if len(left) != 1 or len(right) < 2 or right[0].lower() in ("a", "an", "the"):
        return left
    if "NOUN" in word_classes(left[0].lower()) or "NOUN" not in word_classes(right[-1].lower()):
        return left
    return [left[0], right[-1]]


def _sides(tokens: list[str], left: list[str], right: list[str], end: int) -> Sides | None:
    if not left or not right:
        return None
    left = _shared_head(left, right)
    purpose = ""
    if end < len(tokens) and bare(tokens[end]).lower() in _PURPOSE_LEAD:
        purpose = " ".join(tokens[end:]).rstrip("?.!; ")
    return Sides(" ".join(left), " ".join(right), purpose)


def _between_sides(tokens: list[str], lows: list[str]) -> Sides | None:
    b = lows.index("between")
    if "and" not in lows[b + 1:] or b == 0 or lows[b - 1] not in _BETWEEN_COMPARES:
        return None
    a_end = lows.index("and", b + 1)
    left = [bare(t) for t in tokens[b + 1:a_end] if bare(t)]
    while left and left[0].lower() in _DETERMINERS and left[0].lower() not in ("a", "an", "the"):
        left.pop(0)
    right, end = _forward(tokens, a_end + 1, limit=4)
    return _sides(tokens, left, right, end) if len(left) <= 5 else None


# Who acts: "how do you finish or abandon the merge" offers two actions on one thing,
# not two things to compare; a side right after one of these is a verb.
_ACTORS = frozenset({"i", "you", "we", "they", "one", "to"})


def _acts(lows: list[str], start: int) -> bool:
    """Whether the words from ``start`` follow someone who acts ("do you", "to")."""
    return start > 0 and lows[start - 1] in _ACTORS


def _comparison_sides(tokens: list[str]) -> Sides | None:
    lows = [bare(t).lower() for t in tokens]
    if "between" in lows:
        found = _between_sides(tokens, lows)
        if found:
            return found
    for i, low in enumerate(lows):
        # "How do tuples differ from lists", "use asyncio instead of a thread pool"
        if (low == "from" and i > 0 and lows[i - 1] in ("differ", "differs", "different")) or (
                low == "of" and i > 0 and lows[i - 1] == "instead"):
            found = _sides(tokens, _back(tokens, i - 1), *_forward(tokens, i + 1))
            if found:
                return found
        if low in ("vs", "versus", "or") or (
            low in ("compare", "compared") and i + 1 < len(lows) and lows[i + 1] in ("to", "with")
        ):
            right_start = i + 2 if low in ("compare", "compared") else i + 1
            left = _back(tokens, i)
            if low == "or" and _acts(lows, i - len(left)):
                continue
            found = _sides(tokens, left, *_forward(tokens, right_start))
            if found:
                return found
        if low == "compare" and i == 0 and "and" in lows:
            a_end = lows.index("and")
            left = [bare(t) for t in tokens[1:a_end] if bare(t)]
            found = _sides(tokens, left, *_forward(tokens, a_end + 1))
            if found:
                return found
    return None


def shape(question: str) -> tuple[Listing | None, Sides | None]:
    """(enumeration, comparison sides) of a question; both None for a plain one."""
    tokens = " ".join(question.split()).split(" ")
    listing = _listing(tokens)
    return listing, (None if listing else _comparison_sides(tokens))
