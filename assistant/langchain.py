"""LangChain adapters: a BaseRetriever over the assistant's hybrid retrieval."""

from __future__ import annotations

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables.config import run_in_executor
from pydantic import Field

from assistant.api import Assistant
from assistant.errors import InputError


class AssistantRetriever(BaseRetriever):
    """One Document per paper, best first; metadata carries title, ids and score.

    ``k`` papers are returned: the one given to ``invoke(query, k=...)``, else the
    retriever's own ``k``, else the assistant's ``settings.retrieval.k``.
    """

    assistant: Assistant
    k: int | None = Field(
        default=None, ge=1, description="Papers returned per query; None: settings.retrieval.k."
    )

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, k: int | None = None
    ) -> list[Document]:
        return [
            Document(
                page_content=s.text,
                metadata={
                    "paper_id": s.paper_id, "title": s.title, "title_derived": s.title_derived,
                    "arxiv_id": s.arxiv_id, "openreview_id": s.openreview_id, "score": s.score,
                },
            )
            for s in self.assistant.retrieve(query, k=self._papers(k))
        ]

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun,
        k: int | None = None,
    ) -> list[Document]:
        # BaseRetriever's default would drop ``k``: retrieval is CPU-bound, so a thread runs it.
        return await run_in_executor(
            None, self._get_relevant_documents, query, run_manager=run_manager.get_sync(), k=k
        )

    def _papers(self, k: int | None) -> int | None:
        """How many papers to return; ``None`` leaves it to the assistant's settings."""
        if k is None:
            return self.k
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise InputError(f"k is how many papers to return: a whole number from 1, not {k!r}")
        return k
