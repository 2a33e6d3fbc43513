"""What a question asks: the one home for every rule about how questions are phrased.

Read off a question here, and nowhere else:

- what kind of answer it wants, and the names and words it holds (``kinds``), and what it
  wants named: a dataset, a number, a value, or a yes or a no (``wanted``);
- what it says about its context (``context``): a follow-up or a new topic, asked of the
  previous answer's papers ("which of these …?"), about the collection itself, or for a
  paper's reference (its BibTeX, its link).

``tests/test_intent.py`` holds the table of phrasings each rule must and must not catch.
"""

from assistant.answer.intent.context import (
    about_collection,
    among_earlier,
    asked_again,
    asks_for_reference,
    asks_of_them_together,
    bare_follow_up,
    join_follow_up,
    needs_rewrite,
)
from assistant.answer.intent.kinds import (
    FOLLOW_UP,
    Kind,
    asked,
    asked_for,
    asking,
    asks_for_papers,
    asks_for_several,
    asks_whether,
    identifies,
    kind_of,
    left_out,
    strong_names,
    topic_terms,
)
from assistant.answer.intent.wanted import asks_for_name, asks_which_thing, asks_yes_or_no, ranks

__all__ = [
    "FOLLOW_UP",
    "Kind",
    "about_collection",
    "among_earlier",
    "asked",
    "asked_again",
    "asked_for",
    "asking",
    "asks_for_name",
    "asks_for_papers",
    "asks_for_reference",
    "asks_for_several",
    "asks_of_them_together",
    "asks_whether",
    "asks_which_thing",
    "asks_yes_or_no",
    "bare_follow_up",
    "identifies",
    "join_follow_up",
    "kind_of",
    "left_out",
    "needs_rewrite",
    "ranks",
    "strong_names",
    "topic_terms",
]
