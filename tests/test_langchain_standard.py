"""LangChain's standard tests (langchain-tests) for the retriever and the embedding model, run
on the real bundled index and the real MiniLM model."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.embeddings import Embeddings
from langchain_tests.integration_tests import EmbeddingsIntegrationTests, RetrieversIntegrationTests
from langchain_tests.unit_tests import EmbeddingsUnitTests

from assistant.api import Assistant
from assistant.config import Settings
from assistant.errors import InputError
from assistant.index.embeddings import MiniLMEmbeddings
from assistant.langchain import AssistantRetriever

GLOWQ = "GlowQ: Group-Shared LOw-Rank Approximation for Quantized LLMs"
QUESTION = "Which paper proposes GlowQ?"


@pytest.fixture(scope="module")
def shared_assistant(bundled_home: Path, minilm: MiniLMEmbeddings) -> Assistant:
    """One assistant for the module: its BM25 index is built once."""
    return Assistant(Settings(home=bundled_home, k=4), embeddings=minilm)


class TestAssistantRetriever(RetrieversIntegrationTests):
    @pytest.fixture(autouse=True)
    def _shared(self, shared_assistant: Assistant) -> None:
        self.assistant = shared_assistant

    @property
    def retriever_constructor(self) -> type[AssistantRetriever]:
        return AssistantRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Assistant]:
        return {"assistant": self.assistant}

    @property
    def retriever_query_example(self) -> str:
        return QUESTION


class TestMiniLMEmbeddings(EmbeddingsIntegrationTests):
    @property
    def embeddings_class(self) -> type[MiniLMEmbeddings]:
        return MiniLMEmbeddings

    @pytest.fixture
    def model(self, minilm: MiniLMEmbeddings) -> Embeddings:
        # The session's model (loading it checks a 23 MB file); TestMiniLMEmbeddingsUnit builds one.
        return minilm


class TestMiniLMEmbeddingsUnit(EmbeddingsUnitTests):
    # MiniLMEmbeddings reads no environment variable (Settings does), so init_from_env_params
    # stays empty and test_init_from_env has nothing to check.
    @property
    def embeddings_class(self) -> type[MiniLMEmbeddings]:
        return MiniLMEmbeddings

    @property
    def embedding_model_params(self) -> dict[str, int]:
        return {"threads": 1}


def test_k_of_invoke_over_the_retrievers_over_the_settings(shared_assistant: Assistant) -> None:
    assert len(shared_assistant.as_retriever().invoke(QUESTION)) == 4  # Settings(k=4)
    retriever = shared_assistant.as_retriever(k=2)
    documents = retriever.invoke(QUESTION)
    assert len(documents) == 2 and documents[0].metadata["title"] == GLOWQ
    assert len(retriever.invoke(QUESTION, k=6)) == 6
    assert len(retriever.invoke(QUESTION)) == 2  # the call's k does not stay


async def test_ainvoke_takes_k_too(shared_assistant: Assistant) -> None:
    documents = await shared_assistant.as_retriever().ainvoke(QUESTION, k=1)
    assert [d.metadata["title"] for d in documents] == [GLOWQ]


@pytest.mark.parametrize("k", [0, -1, 2.5, "3", True])
def test_a_k_that_is_not_a_count_is_refused(shared_assistant: Assistant, k: object) -> None:
    with pytest.raises(InputError, match="k is how many papers"):
        shared_assistant.as_retriever().invoke(QUESTION, k=k)
