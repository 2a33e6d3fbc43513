"""Answer latency with the embedded model on the bundled corpus: ours and the tutorial chain."""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

QUESTIONS = [
    "What reward does DrPose maximize?",
    "What is SAFER?",
    "What does GlowQ share across groups of modules?",
    "Which paper studies coalition formation games?",
    "What dataset does DrPose train on?",
    "How does TEDM forecast time series?",
    "Which papers use flow models?",
    "What is the capital of France?",
]

# Chats of three turns: the follow-ups are where llama.cpp's saved prompt states count.
CHATS = [
    ("What is SAFER?", "What statistical method does it use to calibrate the sampling budget?",
     "What does it guarantee?"),
    ("What reward does DrPose maximize?", "Which dataset does it use?",
     "How is that dataset built?"),
    ("What does GlowQ share across groups of modules?", "How much faster is it?",
     "Which models is it tested on?"),
    ("How does TEDM forecast time series?", "What does it outperform?", "On which datasets?"),
]


def _summary(prefix: str, first: list[float], total: list[float]) -> dict[str, Any]:
    def pct(values: list[float], q: float) -> float:
        ordered = sorted(values)
        return round(ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))], 2)

    return {
        f"{prefix}first_token_p50_s": pct(first, 0.5) if first else None,
        f"{prefix}first_token_p95_s": pct(first, 0.95) if first else None,
        f"{prefix}total_p50_s": pct(total, 0.5),
        f"{prefix}total_p95_s": pct(total, 0.95),
    }


def answer_latencies(work: Path) -> dict[str, Any]:
    """First-token and total latency per question, model loaded once, index built once."""
    from langchain_core.messages import HumanMessage
    from tutorial import TutorialPipeline

    from assistant.api import Assistant
    from assistant.config import Settings
    from assistant.index.embeddings import MiniLMEmbeddings
    from assistant.index.indexing import build_index
    from assistant.ingest.corpus import load_papers
    from assistant.resources import bundled_corpus_dir

    settings = Settings(home=work / "home")
    embeddings = MiniLMEmbeddings()
    build_index(settings, embeddings=embeddings)
    assistant = Assistant(settings, embeddings=embeddings)
    assistant.llm.load()
    first: list[float] = []
    total: list[float] = []
    prompt_tokens: list[int] = []
    for question in QUESTIONS:
        answer = assistant.ask(question)
        total.append(answer.timings.total)
        if answer.timings.first_token is not None:
            first.append(answer.timings.first_token)
            prompt_tokens.append(answer.usage.prompt_tokens)
    result = _summary("answer_", first, total)
    result["answer_prompt_tokens_mean"] = round(statistics.mean(prompt_tokens), 1) if prompt_tokens else 0

    tutorial = TutorialPipeline(work / "tutorial", embeddings)
    tutorial.build(load_papers([bundled_corpus_dir()]))
    t_first: list[float] = []
    t_total: list[float] = []
    for question in QUESTIONS:
        start = time.perf_counter()
        documents = tutorial.retrieve(question, k=4)
        context = "\n\n".join(f"{d.metadata['title']}: {d.page_content}" for d in documents)
        prompt = (f"Use the following context to answer the question, citing paper titles.\n\n"
                  f"{context}\n\nQuestion: {question}\nAnswer:")
        seen = None
        for chunk in assistant.llm.stream([HumanMessage(prompt)]):
            if seen is None and chunk.content:
                seen = time.perf_counter() - start
        t_total.append(time.perf_counter() - start)
        if seen is not None:
            t_first.append(seen)
    result.update(_summary("tutorial_answer_", t_first, t_total))
    result.update(chat_latencies(assistant))
    return result


def chat_latencies(assistant: Any) -> dict[str, Any]:
    """Follow-up latency in chats (rewrite included), without and with saved prompt states,
    each chat run both ways one after the other from an empty context."""
    from assistant.models.prompt_cache import PromptCache

    llama = assistant.llm.load()
    saved_cache = llama.cache
    times: dict[str, tuple[list[float], list[float]]] = {"off": ([], []), "on": ([], [])}
    try:
        for chat in CHATS:
            for mode in ("off", "on"):
                llama.reset()  # nothing of the previous chat left in the context
                llama.set_cache(PromptCache(capacity_bytes=256 * 2**20) if mode == "on" else None)
                history: list[tuple[str, str]] = []
                for turn, question in enumerate(chat):
                    answer = assistant.ask(question, history=history)
                    history = [*history, (question, answer.text)]
                    if turn and answer.timings.first_token is not None:
                        times[mode][0].append(answer.timings.first_token)
                        times[mode][1].append(answer.timings.total)
    finally:
        llama.set_cache(saved_cache)
    result = {}
    for mode, prefix in (("off", "chat_followup_no_cache_"), ("on", "chat_followup_")):
        result.update(_summary(prefix, *times[mode]))
    return result
