"""Many threads on one Assistant and on separate ones: every answer as when asked alone."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from scripted_model import KNOWN, ScriptedChatModel

from assistant.api import Assistant
from assistant.config import Settings
from assistant.types import Answer

THREADS = 8
ROUNDS = 2  # each answer embeds its passages: keep the run short on a small machine
QUESTIONS = list(KNOWN)


def summary(answer: Answer) -> tuple:
    """What must not change with concurrency: text, citations and what was retrieved."""
    return (answer.text, answer.abstained, tuple((c.title, c.text) for c in answer.citations),
            tuple(s.paper_id for s in answer.sources))


@pytest.fixture(scope="module")
def truth(bundled_home: Path, minilm) -> dict[str, tuple]:
    """Each question asked alone, in one thread."""
    alone = Assistant(Settings(home=bundled_home), llm=ScriptedChatModel(), embeddings=minilm)
    answers = {q: alone.ask(q) for q in QUESTIONS}
    for question, answer in answers.items():  # the single-threaded answers are right
        assert answer.citations[0].title == KNOWN[question][0] and not answer.abstained
    retrieved = {q: tuple(s.paper_id for s in alone.retrieve(q)) for q in QUESTIONS}
    return {q: (summary(answers[q]), retrieved[q]) for q in QUESTIONS}


def work(assistant_for_thread, number: int, rounds: int) -> list[tuple[str, tuple, tuple]]:
    assistant = assistant_for_thread(number)
    results = []
    for round_ in range(rounds):
        question = QUESTIONS[(number + round_) % len(QUESTIONS)]
        answer = assistant.ask(question)
        sources = tuple(s.paper_id for s in assistant.retrieve(question))
        results.append((question, summary(answer), sources))
    return results


def run_threads(assistant_for_thread, rounds: int = ROUNDS) -> list[tuple[str, tuple, tuple]]:
    with ThreadPoolExecutor(THREADS) as pool:
        futures = [pool.submit(work, assistant_for_thread, n, rounds) for n in range(THREADS)]
        return [r for f in futures for r in f.result(timeout=300)]


def test_eight_threads_on_one_assistant(bundled_home, minilm, truth) -> None:
    llm = ScriptedChatModel()
    # its parts are built on first use, by whichever thread comes first
    shared = Assistant(Settings(home=bundled_home), llm=llm, embeddings=minilm)
    results = run_threads(lambda _: shared)
    assert len(results) == THREADS * ROUNDS
    for question, answer, sources in results:
        assert (answer, sources) == truth[question]
    assert llm.calls == THREADS * ROUNDS


def test_eight_threads_on_separate_assistants(bundled_home, minilm, truth) -> None:
    llm = ScriptedChatModel()  # each Assistant opens its own store, at the same time
    results = run_threads(
        lambda _: Assistant(Settings(home=bundled_home), llm=llm, embeddings=minilm), rounds=1
    )
    assert len(results) == THREADS
    for question, answer, sources in results:
        assert (answer, sources) == truth[question]
