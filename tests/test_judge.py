"""The model's yes/no judgement of "which paper …?" answers (assistant/answer/judge.py).

Unit tests put a fake judge (or a fake model that gives P(yes)) behind the real index and
embeddings; the last test asks the real embedded model.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import replace
from pathlib import Path

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import BaseMessage

from assistant import resources
from assistant.answer.chain import ABSTAIN_TEXT
from assistant.answer.judge import build_judge, prompt
from assistant.answer.quotes import LEAD as QUOTE_LEAD
from assistant.answer.quotes import workings
from assistant.answer.support import backing, calibration
from assistant.api import Assistant
from assistant.config import Settings
from assistant.models.yes_no import share_of_yes

GLOWQ = "GlowQ: Group-Shared LOw-Rank Approximation for Quantized LLMs"
WHICH = "Which paper shares one low-rank correction across the layers of a quantized LLM?"


class Judged(FakeListChatModel):
    """A fake model that writes nothing and gives a fixed P(yes), recording its prompts."""

    p_yes: float = 0.5
    prompts: list = []  # noqa: RUF012  (one list per instance: set in the test)

    def yes_probability(self, messages: list[BaseMessage]) -> float:
        self.prompts.append(str(messages[-1].content))
        return self.p_yes

    def _call(self, *args, **kwargs):  # type: ignore[override]
        raise AssertionError("the model should not write the answer when the judge decides")


def make(home: Path, minilm, p_yes: float, **settings) -> tuple[Assistant, Judged]:
    llm = Judged(responses=[""], p_yes=p_yes, prompts=[])
    return Assistant(Settings(home=home, **settings), llm=llm, embeddings=minilm), llm


def test_share_of_yes_reads_both_answers_in_any_spelling() -> None:
    top = [("Yes", math.log(0.6)), (" yes", math.log(0.1)), ("No", math.log(0.2)), ("The", -1.0)]
    assert share_of_yes(top) == pytest.approx(0.7 / 0.9)
    assert share_of_yes([("The", -0.1)]) is None


def test_the_shipped_calibration_turns_the_judge_on() -> None:
    assert 0.5 < calibration().judge < 1.0


def test_an_accepted_paper_is_the_answer_with_its_own_sentence(bundled_home, minilm) -> None:
    assistant, llm = make(bundled_home, minilm, 0.99)
    answer = assistant.ask(WHICH)
    assert not answer.abstained
    assert [c.title for c in answer.citations] == [GLOWQ]
    said = answer.text.split('"')[1]
    assert len(said.split()) >= 8 and said in answer.citations[0].text
    # the judge saw the paper's title, its abstract and the question, once
    assert len(llm.prompts) == 1
    assert GLOWQ in llm.prompts[0] and WHICH in llm.prompts[0] and said in llm.prompts[0]
    # under it, the abstract's sentences closest to the question, other than the one given
    pointer, _, quote = answer.text.partition("\n" + QUOTE_LEAD)
    abstract = assistant.store.abstract(answer.citations[0].paper_id)
    quoted = quote.removesuffix(" [1].").split(" … ")
    assert quote.endswith('" [1].') and all(q.strip('"') in abstract for q in quoted)
    assert not any(q.strip('"') in pointer for q in quoted)
    # streamed as it is returned
    response = assistant.stream(WHICH)
    assert "".join(response) == answer.text == response.answer.text


def test_an_accepted_paper_is_said_with_how_its_method_works(bundled_home, minilm) -> None:
    """Under "which paper …?", besides the sentence that proposes the method and one close to
    the question, the abstract's next sentence naming the method: how it works ("DIVERSE
    augments a pretrained model with FiLM layers and uses CMA-ES …")."""
    assistant, _ = make(bundled_home, minilm, 0.99)
    answer = assistant.ask("Find me a paper on exploring the Rashomon set of neural networks.")
    assert answer.citations[0].title.startswith("DIVERSE")
    abstract = assistant.store.abstract(answer.citations[0].paper_id)
    how = next(s for s in abstract.split(". ") if s.startswith("DIVERSE augments"))
    assert how in answer.text.partition("\n" + QUOTE_LEAD)[2]


def test_how_a_method_works_is_its_second_naming_sentence() -> None:
    text = ("Models differ. We propose Qflex, a method. During training, Qflex traverses "
            "actions along a flow. Qflex also controls a body.")
    assert workings(text, ["Qflex"], "") == "During training, Qflex traverses actions along a flow."
    assert workings(text, ["Qflex"], "Qflex traverses actions along a flow during training") is None
    assert workings("We propose Qflex. It works well.", ["Qflex"], "") is None
    assert workings(text, [], "") is None
    results = ("We propose TEDM. Without preprocessing, TEDM sets new state-of-the-art results. "
               "TEDM generates forecasts with a light architecture.")
    assert workings(results, ["TEDM"], "") == "TEDM generates forecasts with a light architecture."


def test_a_rejected_nearest_paper_is_not_an_answer(bundled_home, minilm) -> None:
    assistant, llm = make(bundled_home, minilm, 0.05)
    answer = assistant.ask(WHICH)
    assert answer.abstained and answer.text == ABSTAIN_TEXT and not answer.citations
    assert any("judged" in d.reason and "0.05" in d.reason for d in answer.dropped)
    assert 1 <= len(llm.prompts) <= 2  # the best-supported papers, in turn


# A long paraphrase that shares few words with its paper: under the support gate.
FAR = ("Which paper lets a household robot that cannot see the whole room plan backwards from "
       "its goal, with action descriptions written in everyday English?")
NL_PDDL = "Natural Language PDDL (NL-PDDL)"


class Unsure(Judged):
    """A model that cannot say how sure it is (a server without ``logprobs``)."""

    def yes_probability(self, messages: list[BaseMessage]) -> None:  # type: ignore[override]
        self.prompts.append(str(messages[-1].content))
        return None


def test_a_which_paper_question_under_the_gate_is_put_to_the_judge(bundled_home,
                                                                    minilm) -> None:
    """No paper passes the support gate, so only the judge may answer: it reads the
    best-supported paper, and its yes is the answer, its no (or no judgement) an abstention."""
    probe = Assistant(Settings(home=bundled_home), embeddings=minilm)
    best = max(probe.retrieve(FAR), key=lambda s: s.support)
    assert best.title.startswith(NL_PDDL) and best.support < calibration().threshold
    # without a judge the gate decides, and the model is not asked
    gated = Assistant(Settings(home=bundled_home), embeddings=minilm,
                      llm=FakeListChatModel(responses=[f"{NL_PDDL} [1]."]))
    assert gated.ask(FAR).abstained

    accepted, llm = make(bundled_home, minilm, 0.99)
    answer = accepted.ask(FAR)
    assert not answer.abstained and answer.citations[0].title.startswith(NL_PDDL)
    assert len(llm.prompts) == 1 and NL_PDDL in llm.prompts[0]

    refused, llm = make(bundled_home, minilm, 0.05)
    answer = refused.ask(FAR)
    assert answer.abstained and not answer.citations and llm.prompts

    unsure = Unsure(responses=[""], prompts=[])
    answer = Assistant(Settings(home=bundled_home), llm=unsure, embeddings=minilm).ask(FAR)
    assert answer.abstained and not answer.citations and unsure.prompts  # and nothing written


class TwoMinds(Judged):
    """P(yes) ``p_yes`` to the first wording, ``p_again`` to the second (the one with a
    system turn)."""

    p_again: float = 0.5

    def yes_probability(self, messages: list[BaseMessage]) -> float:
        self.prompts.append(str(messages[-1].content))
        return self.p_again if messages[0].type == "system" else self.p_yes


@pytest.mark.parametrize(("first", "again", "asked", "accepted"), [
    (0.95, 0.0, 1, True),  # sure: asked once
    (0.50, 1.0, 1, False),  # sure it does not: asked once
    (0.80, 0.70, 2, True),  # unsure: the mean, 0.75, passes 0.72
    (0.80, 0.40, 2, False),  # unsure: the mean, 0.60, does not
])
def test_an_unsure_judgement_is_asked_again_in_other_words(bundled_home, minilm, monkeypatch,
                                                           first, again, asked, accepted) -> None:
    monkeypatch.setattr("assistant.answer.support.calibration",
                        lambda: replace(_SHIPPED, judge=0.72, judge_band=(0.7, 0.85),
                                        judge_within=1.0))  # one paper judged
    llm = TwoMinds(responses=[""], p_yes=first, p_again=again, prompts=[])
    answer = Assistant(Settings(home=bundled_home), llm=llm, embeddings=minilm).ask(WHICH)
    assert len(llm.prompts) == asked
    assert answer.abstained is not accepted, answer.text
    if asked == 2:  # the same paper and question, worded otherwise
        assert llm.prompts[0] != llm.prompts[1] and all(
            GLOWQ in p and WHICH in p for p in llm.prompts)


def test_the_shipped_band_holds_the_threshold() -> None:
    """An unsure first answer is one the threshold could go either way on."""
    low, high = _SHIPPED.judge_band
    assert 0.5 < low <= _SHIPPED.judge < high <= 1.0


def test_is_there_work_keeps_its_yes(bundled_home, minilm) -> None:
    question = "Is there work on sharing a low-rank correction across layers of quantized LLMs?"
    answer = make(bundled_home, minilm, 0.99)[0].ask(question)
    assert answer.text.startswith("Yes: GlowQ") and answer.citations


def test_fact_questions_are_not_judged(bundled_home, minilm) -> None:
    assistant, llm = make(bundled_home, minilm, 0.01)
    llm.responses = ["GlowQ reduces TTFB and increases throughput [1]."]
    llm.__class__ = FakeListChatModel  # writes its reply; no judge is asked
    answer = assistant.ask("By how much does GlowQ-S reduce TTFB?")
    assert llm.prompts == []
    assert answer.text  # answered or abstained by the checks, never by a judge
    assert not any("judged" in d.reason for d in answer.dropped)


def test_the_judge_reads_the_whole_abstract_or_the_excerpt_shown(bundled_home, minilm,
                                                                monkeypatch) -> None:
    """judge_on "abstract": every sentence of the paper; "excerpt": only the sentences chosen
    for the question, so the prompt is shorter."""
    abstract = next(p.abstract for p in Assistant(Settings(home=bundled_home), embeddings=minilm)
                    .papers() if p.title == GLOWQ)
    seen = {}
    for mode in ("abstract", "excerpt"):
        monkeypatch.setattr("assistant.answer.support.calibration",
                            lambda mode=mode: replace(_SHIPPED, judge_on=mode))
        # a short context, as when several papers share it
        assistant, llm = make(bundled_home, minilm, 0.99, context_tokens=120, focus_tokens=100)
        assert not assistant.ask(WHICH).abstained
        seen[mode] = llm.prompts[0]
    assert abstract[:200] in seen["abstract"] and GLOWQ in seen["excerpt"]
    assert len(seen["excerpt"]) < len(seen["abstract"])
    assert "low-rank" in seen["excerpt"] and WHICH in seen["excerpt"]


_SHIPPED = calibration()


def test_a_model_without_token_probabilities_has_no_judge() -> None:
    assert build_judge(FakeListChatModel(responses=["x"])) is None


def test_the_judge_prompt_cuts_a_long_abstract(bundled_home, minilm) -> None:
    assistant, _ = make(bundled_home, minilm, 0.5)
    source = assistant.retrieve(WHICH)[0]
    text = str(prompt(WHICH, replace(source, passages=("word " * 2000,)))[0].content)
    assert text.count("word") < 300 and WHICH in text and source.title in text


@pytest.mark.llm
def test_the_embedded_model_prefers_the_paper_that_answers(bundled_home, minilm,
                                                            embedded_llm) -> None:
    """The real model's P(yes) for GlowQ: higher for what GlowQ does than for a near miss
    (GlowQ's own topic, a task it never does) and for another topic."""
    assistant = Assistant(Settings(home=bundled_home), llm=embedded_llm, embeddings=minilm)
    judge = assistant.judge
    assert judge is not None
    glowq = next(s for s in assistant.retrieve(WHICH) if s.title == GLOWQ)
    right = judge(WHICH, glowq)
    near = judge("Which paper applies group-shared low-rank correction to speech recognition "
                 "models like Whisper?", glowq)
    far = judge("Which paper forecasts time series with elucidated diffusion models?", glowq)
    assert 0.0 < far < right < 1.0 and near < right, (right, near, far)


def _evidence(support: float, n: int):
    from assistant.answer.citations import Evidence
    from assistant.types import Source

    return Evidence(n, Source(f"p{n}", f"Paper {n}", "text", 1.0, support=support), ("text",), ())


def test_a_clear_second_place_is_not_judged() -> None:
    from assistant.answer.evidence import AnswerConfig, to_judge

    config = AnswerConfig(judge_papers=2, judge_within=0.95)
    close = [_evidence(0.60, 1), _evidence(0.58, 2), _evidence(0.57, 3)]
    assert [e.number for e in to_judge(close, config)] == [1, 2]  # at most judge_papers
    far = [_evidence(0.40, 1), _evidence(0.80, 2)]
    assert [e.number for e in to_judge(far, config)] == [2]  # 0.40 < 0.95 * 0.80
    assert len(to_judge(far, replace(config, judge_within=0.0))) == 2
    assert 0.0 < calibration().judge_within <= 1.0  # shipped, chosen on dev


class WritesAndJudges(Judged):
    """A fake model that writes its reply and gives ``p_yes`` to any judge's prompt."""

    _call = FakeListChatModel._call


@pytest.mark.parametrize(("p_yes", "quoted"), [(0.9, True), (0.2, False)])
def test_a_yes_no_near_miss_is_not_answered_with_the_nearest_sentences(
        bundled_home, minilm, p_yes, quoted) -> None:
    """"Has Value Matching been used for protein structure design?": the model's bare "Yes,
    …" is dropped, and the abstract's closest sentences stand for the answer only when the
    model judges that the abstract says yes or no to it (``verdict_threshold``); else "not
    covered", and nothing is cited."""
    question = "Has Value Matching been used for protein structure design?"
    llm = WritesAndJudges(responses=["Yes, Value Matching has been used for protein "
                                     "structure design [1]."], p_yes=p_yes, prompts=[])
    answer = Assistant(Settings(home=bundled_home), llm=llm, embeddings=minilm).ask(question)
    asked = [p for p in llm.prompts if "either yes or no" in p]
    assert len(asked) == 1 and question in asked[0] and "Value Matching" in asked[0]
    assert answer.abstained is not quoted
    if quoted:
        assert answer.text.startswith("The abstract of Value Matching does not say yes or no")
        assert answer.citations
    else:
        assert answer.text == ABSTAIN_TEXT and not answer.citations
        assert "does not say yes or no to the question (P(yes) 0.20 < 0.45)" in \
            answer.dropped[-1].reason


def test_a_yes_no_question_its_abstract_has_no_words_for_is_not_covered(
        bundled_home, minilm) -> None:
    """"Has Qflex been run on a physical robot?": Qflex's abstract holds none of "physical",
    "robot", "run", so its closest sentences would only look like an answer; "not covered",
    nothing cited, and the model is not asked to judge. A question whose words the abstract
    holds is judged as before."""
    from assistant.answer.evidence import speaks_of

    question = "Has Qflex been run on a physical robot?"
    llm = WritesAndJudges(responses=["Yes, Qflex has been run on a physical robot [1]."],
                          p_yes=0.9, prompts=[])
    answer = Assistant(Settings(home=bundled_home), llm=llm, embeddings=minilm).ask(question)
    assert answer.text == ABSTAIN_TEXT and not answer.citations
    assert answer.dropped[-1].reason == "its abstract holds 0% of the question's words"
    assert not [p for p in llm.prompts if "either yes or no" in p]
    assert speaks_of(question, "Qflex", "Qflex explores in a high-dimensional action space.") == 0
    assert speaks_of("Does Qflex explore the action space?", "Qflex",
                     "Qflex explores in a high-dimensional action space.") == 1.0


def test_the_shipped_list_threshold_turns_the_list_judge_on() -> None:
    """Chosen on dev (``benchmarks/list_probe.py``) and recorded as such."""
    data = json.loads(resources.package_data("support.json").read_text(encoding="utf-8"))
    assert 0.5 < _SHIPPED.listed == data["list_threshold"] < 1.0
    assert data["list_fitted_on"].startswith("dev")


def test_the_shipped_verdict_threshold_is_below_the_judges() -> None:
    """Asked only after the abstract's words were chosen over the model's verdict: it stops
    the near misses the judge is surest of, not every unsure one."""
    assert 0.0 < _SHIPPED.verdict < _SHIPPED.judge


class _Server:
    """Stands in for an OpenAI-compatible chat model: each call returns the next reply."""

    openai_api_base = "http://127.0.0.1:9/v1"

    def __init__(self, *tops: list[tuple[str, float]] | None) -> None:
        self.tops, self.calls = list(tops), 0

    def bind(self, **_kwargs):
        return self

    def invoke(self, _messages):
        from langchain_core.messages import AIMessage

        self.calls += 1
        top = self.tops.pop(0)
        content = [] if top is None else [
            {"token": top[0][0], "top_logprobs": [{"token": t, "logprob": v} for t, v in top]}]
        return AIMessage("", response_metadata={"logprobs": {"content": content}})


def test_a_server_reply_without_yes_or_no_does_not_turn_the_judge_off(bundled_home,
                                                                        minilm) -> None:
    """Top tokens with neither yes nor no say nothing of that one question; a server that
    gives no logprobs at all is not asked again (the answer is written instead)."""
    source = Assistant(Settings(home=bundled_home), embeddings=minilm).retrieve(WHICH)[0]
    server = _Server([("The", -0.1)], [("Yes", math.log(0.8)), ("No", math.log(0.2))], None,
                     [("Yes", -0.1)])
    judge = build_judge(server)
    assert judge(WHICH, source) is None
    assert judge(WHICH, source) == pytest.approx(0.8)
    assert judge.sure()  # so far it gives P(yes): a yes/no answer is held back for its check
    assert judge(WHICH, source, "judge_verdict") is None  # no logprobs: off from now on
    assert judge(WHICH, source) is None and server.calls == 3
    assert not judge.sure()  # and answers stream as they come, unchecked for their yes or no


def test_the_verdict_judge_works_with_the_paper_judge_off(bundled_home, minilm,
                                                         monkeypatch) -> None:
    """``judge_threshold`` 0 turns off judging papers, not the yes/no verdict's judge."""
    monkeypatch.setattr("assistant.answer.support.calibration",
                        lambda: replace(_SHIPPED, judge=0.0))
    llm = WritesAndJudges(responses=["Yes, Value Matching has been used for protein structure "
                                     "design [1].", "GlowQ [1]."], p_yes=0.2, prompts=[])
    assistant = Assistant(Settings(home=bundled_home), llm=llm, embeddings=minilm)
    answer = assistant.ask("Has Value Matching been used for protein structure design?")
    assert answer.abstained and [p for p in llm.prompts if "either yes or no" in p]
    llm.prompts.clear()
    assistant.ask(WHICH)  # written and checked: no paper is put to the judge
    assert llm.prompts == []


LIST = "Which papers rely on low-rank approximations or factorizations?"


@pytest.mark.parametrize(("p_yes", "listed"), [(0.9, True), (0.3, False)])
def test_a_list_near_miss_is_not_answered_with_the_nearest_papers(
        bundled_home, minilm, p_yes, listed) -> None:
    """"Which papers …?": the model's list is written only when the model judges one of the
    best-supported papers an answer (``list_threshold``); for a near miss it judges none is,
    and the answer is "not covered", citing nothing, each paper's judgement in ``dropped``."""
    llm = WritesAndJudges(responses=["GlowQ uses a group-shared low-rank approximation [1]."],
                          p_yes=p_yes, prompts=[])
    answer = Assistant(Settings(home=bundled_home), llm=llm, embeddings=minilm).ask(LIST)
    judged = [p for p in llm.prompts if "belongs in the answer" in p]
    assert judged and all(LIST in p for p in judged)
    shown = backing(answer.sources, _SHIPPED.threshold, _SHIPPED.relative)
    assert len(judged) == (1 if listed else min(3, len(shown)))
    assert answer.abstained is not listed
    if listed:
        assert answer.text.startswith("GlowQ") and answer.citations
    else:
        assert answer.text == ABSTAIN_TEXT and not answer.citations
        assert len(answer.dropped) == len(judged)
        threshold = f"{_SHIPPED.listed:.2f}"
        assert all(f"(P(yes) 0.30 < {threshold})" in d.reason for d in answer.dropped)


def test_a_list_about_a_named_paper_is_not_judged(bundled_home, minilm) -> None:
    """"Which quantization techniques does the GlowQ abstract name?" asks for several things
    of one paper the question names: no paper to judge."""
    llm = WritesAndJudges(responses=["GlowQ names GPTQ and AWQ [1]."], p_yes=0.1, prompts=[])
    answer = Assistant(Settings(home=bundled_home), llm=llm, embeddings=minilm).ask(
        "Which quantization techniques does the GlowQ abstract name as widely used?")
    assert not any("belongs in the answer" in p for p in llm.prompts)
    assert not answer.abstained and answer.text.startswith("GlowQ")


def test_a_list_is_written_when_the_model_cannot_say_how_sure_it_is(bundled_home,
                                                                      minilm) -> None:
    """A server without ``logprobs``: no judgement, so the list is written and checked."""
    class WritesUnsure(Unsure):
        _call = FakeListChatModel._call

    llm = WritesUnsure(responses=["GlowQ uses a group-shared low-rank approximation [1]."],
                       prompts=[])
    answer = Assistant(Settings(home=bundled_home), llm=llm, embeddings=minilm).ask(LIST)
    assert any("belongs in the answer" in p for p in llm.prompts)
    assert not answer.abstained and answer.text.startswith("GlowQ")


class ReadsPolarity(WritesAndJudges):
    """Writes its reply; P(yes) ``p_yes`` to the polarity prompt, 0.9 to every other judge."""

    def yes_probability(self, messages: list[BaseMessage]) -> float:
        text = str(messages[-1].content)
        self.prompts.append(text)
        return self.p_yes if "is the answer to the question yes or no" in text else 0.9


@pytest.mark.parametrize(("p_yes", "kept"), [(0.3, False), (0.9, True)])
def test_an_answer_whose_yes_the_abstract_does_not_give_is_not_shown(
        bundled_home, minilm, p_yes, kept) -> None:
    """"Does Qflex reduce the dimensionality of the action space?" was answered "Yes, Qflex
    reduces the dimensionality … by exploring directly in the native high-dimensional action
    space": its words are all the abstract's, its yes is wrong. The answer is held back until
    the model, reading the abstract again, gives the same yes (shown then) or not (dropped,
    never streamed; the abstract's own sentences answer)."""
    from assistant.answer.polarity import CONTRADICTS

    question = "Does Qflex reduce the dimensionality of the action space?"
    said = ("Yes, Qflex reduces the dimensionality of the action space by conducting "
            "exploration directly in the native high-dimensional action space [1].")
    llm = ReadsPolarity(responses=[said], p_yes=p_yes, prompts=[])
    assistant = Assistant(Settings(home=bundled_home), llm=llm, embeddings=minilm)
    response = assistant.stream(question)
    shown = "".join(response)  # what the user saw, as it came
    answer = response.answer
    assert [p for p in llm.prompts if "is the answer to the question yes or no" in p]
    if kept:
        assert answer.text.startswith("Yes, Qflex reduces") and "Yes, Qflex" in shown
    else:
        assert "Yes, Qflex" not in shown and "Yes, Qflex" not in answer.text
        assert answer.text.startswith("The abstract of Qflex does not say yes or no")
        # the hidden answer's citations are not the answer's: [1] is the quoted paper
        marks = set(re.findall(r"\[(\d+)\]", answer.text))
        assert marks == {"1"} and len(answer.citations) == 1
        assert answer.citations[0].title.startswith("Scalable Exploration")
        assert any(d.reason.startswith(CONTRADICTS) for d in answer.dropped)
