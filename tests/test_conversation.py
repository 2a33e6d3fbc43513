"""Which papers a question in a conversation is asked of (assistant/answer/conversation.py),
with the search faked: each paper's support for the question is given."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from assistant.answer.conversation import Scope, asked_of_earlier
from assistant.types import Source

TITLES = {
    "ssd": "SSD-GS: Scattering and Shadow Decomposition for Relightable 3D Gaussian Splatting",
    "omni": "TimeOmni-1: Incentivizing Complex Reasoning with Time Series in LLMs",
    "uec": "Uncertainty-driven Embedding Convolution",
}
def titles() -> dict[str, str]:
    return TITLES


HISTORY = [("tell me about SSD-GS", "SSD-GS is a physically-based relighting framework [1].")]
GATE = 0.4


def _find(support: dict[str, float]) -> tuple[list[tuple[str, frozenset[str] | None]], object]:
    """A search that finds every paper in the order given (its rank, which need not be the
    order of support), and records what it was asked."""
    calls: list[tuple[str, frozenset[str] | None]] = []

    def find(question: str, among: frozenset[str] | None) -> Sequence[Source]:
        calls.append((question, among))
        return [Source(i, TITLES[i], "", 0.0, support=s) for i, s in support.items()
                if among is None or i in among]

    return calls, find


def test_a_nameless_question_the_previous_paper_answers_best_is_asked_of_it() -> None:
    """"what are the four components?" finds TimeOmni-1 first on its own; SSD-GS, the paper
    just discussed, supports it better: it is asked of SSD-GS, with the earlier question."""
    calls, find = _find({"omni": 0.69, "ssd": 0.92, "uec": 0.1})
    asked = asked_of_earlier("what are the four components?", HISTORY, titles, find, GATE)
    assert asked == Scope("what are the four components? (follow-up to: tell me about SSD-GS)",
                          frozenset({"ssd"}), pointed=False)  # found by the search, not pointed
    assert calls == [("what are the four components?", None),
                     ("what are the four components?", frozenset({"ssd"}))]


@pytest.mark.parametrize(("question", "support"), [
    # a new topic: the previous paper does not support it, or not better than another does
    ("any paper on combining several text embedding models?", {"uec": 0.9, "ssd": 0.19}),
    ("how are the embeddings combined?", {"uec": 0.9, "ssd": 0.5}),
    ("how are the embeddings combined?", {"uec": 0.3, "ssd": 0.35}),  # under the gate
    # found second, another paper supports it better than the previous one does
    ("how are the embeddings combined?", {"omni": 0.5, "uec": 0.95, "ssd": 0.9}),
    # names its own subject, or asks for papers
    ("what are the four components of UEC?", {"uec": 0.3, "ssd": 0.9}),
    ("Which papers decompose reflectance?", {"omni": 0.5, "ssd": 0.9}),
])
def test_other_questions_are_asked_of_every_paper(question: str,
                                                  support: dict[str, float]) -> None:
    _, find = _find(support)
    assert asked_of_earlier(question, HISTORY, titles, find, GATE) is None


def test_a_question_that_finds_the_previous_paper_first_is_still_asked_with_it() -> None:
    """"were the results good?" after TEDM finds TEDM first on its own, but alone it is about
    nothing (it was refused before the model): it is asked with the question before it."""
    _, find = _find({"ssd": 0.92, "omni": 0.2})
    assert asked_of_earlier("were the results good?", HISTORY, titles, find, GATE) == Scope(
        "were the results good? (follow-up to: tell me about SSD-GS)", frozenset({"ssd"}))


def test_a_question_with_no_topic_words_is_not_taken_for_a_follow_up() -> None:
    """"who are you?" and a question in a script the stems cannot read have no topic words
    either; they are not "why?", and are searched for as they are."""
    _, find = _find({"omni": 0.2, "ssd": 0.1})
    for question in ("who are you?", "扩散模型的采样效率是多少？", "?"):
        assert asked_of_earlier(question, HISTORY, titles, find, GATE) is None


def test_a_bare_follow_up_is_about_what_was_just_said() -> None:
    """"why?" has no topic of its own: it is asked of the previous answer's paper, whatever
    the search finds for the word alone."""
    _, find = _find({"omni": 0.2, "ssd": 0.1})
    assert asked_of_earlier("why?", HISTORY, titles, find, GATE) == Scope(
        "why? (follow-up to: tell me about SSD-GS)", frozenset({"ssd"}), pointed=True)


def test_of_these_is_asked_among_the_listed_papers_and_nothing_without_history() -> None:
    listed = [("Which papers use 3D Gaussians?", f"{TITLES['ssd']}; {TITLES['uec']} [1][2].")]
    _, find = _find({"ssd": 0.9})
    assert asked_of_earlier("Which of these does relighting?", listed, titles, find, GATE) == Scope(
        "Which paper does relighting?", frozenset({"ssd", "uec"}))
    assert asked_of_earlier("what are the four components?", [], titles, find, GATE) is None
    abstained = [("tell me about X", "The indexed papers do not cover this question.")]
    assert asked_of_earlier("what are the four components?", abstained, titles, find,
                            GATE) is None


def test_a_previous_answer_naming_its_paper_by_the_abstracts_name_is_that_papers() -> None:
    """"JOSH is an optimization-based method …": the title says "Joint Optimization …", the
    abstract "we propose JOSH"; "is the code out?" is asked of JOSH."""
    josh = Source("josh", "Joint Optimization for 4D Human-Scene Reconstruction in the Wild",
                  "In this work, we propose JOSH, a novel optimization-based method.", 0.0,
                  support=0.94)
    other = Source("agent", "Agentic Predictor", "It encodes code and prompts.", 0.0,
                   support=0.90)

    def find(question: str, among: frozenset[str] | None) -> Sequence[Source]:
        return [s for s in (josh, other) if among is None or s.paper_id in among]

    history = [("what does JOSH do?", "JOSH is an optimization-based method for 4D human-scene "
                                      "reconstruction from monocular videos [1].")]
    asked = asked_of_earlier("is the code out?", history, lambda: {}, find, GATE)
    assert asked == Scope("is the code out? (follow-up to: what does JOSH do?)",
                          frozenset({"josh"}))
    # an answer that names no paper leans on none
    refused = [("what does JOSH do?", "The indexed papers do not cover this question.")]
    assert asked_of_earlier("is the code out?", refused, lambda: {}, find, GATE) is None


@pytest.mark.parametrize(("question", "paper", "nth"), [
    ("what about the third one?", "uec", "the third one"),
    ("and the first one?", "omni", "the first one"),
    ("tell me about the last paper", "uec", "the last paper"),
])
def test_the_nth_paper_of_the_previous_answer_is_the_one_asked_about(question, paper,
                                                                     nth) -> None:
    """After a list, "the third one" is the third paper the answer named, in its order; it is
    asked of that paper by its title (the model is shown it alone, with no list to count),
    whatever its support: the user pointed at it."""
    calls, find = _find({"omni": 0.1, "ssd": 0.1, "uec": 0.1})
    history = [("which papers?", f"{TITLES['omni']} [1]. {TITLES['ssd']} [2]. {TITLES['uec']} [3].")]
    asked = asked_of_earlier(question, history, titles, find, GATE)
    assert asked == Scope(f"{question.replace(nth, TITLES[paper])} (follow-up to: which papers?)",
                          frozenset({paper}), pointed=True)
    # an ordinal inside a question of its own points at nothing
    for own in ("Which is the first paper to use diffusion for relighting?",
                "compare the first one with GlowQ"):
        assert asked_of_earlier(own, history, titles, find, GATE) is None, own
    # "why?" after a list is asked among its papers, and the support gate still decides
    assert asked_of_earlier("why?", history, titles, find, GATE) == Scope(
        "why? (follow-up to: which papers?)", frozenset({"omni", "ssd", "uec"}), pointed=False)
    # past the end of the list, or after one paper, it points at nothing
    assert asked_of_earlier("what about the fifth one?", history, titles, find, GATE) is None


def test_compare_them_after_a_list_names_the_listed_papers() -> None:
    """"compare them" after a list was rewritten by the model into the list question again;
    it is asked of the listed papers by name, in the answer's order; after one paper it is
    not a comparison."""
    _, find = _find({"omni": 0.5, "ssd": 0.5})
    listed = [("which papers?", f"{TITLES['ssd']} [1]. {TITLES['omni']} [2].")]
    assert asked_of_earlier("compare them", listed, titles, find, GATE) == Scope(
        "compare SSD-GS and TimeOmni-1.", frozenset({"ssd", "omni"}))
    assert asked_of_earlier("summarize both", HISTORY, titles, find, GATE) is None


def test_a_rewrite_that_only_drops_ok_is_no_rewrite() -> None:
    """"ok. what did they compare against?" came back from the model as "What did they compare
    against?": "they" unnamed, it was searched alone and refused. A rewrite that only drops
    the words leading into the question is joined to the previous question, like one that
    changes nothing; one that names the paper is kept."""
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    from assistant.answer.conversation import standalone

    history = [("tell me about SSD-GS", "SSD-GS is a physically-based relighting framework [1]."),
               ("does it need many views?", "It uses multi-view captures [1].")]
    question = "ok. what did they compare against in the experiments?"
    unchanged = FakeListChatModel(responses=["What did they compare against in the experiments?"])
    assert standalone(question, history, unchanged) == (
        f"{question} (follow-up to: does it need many views?)")
    named = FakeListChatModel(responses=["What did SSD-GS compare against in the experiments?"])
    assert standalone(question, history, named) == (
        "What did SSD-GS compare against in the experiments?")


def test_a_rewrite_that_still_says_they_and_names_nothing_is_no_rewrite() -> None:
    """"did they try it on any medical images? i mostly care about x-rays" came back as "Did
    they try it on any medical images?": shorter, but "they" and "it" still unnamed, so it
    was searched alone and refused. Such a rewrite is joined to the previous question too;
    one that names the paper, or a thing in capitals ("the Rashomon set"), is kept."""
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    from assistant.answer.conversation import standalone

    history = [("what does the MVR paper do", "MVR shapes rewards from multi-view videos [1].")]
    question = "which benchmarks did they eval on? ideally robot arms"
    unnamed = FakeListChatModel(responses=["Which benchmarks did they evaluate on?"])
    assert standalone(question, history, unnamed) == (
        f"{question} (follow-up to: what does the MVR paper do)")
    mine = FakeListChatModel(responses=["Can I run it on my own robot arm?"])  # "I": no name
    assert standalone(question, history, mine).endswith("(follow-up to: what does the MVR paper do)")
    for kept in ("Which benchmarks did they evaluate MVR on?",
                 "Which benchmarks did they evaluate the Rashomon set on?",
                 "Which robot arm benchmarks are used?"):
        assert standalone(question, history, FakeListChatModel(responses=[kept])) == kept


def test_a_rewrite_that_names_what_nobody_said_is_no_rewrite() -> None:
    """After two turns on NL-PDDL, "does its planning cost blow up as the number of objects
    grows?" came back as "Does GraphRAG's planning cost …?": the rewrite prompt's own example
    name. It was searched for GraphRAG and refused. A rewrite that names what neither the
    conversation nor the follow-up gave is joined to the last question that names something
    instead; a capitalised word the rewrite adds ("English") is no name."""
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    from assistant.answer.conversation import standalone

    history = [("is there a paper on planning with natural-language PDDL?",
                "Yes, NL-PDDL extends symbolic PDDL into natural language [1]."),
               ("what environments?", "It is evaluated on Blocksworld and ALFWorld [1].")]
    question = "does its planning cost blow up as the number of objects grows?"
    invented = FakeListChatModel(responses=[
        "Does GraphRAG's planning cost blow up as the number of objects grows?"])
    assert standalone(question, history, invented) == (
        f"{question} (follow-up to: is there a paper on planning with natural-language PDDL?)")
    english = FakeListChatModel(responses=["Does NL-PDDL plan in languages other than English?"])
    assert standalone("does it plan in other languages?", history, english) == (
        "Does NL-PDDL plan in languages other than English?")
    named = FakeListChatModel(responses=[
        "Does NL-PDDL's planning cost blow up as the number of objects grows?"])
    assert standalone(question, history, named).startswith("Does NL-PDDL's planning cost")
