"""A yes/no question's answer read from the first token's probabilities: the spellings of
"yes" and "no", and the share of "yes" among them."""

from __future__ import annotations

import math
from collections.abc import Sequence

YES = ("yes", "Yes", " yes", " Yes", "YES")
NO = ("no", "No", " no", " No", "NO")


def share_of_yes(top: Sequence[tuple[str, float]]) -> float | None:
    """P(yes) / (P(yes) + P(no)) from (token, log-probability) pairs of the first token; None
    when neither answer is among them."""
    yes = sum(math.exp(lp) for token, lp in top if token in YES)
    no = sum(math.exp(lp) for token, lp in top if token in NO)
    return yes / (yes + no) if yes + no else None
