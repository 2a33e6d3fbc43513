"""The OpenAI-compatible path against a real server on loopback (llama-cpp-python's)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from conftest import _user_cache, free_port, run_cli, serving

from assistant.api import Assistant
from assistant.config import Settings
from assistant.types import Answer

pytestmark = [pytest.mark.llm, pytest.mark.server]


@pytest.fixture(scope="module")
def openai_server():
    from assistant.models.model_file import ensure_model

    model = ensure_model(_user_cache())
    port = free_port()
    server = Path(__file__).with_name("llama_server.py")
    with serving([sys.executable, str(server), "--model", str(model), "--host",
                  "127.0.0.1", "--port", str(port), "--n_ctx", "4096", "--model_alias",
                  "qwen-local"], port, timeout=180):
        yield f"http://127.0.0.1:{port}/v1"


def test_streamed_answer_through_an_openai_compatible_server(openai_server, bundled_home, minilm) -> None:
    settings = Settings(home=bundled_home, openai_base_url=openai_server, model="qwen-local")
    assert settings.models.uses_openai()
    assistant = Assistant(settings, embeddings=minilm)
    from langchain_openai import ChatOpenAI

    assert isinstance(assistant.llm, ChatOpenAI)
    response = assistant.stream("What reward does DrPose maximize?")
    pieces = list(response)
    answer = response.answer
    assert isinstance(answer, Answer)
    assert pieces and all(isinstance(p, str) for p in pieces)  # text came before the Answer
    assert "PoseScore" in answer.text
    assert answer.citations[0].title.startswith("Direct Reward Fine-Tuning on Poses")
    assert answer.model == "qwen-local"


def test_cli_with_a_key_against_the_server_never_prints_the_key(openai_server, bundled_home) -> None:
    secret = "sk-test-SECRET-0123456789"
    result = run_cli(
        "ask", "What is the capital of France?", "--json",
        env={"ASSISTANT_HOME": str(bundled_home), "OPENAI_BASE_URL": openai_server,
             "OPENAI_API_KEY": secret, "ASSISTANT_MODEL": "qwen-local"},
    )
    assert result.returncode == 0, result.stderr
    assert secret not in result.stdout + result.stderr


def test_unreachable_server_is_a_clear_error_without_the_key(bundled_home) -> None:
    secret = "sk-test-SECRET-abcdef"
    result = run_cli(
        "ask", "What reward does DrPose maximize?", "--json",
        env={"ASSISTANT_HOME": str(bundled_home), "OPENAI_BASE_URL": f"http://127.0.0.1:{free_port()}/v1",
             "OPENAI_API_KEY": secret, "ASSISTANT_MAX_RETRIES": "0", "ASSISTANT_TIMEOUT": "5"},
        timeout=120,
    )
    assert result.returncode == 1
    assert "cannot connect" in result.stderr
    assert secret not in result.stdout + result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_which_paper_through_the_server_is_judged_or_written(openai_server, bundled_home,
                                                             minilm) -> None:
    """The judge reads the server's logprobs when it gives them; when it does not, the
    answer is written and checked as for any question, never an error."""
    settings = Settings(home=bundled_home, openai_base_url=openai_server, model="qwen-local")
    assistant = Assistant(settings, embeddings=minilm)
    judge = assistant.judge
    assert judge is not None
    source = assistant.retrieve("Which paper proposes GlowQ?")[0]
    value = judge("Which paper proposes GlowQ?", source)
    assert value is None or 0.0 <= value <= 1.0
    answer = assistant.ask("Which paper proposes GlowQ?")
    assert not answer.abstained, answer.dropped
    assert answer.citations[0].title.startswith("GlowQ")
