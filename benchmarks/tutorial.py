"""The LangChain-tutorial pipeline, as a user would otherwise build it: recursive character
chunks, ``Chroma.from_documents``, a dense retriever, the same embedding model."""

from __future__ import annotations

from pathlib import Path
from typing import Any


class TutorialPipeline:
    """Chroma.from_documents over RecursiveCharacterTextSplitter chunks; dense top-k."""

    def __init__(self, folder: Path, embeddings: Any) -> None:
        from assistant._env import quiet_third_parties

        quiet_third_parties()
        from langchain_chroma import Chroma

        self.folder = folder
        self.embeddings = embeddings
        self.chunks = 0
        self.store = Chroma(persist_directory=str(folder), embedding_function=embeddings,
                            collection_name="tutorial")

    def build(self, papers: list[Any]) -> None:
        from langchain_chroma import Chroma
        from langchain_core.documents import Document
        from langchain_text_splitters import RecursiveCharacterTextSplitter

        splitter = RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=200)
        documents = splitter.split_documents(
            [Document(page_content=p.abstract, metadata={"title": p.title, "paper_id": p.id})
             for p in papers]
        )
        self.chunks = len(documents)
        self.store = Chroma.from_documents(documents, self.embeddings,
                                           persist_directory=str(self.folder),
                                           collection_name="tutorial")

    def retrieve(self, question: str, k: int = 5) -> list[Any]:
        return self.store.as_retriever(search_kwargs={"k": k}).invoke(question)
