"""Whether the yes or the no a written answer opens with is the abstract's.

Asked "Does Qflex reduce the dimensionality of the action space?", the model wrote "Yes,
Qflex reduces the dimensionality of the action space by conducting exploration directly in
the native high-dimensional action space" [1]: every word of it is in the abstract (which
says that other methods reduce it, and Qflex does not), so no check of its words can tell it
from a right answer. The model reads the abstract again, asked only for the answer's yes or
no (``prompts/judge_polarity.md``); the probability it gives to "yes" is high when the
abstract's answer is yes and lower when it is no (benchmarks/results: the dev questions
whose answers open with a yes or a no, and twelve written for it). When the two disagree, the
written answer is not shown, and the abstract's own sentences answer instead, as for a yes or
a no that only restates the question (``asked.BARE_VERDICT``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from assistant.types import Dropped, Source

if TYPE_CHECKING:
    from assistant.answer.judge import Judge

# A Dropped reason's start: the answer's yes or no against the model's reading of the abstract
CONTRADICTS = "opens with a yes or a no that the abstract, read again by the model, does not give"
_OPENS = re.compile(r"\W*(yes|no)\b", re.IGNORECASE)


def opens_with_verdict(sentence: str) -> bool:
    """Whether a sentence opens with "Yes" or "No"; not "Yes: <title>" (the paper asked for)."""
    found = _OPENS.match(sentence)
    return found is not None and not sentence[found.end():].startswith(":")


def contradicted(question: str, sentence: str, judge: Judge, source: Source,
                 threshold: float) -> Dropped | None:
    """The reason to drop an answer opening with ``sentence`` when its yes or no is not what
    the model, reading ``source``'s abstract for the question alone, gives (P(yes) at
    ``threshold`` or above: yes); None when they agree or the model cannot say."""
    found = _OPENS.match(sentence)
    if found is None:
        return None
    p_yes = judge(question, source, "judge_polarity")
    if p_yes is None or (found.group(1).lower() == "yes") == (p_yes >= threshold):
        return None
    return Dropped(sentence, f"{CONTRADICTS} (P(yes) {p_yes:.2f}, {threshold:.2f} for a yes)")
