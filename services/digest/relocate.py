"""Quote relocation for the digest; the logic lives in shared.relocate, which the
claim check (shared.grounding) uses too."""

from shared.relocate import FUZZY_MIN_SCORE, MAX_WINDOW_SENTENCES, Match, locate

__all__ = ["FUZZY_MIN_SCORE", "MAX_WINDOW_SENTENCES", "Match", "locate"]
