"""Soak: 500 questions in a row through one Assistant, with memory and file handles bounded."""

from __future__ import annotations

import gc
import os
import time
from pathlib import Path

from conftest import BUNDLED
from langchain_core.embeddings import DeterministicFakeEmbedding
from scripted_model import KNOWN, ScriptedChatModel

from assistant.api import Assistant
from assistant.config import Settings
from assistant.index.indexing import build_index

QUESTIONS = 500
WARM_UP = 25
# Chroma's SQLite pool opens a connection more when it likes: 6 were seen with an evaluation
# running beside the test (4 alone); a leak of one per question would show hundreds.
MAX_NEW_FILES = 16
MAX_GROWTH_MB = 40  # generous: a leak of one retrieval's data per question would pass 100 MB


def resident_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS in /proc/self/status")


def open_files() -> dict[str, str]:
    found = {}
    for fd in os.listdir("/proc/self/fd"):
        try:
            found[fd] = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # the listing's own descriptor, closed already
            pass
    return found


def test_500_questions_through_one_assistant(tmp_path: Path) -> None:
    # Fake embeddings keep 500 questions within a minute; the model is a fake too. The store,
    # retrieval, BM25, prompts and citation checks are the real ones.
    settings = Settings(home=tmp_path / "soak")
    embeddings = DeterministicFakeEmbedding(size=384)
    build_index(settings, [BUNDLED], embeddings=embeddings)
    llm = ScriptedChatModel()
    assistant = Assistant(settings, llm=llm, embeddings=embeddings)
    questions = [*KNOWN, "What is the capital of France?", "¿Qué recompensa maximiza DrPose?"]

    first: dict[str, str] = {}
    for n in range(WARM_UP):
        question = questions[n % len(questions)]
        first.setdefault(question, assistant.ask(question).text)
    gc.collect()
    memory, files, started = resident_mb(), open_files(), time.monotonic()

    for n in range(WARM_UP, QUESTIONS):
        question = questions[n % len(questions)]
        answer = assistant.ask(question)
        assert answer.text == first[question]  # the 500th answer is the first one again
    gc.collect()
    growth, now = resident_mb() - memory, open_files()
    opened = sorted(now[fd] for fd in now.keys() - files.keys())

    print(f"soak: {QUESTIONS} questions, resident memory {growth:+.1f} MB, {len(opened)} new files")
    assert growth < MAX_GROWTH_MB, f"resident memory grew by {growth:.1f} MB"
    # Chroma's SQLite pool may open a connection more when it likes; a leak of one handle
    # per question would show hundreds.
    assert len(opened) <= MAX_NEW_FILES, f"open after {QUESTIONS} questions: {opened}"
    assert llm.calls > 0
    assert time.monotonic() - started < 120
