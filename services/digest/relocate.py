"""Quote relocation for the digest; the logic lives in shared.research.relocate, which the
claim check (shared.verification.grounding) uses too."""

from shared.research.relocate import FUZZY_MIN_SCORE, MAX_WINDOW_SENTENCES, Match, locate

__all__ = ["FUZZY_MIN_SCORE", "MAX_WINDOW_SENTENCES", "Match", "locate"]
