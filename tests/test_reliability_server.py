"""A real Chroma server on loopback that stops, restarts and is re-indexed under live questions."""

from __future__ import annotations

import shutil
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import BUNDLED, free_port, run_cli, wait_for_port
from langchain_core.embeddings import DeterministicFakeEmbedding
from scripted_model import KNOWN, ScriptedChatModel

from assistant.api import Assistant
from assistant.config import Settings
from assistant.errors import StoreError
from assistant.index.indexing import build_index

pytestmark = pytest.mark.server

# Fake embeddings keep indexing fast; the questions name their papers, so BM25 and the
# name matches find them, and the answers are the same as with the real model.
FAKE = DeterministicFakeEmbedding(size=384)
QUESTION = "What reward does DrPose maximize?"


class ChromaServer:
    """`chroma run` on a fixed port and folder, so that it can be stopped and started again."""

    def __init__(self, path: Path) -> None:
        self.path, self.port = path, free_port()
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        chroma = shutil.which("chroma") or str(Path(sys.executable).with_name("chroma"))
        self.process = subprocess.Popen(
            [chroma, "run", "--path", str(self.path), "--host", "127.0.0.1",
             "--port", str(self.port)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        wait_for_port(self.port, self.process, timeout=60)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)


@pytest.fixture
def server(tmp_path: Path):
    chroma = ChromaServer(tmp_path / "server-data")
    chroma.start()
    try:
        build_index(Settings(chroma_url=chroma.url), [BUNDLED], embeddings=FAKE)
        yield chroma
    finally:
        chroma.stop()


def checked(answer) -> tuple:
    return answer.text, tuple((c.title, c.text) for c in answer.citations)


def test_same_assistant_answers_again_after_a_server_restart(server: ChromaServer) -> None:
    assistant = Assistant(Settings(chroma_url=server.url), llm=ScriptedChatModel(), embeddings=FAKE)
    before = assistant.ask(QUESTION)
    assert before.citations[0].title == KNOWN[QUESTION][0]

    server.stop()
    for call in (lambda: assistant.ask(QUESTION), lambda: assistant.retrieve(QUESTION),
                 assistant.papers):
        with pytest.raises(StoreError, match="lost the Chroma server at http://127.0.0.1.*running"):
            call()
    down = run_cli("ask", QUESTION, env={"ASSISTANT_CHROMA_URL": server.url})
    assert down.returncode == 1 and "cannot reach the Chroma server" in down.stderr

    server.start()  # same port, same folder
    assert checked(assistant.ask(QUESTION)) == checked(before)
    assert len(assistant.papers()) == 38


def test_collection_rebuilt_by_another_indexer_is_found_again(server: ChromaServer) -> None:
    assistant = Assistant(Settings(chroma_url=server.url), llm=ScriptedChatModel(), embeddings=FAKE)
    before = assistant.ask(QUESTION)
    build_index(Settings(chroma_url=server.url), [BUNDLED], embeddings=FAKE, rebuild=True)
    assert checked(assistant.ask(QUESTION)) == checked(before)  # a new collection, by name


def test_answers_stay_consistent_while_indexing(server: ChromaServer, tmp_path: Path) -> None:
    settings = Settings(chroma_url=server.url)
    truth = {q: checked(Assistant(settings, llm=ScriptedChatModel(), embeddings=FAKE).ask(q))
             for q in KNOWN}
    extra = tmp_path / "extra.txt"
    extra.write_text("Extra Papers\n\n" + "\n\n".join(
        f"We propose Widget{i}, which sorts {i} kinds of marbles by colour. Experiments on "
        f"MarbleBench-{i} show it sorts faster than hand sorting." for i in range(6)
    ) + "\n")
    shared = Assistant(settings, llm=ScriptedChatModel(), embeddings=FAKE)
    done = threading.Event()
    runs: list[tuple[int, int]] = []

    def index_repeatedly() -> None:
        try:
            for n in range(6):  # six papers come and go, under the readers
                paths = [BUNDLED, extra] if n % 2 == 0 else [BUNDLED]
                report = build_index(settings, paths, embeddings=FAKE)
                runs.append((report.added, report.removed))
        finally:
            done.set()

    def ask_repeatedly(number: int) -> list[tuple[str, tuple]]:
        assistant = shared if number % 2 else Assistant(settings, llm=ScriptedChatModel(),
                                                        embeddings=FAKE)
        seen = []
        questions = list(KNOWN)
        while not done.is_set() or len(seen) < 3:
            question = questions[len(seen) % len(questions)]
            seen.append((question, checked(assistant.ask(question))))
        return seen

    with ThreadPoolExecutor(5) as pool:
        indexer = pool.submit(index_repeatedly)
        askers = [pool.submit(ask_repeatedly, n) for n in range(4)]
        indexer.result(timeout=300)
        answers = [a for f in askers for a in f.result(timeout=300)]

    assert runs == [(6, 0), (0, 6)] * 3
    assert len(answers) >= 12
    for question, seen in answers:
        assert seen == truth[question], question
    assert len(shared.papers()) == 38
