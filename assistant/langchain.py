"""LangChain adapters: a BaseRetriever over the assistant's hybrid retrieval."""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever


class AssistantRetriever(BaseRetriever):
    """One Document per paper, best first; metadata carries title, ids and score."""

    assistant: Any
    k: int = 5

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        return [
            Document(
                page_content=s.text,
                metadata={
                    "paper_id": s.paper_id, "title": s.title, "title_derived": s.title_derived,
                    "arxiv_id": s.arxiv_id, "openreview_id": s.openreview_id, "score": s.score,
                },
            )
            for s in self.assistant.retrieve(query, k=self.k)
        ]
