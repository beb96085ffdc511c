"""The words the meaning checks read: negators, quantifiers, hedges, directions, scope openers.

Each list is a small closed class of English function words and markers, the part
of a sentence that turns its meaning while leaving its subject words alone ("are
removed" / "are not removed", "some" / "all", "may reduce" / "reduces", "increases"
/ "reduces"). Open-class words (nouns, verbs, adjectives) are matched through their
lemma and stem instead (``shared.verification.meaning``).
"""

from __future__ import annotations

__all__ = [
    "CAUSAL",
    "CESSATION",
    "OMISSION",
    "PRIVATIVE",
    "CONVERSES",
    "CONDITION_OPENERS",
    "CORRELATIONAL",
    "DENIERS",
    "DIRECTIONS",
    "EXCLUSIVE",
    "HEDGES",
    "MONTHS",
    "NEGATIVE_PREFIXES",
    "NEGATORS",
    "OUTCOMES",
    "QUANTIFIERS",
    "RARE",
    "SAME_ACT",
    "SHARE_WORDS",
    "STRONG",
    "SYMMETRIC",
    "WORD_NEGATING_PREFIXES",
]

MONTHS = frozenset("january february march april may june july august september october november december".split())

# Words that negate their clause. "not only" is not a negation (handled by the reader),
# and "no" before a comparative ("no more than") bounds a figure rather than negates.
NEGATORS = frozenset("""
    not no never none nothing nobody nowhere neither nor without cannot can't won't
    doesn't isn't aren't don't didn't wasn't weren't hasn't haven't hadn't shouldn't
    wouldn't couldn't mustn't n't lacks lack lacked lacking fails fail failed failing
    unable absent
""".split())

# The plain words that deny what follows them ("no significant change", "without ever").
DENIERS = frozenset("not never without no nor n't".split())
# Prefixes that negate the word they open ("unsafe", "inconsistent", "non-blocking"):
# a sentence that says "unsafe" where its quote says "safe" flips it.
NEGATIVE_PREFIXES = ("non-", "non", "un", "in", "im", "il", "ir", "dis")
# The ones that negate whatever word they open ("unaware", "non-binding"); the others
# negate adjectives only ("inaccurate", not "increase") or seldom ("discover").
WORD_NEGATING_PREFIXES = ("non-", "non", "un")

# Quantifiers and frequency adverbs by strength: 1 some, 2 many/often, 3 most/usually,
# 4 all/always. A sentence may say less than its quote, never more.
QUANTIFIERS: dict[str, int] = {
    **dict.fromkeys("some several certain sometimes occasionally occasional partly partially".split(), 1),
    **dict.fromkeys("many often frequently frequent commonly numerous widely regularly".split(), 2),
    **dict.fromkeys("most usually typically generally mostly largely mainly normally majority "
                    "predominantly primarily".split(), 3),
    **dict.fromkeys("all every each always invariably universally everything everyone everybody".split(), 4),
}
# Words that end a share of a whole ("a third", "27 percent", "the proportion"): a share
# may compare by how much, as a figure does ("a third below the mean").
SHARE_WORDS = frozenset("half halves third thirds quarter quarters fifth fifths tenth tenths percent per cent "
                        "proportion share fraction".split())
# The low end, "rarely" and "few", is a claim of its own: it neither strengthens nor weakens "often".
RARE = frozenset("rarely seldom few hardly scarcely barely minority".split())
# "only X": the sentence excludes everything else.
EXCLUSIVE = frozenset("only solely exclusively sole alone".split())

# Certainty: a hedge (1) is weaker than a plain statement (2), which is weaker than a
# strong one (3). "can" states a possibility: "a thread can crash the process" does not
# say that it does.
HEDGES = frozenset("""
    may might could can possibly perhaps likely probably potentially suggest suggests
    suggested suggesting appear appears appeared seem seems seemed unclear uncertain
    presumably plausibly tend tends tended possible possibly potential suspect suspects suspected
    whether considering believe believes doubtful
""".split())
STRONG = frozenset("""
    must definitely certainly conclusively conclusive undoubtedly unquestionably prove
    proves proved proven proof establish establishes established guarantee guarantees
    guaranteed always invariably demonstrate demonstrates demonstrated definitive
""".split())
# Cause and effect is more than association.
CAUSAL = frozenset("cause causes caused causing leads lead led result results resulted "
                   "because drives drove".split())
CORRELATIONAL = frozenset("associated association correlated correlation correlates linked link "
                          "related consistent".split())

# Directional words: lemma -> (axis, sign). Words on one axis agree or disagree; words
# on different axes are not compared (that would need world knowledge). A temperature
# is a magnitude: "warmer than average" is "above average".
_UP, _DOWN = 1, -1
DIRECTIONS: dict[str, tuple[str, int]] = {
    **{w: ("magnitude", _UP) for w in """increase raise rise grow boost gain expand exceed amplify elevate
        maximize maximise double triple more higher greater larger bigger longer heavier
        wider taller above upward high large big long increased lengthen widen deepen extend
        growth climb soar surge jump spike rally swell overtake surpass outstrip
        outgrow outgrew outsell outsold outnumber outnumbered outscore outscored
        warmer hotter""".split()},
    **{w: ("magnitude", _DOWN) for w in """decrease reduce lower cut decline drop fall shrink
        diminish lessen minimize minimise halve less fewer smaller shorter lighter narrower
        below downward low small short reduced decreased shorten narrow
        reduction shrinkage plunge plummet slump tumble dwindle wane shave trim slash
        cooler colder""".split()},
    **{w: ("speed", _UP) for w in "faster quicker fast quick quickly rapidly swiftly speed accelerate".split()},
    **{w: ("speed", _DOWN) for w in "slower slow slowly decelerate delay".split()},
    **{w: ("quality", _UP) for w in """better improve improves improvement enhance strengthen reinforce
        reinforcement benefit help outperform superior best""".split()},
    **{w: ("quality", _DOWN) for w in """worse worsen degrade deterioration impair weaken harm hurt hinder
        underperform inferior worst trail lag""".split()},
    **{w: ("time", _UP) for w in "before earlier sooner prior precede preceded precedes previously predate".split()},
    **{w: ("time", _DOWN) for w in "after later afterwards subsequently subsequent postdate".split()},
    **{w: ("distance", _UP) for w in "farther farthest".split()},
    **{w: ("distance", _DOWN) for w in "closer closest nearer nearest".split()},
    **{w: ("cost", _UP) for w in "costlier costly pricier pricey expensive dearer".split()},
    **{w: ("cost", _DOWN) for w in "cheaper cheap inexpensive cheapest".split()},
    # Particles of phrasal verbs: "bring up" is not "bring down"; compared only when both have one.
    **{w: ("particle", _UP) for w in ("up",)},
    **{w: ("particle", _DOWN) for w in ("down",)},
    **{w: ("presence", _UP) for w in "add enable allow permit include keep retain supplement".split()},
    **{w: ("presence", _DOWN) for w in "remove disable prevent forbid exclude drop delete block".split()},
}

# Words that open a condition or qualifier of a statement ("in patients over 75",
# "within a partition", "by default", "when the cache is cold"). Dropping one
# generalises the statement beyond what its quote says.
CONDITION_OPENERS = frozenset("""
    if unless when whenever provided once within among under during except excluding
    only where
""".split())

# Words whose counterpart names the other party or the other way ("reads" / "writes",
# "client" / "server", "lends" / "borrows"): a sentence that says one where its quote
# says the other has swapped what the quote is about while keeping its shape.
_PAIRS = """read/write reader/writer input/output client/server send/receive sender/receiver
    upload/download import/export encrypt/decrypt encryption/decryption compress/decompress
    compression/decompression buy/sell buyer/seller lend/borrow lender/borrower parent/child
    inbound/outbound upstream/downstream ingress/egress push/pull producer/consumer
    leader/follower primary/replica primary/secondary host/guest local/remote internal/external
    synchronous/asynchronous sync/async static/dynamic public/private success/failure
    accept/reject allow/deny win/lose left/right first/last start/end begin/end inner/outer
    encode/decode serialize/deserialize import/export debit/credit import/export male/female
    positive/negative acidic/alkaline benign/malignant inhibit/activate agonist/antagonist
    upregulate/downregulate front/back ahead/behind advance/retreat upper/lower top/bottom north/south
    east/west head/tail source/target sender/recipient donor/recipient employer/employee landlord/tenant
    plaintiff/defendant creditor/debtor predator/prey inflow/outflow incoming/outgoing beat/lose
    prosecution/defence prosecution/defense
    numerator/denominator prefix/suffix forward/backward payer/payee supply/demand
    teacher/student minimum/maximum""".split()
CONVERSES: dict[str, frozenset[str]] = {}
for _pair in _PAIRS:
    _a, _b = _pair.split("/")
    CONVERSES[_a] = CONVERSES.get(_a, frozenset()) | {_b}
    CONVERSES[_b] = CONVERSES.get(_b, frozenset()) | {_a}

# Words of a decision, an outcome or a stance whose opposite WordNet does not list as
# its antonym ("upheld" against "dismissed", "blocked" against "cleared", "permits" against
# "prohibits", "voted in favour" against "voted against"): a sentence that says one where
# its quote says the other states the opposite.
OUTCOMES: dict[str, frozenset[str]] = {}
for _pair in """uphold/dismiss uphold/reject uphold/overturn block/clear block/approve approve/reject
        approve/deny grant/deny grant/refuse ratify/reject admit/deny confirm/deny lift/impose
        pass/fail permit/prohibit permit/forbid permit/ban allow/prohibit allow/forbid allow/ban favour/against
        favor/against support/oppose compulsory/voluntary compulsory/optional mandatory/voluntary
        mandatory/optional obligatory/voluntary""".split():
    _a, _b = _pair.split("/")
    OUTCOMES[_a] = OUTCOMES.get(_a, frozenset()) | {_b}
    OUTCOMES[_b] = OUTCOMES.get(_b, frozenset()) | {_a}

# Verbs that name one act with the same doer and the same undergoer ("Ruiz beat Deshpande"
# is "Ruiz defeated Deshpande"), which WordNet does not list as synonyms: a sentence's
# verb and its quote's are read as one, so that their two sides can be compared.
_SAME_ACTS = ("beat defeat", "buy acquire purchase")
SAME_ACT: dict[str, frozenset[str]] = {w: frozenset(g.split()) - {w} for g in _SAME_ACTS for w in g.split()}

# Relations that hold both ways ("X is linked to Y" says "Y is linked to X"): exchanging
# their two sides swaps no roles.
SYMMETRIC = frozenset("""link associate correlate connect relate coincide resemble equal match
    intersect overlap collide interact coexist react compete collaborate cooperate merge""".split())
# Verbs that end a state: "stopped recommending" says "no longer recommended".
CESSATION = frozenset("""stop cease end remove drop discontinue abandon abolish scrap withdraw
    retire deprecate halt quit suspend close shut""".split())
# Verbs that say a thing is not there or not given: "the parameter is omitted" is "no
# parameter is supplied", "where fertiliser was withheld" is "where none was applied".
OMISSION = frozenset("omit withhold skip exclude avoid refrain".split())
# Words whose meaning holds a negation: "prohibits asking" is "may not ask", "a shortage
# of funding" is "a lack of funding", "ignores empty directories" is "does not track them".
PRIVATIVE = frozenset("""prohibit forbid ban outlaw prevent preclude shortage absence scarcity dearth ignore
    inactivate deactivate disable refuse""".split())
