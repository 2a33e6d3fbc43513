"""The pipeline the assistant is measured against: the plain LangChain-tutorial RAG.

``Chroma.from_documents`` over ``RecursiveCharacterTextSplitter`` chunks (the tutorial's
1,000 characters with 200 overlap), dense top-k, one "stuff" prompt (``prompts/baseline.md``)
and the same embeddings and chat model as the assistant. None of the assistant's hybrid
retrieval, citation checks or abstention rules is used; its citations are read off the
answer text (``assistant.text.mentions``).
"""

from __future__ import annotations

import re
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from assistant.answer.prompts import load_prompt
from assistant.errors import ConfigurationError
from assistant.eval.metrics import RANK_DEPTH
from assistant.text.mentions import cited_by_text
from assistant.text.sentences import split_sentences

if TYPE_CHECKING:
    from langchain_chroma import Chroma
    from langchain_core.documents import Document
    from langchain_core.embeddings import Embeddings
    from langchain_core.language_models.chat_models import BaseChatModel

    from assistant.ingest.corpus import Paper

CHUNK_SIZE = 1000
CHUNK_OVERLAP = 200
_SEARCH_CHUNKS = 40  # chunks searched to rank RANK_DEPTH distinct papers
# "I don't know" and "the context does not mention ...", as the tutorial prompt asks for
_UNKNOWN = re.compile(
    r"\b(?:do\s+not|don't|cannot|can't|unable\s+to)\s+(?:know|answer|determine|find|tell)\b"
    r"|\b(?:(?:does|do)\s+not|doesn't|don't)\s+(?:contain|provide|mention|cover|include|specify|"
    r"say|state|discuss|address|answer|describe|give)\b"
    r"|\bnot\s+(?:mentioned|provided|covered|specified|stated|available|included|discussed|"
    r"addressed|given)\b|\bno\s+(?:information|mention)\b"
    r"|\bnot\s+(?:enough|sufficient)\s+information\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class BaselineAnswer:
    """The baseline's answer, with the citations read off its text."""

    question: str
    text: str
    ranked: tuple[str, ...]  # paper ids, best first (for the retrieval metrics)
    shown: tuple[str, ...]  # paper id of each chunk stuffed into the prompt, in order
    cited: tuple[str, ...]
    fabricated: tuple[str, ...]
    abstained: bool
    retrieve_seconds: float
    first_token: float | None
    total_seconds: float
    prompt_tokens: int = 0
    completion_tokens: int = 0


def says_it_does_not_know(text: str) -> bool:
    """An empty answer, or one whose first sentence says the context lacks the answer."""
    sentences = split_sentences(text.strip())
    return not sentences or bool(_UNKNOWN.search(sentences[0]))


def format_context(documents: Sequence[Document]) -> str:
    """The stuffed context: each chunk under a number and its paper's title."""
    return "\n\n".join(
        f"[{n}] {d.metadata['title']}\n{d.page_content}" for n, d in enumerate(documents, start=1)
    )


class Baseline:
    """Dense top-k over character chunks and a stuff prompt; ``llm`` may be None to rank only."""

    def __init__(self, vectorstore: Chroma, titles: dict[str, str], llm: BaseChatModel | None,
                 k: int) -> None:
        self.vectorstore = vectorstore
        self.titles = titles
        self.llm = llm
        self.k = k

    def search(self, question: str) -> tuple[list[str], list[Document]]:
        """Papers ranked by their best chunk, and the top-k chunks for the prompt."""
        found = self.vectorstore.similarity_search(question, k=_SEARCH_CHUNKS)
        ranked = list(dict.fromkeys(d.metadata["paper_id"] for d in found))[:RANK_DEPTH]
        return ranked, found[: self.k]

    def answer(self, question: str) -> BaselineAnswer:
        """Retrieve, stuff, generate; then read the citations off the answer."""
        from langchain_core.messages import HumanMessage

        started = time.perf_counter()
        ranked, documents = self.search(question)
        retrieved = time.perf_counter() - started
        prompt = load_prompt("baseline").format(context=format_context(documents), question=question)
        text, first, usage = "", None, {}
        for chunk in self.llm.stream([HumanMessage(prompt)]):
            piece = str(chunk.content or "")
            if piece and first is None:
                first = time.perf_counter() - started
            text += piece
            usage = getattr(chunk, "usage_metadata", None) or usage
        total = time.perf_counter() - started
        text = text.strip()
        shown = [d.metadata["paper_id"] for d in documents]
        cited, fabricated = cited_by_text(text, shown, self.titles)
        return BaselineAnswer(
            question=question, text=text, ranked=tuple(ranked), shown=tuple(shown),
            cited=tuple(cited), fabricated=tuple(fabricated),
            abstained=says_it_does_not_know(text), retrieve_seconds=retrieved,
            first_token=first, total_seconds=total,
            prompt_tokens=int(usage.get("input_tokens", 0)),
            completion_tokens=int(usage.get("output_tokens", 0)),
        )


_EXTRA = ("langchain_chroma", "langchain_text_splitters")  # the `baseline` extra's packages


def check_installed() -> None:
    """Raise ConfigurationError, naming the fix, unless the `baseline` extra is installed."""
    import importlib.util

    missing = [name for name in _EXTRA if importlib.util.find_spec(name) is None]
    if missing:
        raise ConfigurationError(
            f"the LangChain-tutorial baseline needs {', '.join(missing)}: install the `baseline` "
            "extra (`pip install -e '.[baseline]'` in the checkout) or run `assistant eval "
            "--no-baseline`"
        )


@contextmanager
def open_baseline(
    papers: Sequence[Paper], embeddings: Embeddings, llm: BaseChatModel | None, k: int
) -> Iterator[Baseline]:
    """The tutorial pipeline over ``papers``, indexed in a temporary Chroma folder."""
    from assistant._env import quiet_third_parties

    check_installed()
    quiet_third_parties()
    from chromadb.config import Settings as ChromaSettings
    from langchain_chroma import Chroma
    from langchain_core.documents import Document
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    splitter = RecursiveCharacterTextSplitter(
        chunk_size=CHUNK_SIZE, chunk_overlap=CHUNK_OVERLAP, add_start_index=True
    )
    documents = splitter.split_documents(
        [Document(p.abstract, metadata={"paper_id": p.id, "title": p.title}) for p in papers]
    )
    with tempfile.TemporaryDirectory(prefix="assistant-baseline-") as folder:
        vectorstore: Any = Chroma.from_documents(
            documents, embedding=embeddings, collection_name="baseline", persist_directory=folder,
            client_settings=ChromaSettings(anonymized_telemetry=False),
        )
        try:
            yield Baseline(vectorstore, {p.id: p.title for p in papers}, llm, k)
        finally:
            vectorstore.delete_collection()
