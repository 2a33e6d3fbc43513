"""`assistant serve`: the real command in a subprocess on loopback, the `openai` client and
httpx against it, its model a scripted OpenAI-compatible server (tests/fake_openai.py), so
that no embedded model is loaded."""

from __future__ import annotations

import contextlib
import json
import re
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

import httpx
import openai
import pytest
from conftest import ROOT, free_port, run_cli, share_model, wait_for_port
from fake_openai import DRPOSE, FakeOpenAI, drpose_reply

pytestmark = pytest.mark.server

QUESTION = "What reward does DrPose maximize?"
ANSWER = ("DrPose maximizes PoseScore, a differentiable reward [1].\nPoseScore measures the "
          "consistency between the generated 3D pose and the input [1].")
CONTENT = f"{ANSWER}\n\n[1] {DRPOSE} (arXiv 2603.02619)"


def answered(content: str) -> bool:
    """The checked answer, the abstract's sentences quoted under it, and the reference."""
    said, _, quote = content.partition('\nFrom the abstract: "')
    return said == ANSWER and quote.endswith(f'" [1].\n\n[1] {DRPOSE} (arXiv 2603.02619)')
KEY = "sk-serve-secret-4711"


@dataclass
class Server:
    process: subprocess.Popen
    url: str
    log: Path

    def client(self, key: str = "unused", **options: object) -> openai.OpenAI:
        return openai.OpenAI(base_url=f"{self.url}/v1", api_key=key, **options)

    def health(self) -> dict:
        return httpx.get(f"{self.url}/healthz", timeout=10).json()

    def wait_until(self, **wanted: int) -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if all(self.health()[name] == n for name, n in wanted.items()):
                return
            time.sleep(0.05)
        raise AssertionError(f"the server never reached {wanted}: {self.health()}")

    def logged(self) -> str:
        return self.log.read_text()


def environment(home: Path, model: FakeOpenAI | None = None, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ASSISTANT_", "OPENAI_"))}
    env["ASSISTANT_HOME"] = str(share_model(home))
    if model is not None:
        env.update(OPENAI_BASE_URL=model.base_url, OPENAI_API_KEY="sk-test-serve",
                   ASSISTANT_MODEL="fake")
    return {**env, **extra}


@contextlib.contextmanager
def serving(env: dict[str, str], log: Path, *args: str) -> Iterator[Server]:
    """`assistant serve` on a free loopback port for the block; stopped with SIGTERM."""
    port = free_port()
    with log.open("w") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "assistant", "serve", "--port", str(port), *args],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_for_port(port, process, timeout=60)
        yield Server(process, f"http://127.0.0.1:{port}", log)
    finally:
        if process.poll() is None:
            process.terminate()
        process.wait(timeout=30)


def ask(client: openai.OpenAI, question: str = QUESTION, **options: object):
    return client.chat.completions.create(
        model="assistant", messages=[{"role": "user", "content": question}], **options)


@pytest.fixture(scope="module")
def model() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(["ok"]) as fake:
        yield fake


@pytest.fixture(scope="module")
def server(bundled_home, model, tmp_path_factory) -> Iterator[Server]:
    log = tmp_path_factory.mktemp("serve") / "server.log"
    with serving(environment(bundled_home, model), log) as running:
        yield running
    assert running.process.returncode == 0
    assert "Traceback" not in log.read_text()


@pytest.fixture
def fake(model) -> Iterator[FakeOpenAI]:
    """The module's scripted model, each test starting with the plain DrPose reply."""
    model.seen.clear()
    yield model
    model.reply, model.delay = drpose_reply, 0.005


# The format, in process ------------------------------------------------------------------------
def test_the_conversation_is_the_last_user_message_and_the_turns_before_it() -> None:
    from assistant.serve.openai_format import Message, conversation

    messages = [Message(role=role, content=text) for role, text in [
        ("system", "Be brief."), ("user", "first?"), ("assistant", f"A [1].\n\n[1] {DRPOSE}"),
        ("user", "unanswered?"), ("user", "second?"), ("assistant", "B."),
        ("user", [{"type": "text", "text": "third"}, {"type": "text", "text": "part?"}]),
        ("assistant", "a prefill after the question is not a turn"),
    ]]
    question, history = conversation(messages)
    assert question == "third\npart?"
    assert history == [("first?", "A [1]."), ("second?", "B.")]


def test_validation_errors_read_as_one_line_naming_each_field() -> None:
    from pydantic import ValidationError

    from assistant.serve.openai_format import ChatRequest, problems

    with pytest.raises(ValidationError) as bad:
        ChatRequest.model_validate({"messages": [{"role": "user", "content": 5}], "k": "3"})
    errors = [{**e, "loc": ("body", *e["loc"])} for e in bad.value.errors()]  # as FastAPI has it
    assert problems(errors) == (
        "bad request: `messages.0.content`: Input should be a valid string or a valid list; "
        "`k`: Input should be a valid integer")


# Answers ---------------------------------------------------------------------------------------
def test_a_question_gets_the_checked_answer_with_references_and_citations(server, fake) -> None:
    completion = ask(server.client())
    assert completion.model == "assistant"
    assert answered(completion.choices[0].message.content)
    assert completion.choices[0].finish_reason == "stop"
    [cited] = completion.citations
    assert (cited["number"], cited["title"], cited["arxiv_id"]) == (1, DRPOSE, "2603.02619")
    assert "PoseScore" in cited["passage"] and cited["paper_id"]
    assert completion.abstained is False


def test_a_streamed_answer_is_the_same_answer_with_citations_last(server, fake) -> None:
    chunks = list(ask(server.client(), stream=True))
    content = "".join(c.choices[0].delta.content or "" for c in chunks)
    assert answered(content)
    assert chunks[0].choices[0].delta.role == "assistant"
    assert len(chunks) >= 4  # the role, each checked sentence, the references, the end
    last = chunks[-1]
    assert last.choices[0].finish_reason == "stop"
    assert last.citations[0]["title"] == DRPOSE
    assert all(getattr(c, "citations", None) is None for c in chunks[:-1])


def test_a_follow_up_is_read_with_the_conversation(server, fake) -> None:
    def reply(prompt: str) -> str:
        if "Standalone:" in prompt:  # the rewrite prompt
            return "Standalone: What does PoseScore measure in DrPose?"
        return drpose_reply(prompt)

    fake.reply = reply
    completion = server.client().chat.completions.create(model="assistant", messages=[
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": QUESTION},
        {"role": "assistant", "content": CONTENT},
        {"role": "user", "content": "What does it measure?"},
    ])
    rewrite = "\n".join(m["content"] for m in fake.seen[0].body["messages"])
    assert f"User: {QUESTION}\nAssistant: DrPose maximizes PoseScore" in rewrite
    assert "Follow-up: What does it measure?" in rewrite
    assert DRPOSE not in rewrite.split("Conversation:")[-1]  # the references were left out
    assert "PoseScore" in completion.choices[0].message.content
    assert completion.citations[0]["title"] == DRPOSE


def test_which_of_these_is_asked_among_the_papers_the_conversation_named(server, fake) -> None:
    fusion = "GaussianFusion: Unified 3D Gaussian Representation for Multi-Modal Fusion Perception"
    ssd = "SSD-GS: Scattering and Shadow Decomposition for Relightable 3D Gaussian Splatting"
    fake.reply = lambda prompt: "SSD-GS is a physically-based relighting framework [1]."
    completion = server.client().chat.completions.create(model="assistant", messages=[
        {"role": "user", "content": "Which papers use 3D Gaussians?"},
        {"role": "assistant", "content": "GaussianFusion uses 3D Gaussians [1].\n"
                                         "SSD-GS uses 3D Gaussians [2]."},
        {"role": "user", "content": "Which of these does relighting?"},
    ])
    prompts = ["\n".join(m["content"] for m in s.body["messages"]) for s in fake.seen]
    assert prompts and not any("Standalone:" in p for p in prompts)  # no rewrite
    shown = {t for p in prompts for t in re.findall(r"^\[\d+\] (.+)$", p, re.MULTILINE)}
    assert ssd in shown and shown <= {fusion, ssd}
    assert completion.citations[0]["title"] == ssd


def test_four_clients_at_once_are_all_answered(server, fake) -> None:
    client = server.client()
    with ThreadPoolExecutor(4) as pool:
        streamed = [pool.submit(lambda: "".join(
            c.choices[0].delta.content or "" for c in ask(client, stream=True)))
            for _ in range(2)]
        plain = [pool.submit(lambda: ask(client).choices[0].message.content) for _ in range(2)]
        contents = [f.result(timeout=120) for f in streamed + plain]
    assert len(contents) == 4 and all(map(answered, contents))
    # one at a time: each question reached the model after the one before had its reply
    seen = sorted(fake.seen, key=lambda s: s.at)
    assert len(seen) == 4 and all(s.finished for s in seen)
    assert all(later.at >= earlier.ended for earlier, later in pairwise(seen))
    assert server.health() == {"status": "ok", "answering": 0, "waiting": 0, "queue": 8}


def test_a_client_that_hangs_up_mid_stream_frees_the_model(server, fake) -> None:
    tail = " ".join(["This last sentence goes on and on"] * 12) + "."
    fake.reply = lambda prompt: f"{drpose_reply(prompt)} {tail}"
    fake.delay = 0.1  # the whole reply would take about 10 s
    stream = ask(server.client(), stream=True)
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            break  # the first checked sentence
    stream.close()
    fake.delay = 0.005
    assert ask(server.client()).choices[0].message.content.startswith(ANSWER)
    first, then = fake.seen[0], fake.seen[-1]
    # the server stopped reading the model (its stream broke off before the reply's end)
    # rather than reading the rest of a reply nobody waits for
    assert not first.finished and then.finished and then is not first
    server.wait_until(answering=0, waiting=0)


# The other routes --------------------------------------------------------------------------------
def test_models_ask_papers_and_healthz(server, fake, bundled_home) -> None:
    models = server.client().models.list()
    assert [m.id for m in models.data] == ["assistant"]

    asked = httpx.post(f"{server.url}/v1/ask", json={"question": QUESTION}, timeout=60)
    assert asked.status_code == 200
    answer = asked.json()
    assert answer["answer"].startswith(ANSWER + "\nFrom the abstract: ") and answer["abstained"] is False
    assert set(answer) >= {"question", "citations", "sources", "dropped", "warnings", "timings",
                           "usage", "model"}
    assert answer["citations"][0]["label"] == f"{DRPOSE} (arXiv 2603.02619)"

    papers = httpx.get(f"{server.url}/v1/papers", timeout=60).json()["data"]
    assert len(papers) == 38 and DRPOSE in {p["title"] for p in papers}
    assert all("abstract" not in p for p in papers)
    assert server.health()["status"] == "ok"
    # the papers as `assistant papers --json` lists them, field for field
    listed = run_cli("papers", "--json", env=environment(bundled_home))
    assert listed.returncode == 0, listed.stderr
    assert papers == json.loads(listed.stdout)


def test_ask_gives_what_ask_json_prints(server, fake, bundled_home) -> None:
    import json

    asked = httpx.post(f"{server.url}/v1/ask", json={"question": QUESTION, "k": 3}, timeout=60)
    cli = run_cli("ask", QUESTION, "-k", "3", "--json",
                  env=environment(bundled_home, fake), timeout=120)
    assert cli.returncode == 0, cli.stderr
    printed = json.loads(cli.stdout)
    served = asked.json()
    for volatile in ("timings",):
        printed.pop(volatile), served.pop(volatile)
    assert served == printed


# Bad requests ------------------------------------------------------------------------------------
@pytest.mark.parametrize(("body", "status", "says"), [
    ({}, 400, "`messages`: Field required"),
    ({"model": "assistant", "messages": []}, 400, "`messages`: List should have at least 1 item"),
    ({"model": "assistant", "messages": "hello"}, 400, "`messages`: Input should be a valid list"),
    ({"model": "assistant", "messages": [{"role": "user", "content": 5}]}, 400,
     "`messages.0.content`: Input should be a valid string or a valid list"),
    ({"model": "assistant", "messages": [{"role": "wizard", "content": "hi"}]}, 400,
     "`messages.0.role`: Input should be 'system'"),
    ({"model": "assistant", "messages": [{"role": "user", "content": "hi"}], "stream": "yes"},
     400, "`stream`: Input should be a valid boolean"),
    ({"model": "assistant", "messages": [{"role": "user", "content": "hi"}], "k": 500}, 400,
     "`k`: Input should be less than or equal to 50"),
    ({"model": "assistant", "messages": [{"role": "system", "content": "Be brief."}]}, 400,
     "no user message: the last user message is the question"),
    ({"model": "assistant", "messages": [{"role": "user", "content": " \n "}]}, 400,
     "the question is empty; ask something about the indexed papers"),
    ({"model": "assistant", "messages": [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": "data:,"}}]}]}, 400,
     "only text content is supported"),
    ({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}, 404,
     "the model `gpt-4o` does not exist: this server's model is `assistant`"),
    ({"model": "assistant", "messages": [{"role": "user", "content": "x" * 1_000_000}]}, 413,
     "the request body is 976 KiB or more; the limit is 256 KiB"),
])
def test_bad_requests_get_a_clear_4xx_and_the_server_keeps_serving(server, fake, body, status,
                                                                   says) -> None:
    response = httpx.post(f"{server.url}/v1/chat/completions", json=body, timeout=30)
    assert response.status_code == status
    error = response.json()["error"]
    assert says in error["message"]
    assert error["type"] == "invalid_request_error"
    assert fake.seen == []  # refused before the model was asked
    assert server.health()["status"] == "ok"


def test_malformed_json_and_unknown_routes(server, fake) -> None:
    broken = httpx.post(f"{server.url}/v1/chat/completions", content=b'{"messages": [',
                        headers={"Content-Type": "application/json"})
    assert (broken.status_code, broken.json()["error"]["message"]) == (
        400, "bad request: the body is not valid JSON")
    missing = httpx.get(f"{server.url}/v1/nothing")
    assert missing.status_code == 404 and "/v1/chat/completions" in missing.json()["error"][
        "message"]
    with pytest.raises(openai.BadRequestError, match="List should have at least 1 item"):
        server.client().chat.completions.create(model="assistant", messages=[])
    assert answered(ask(server.client()).choices[0].message.content)


def test_no_index_or_a_failing_model_is_an_error_with_the_cli_message(bundled_home,
                                                                      tmp_path) -> None:
    empty = tmp_path / "empty"
    cli = run_cli("papers", env=environment(empty), timeout=120)
    assert cli.returncode == 1
    with serving(environment(empty), tmp_path / "log") as server:
        response = httpx.post(f"{server.url}/v1/chat/completions", timeout=60, json={
            "model": "assistant", "messages": [{"role": "user", "content": QUESTION}]})
        assert response.status_code == 503
        assert cli.stderr.strip() == f"error: {response.json()['error']['message']}"
        assert response.json()["error"]["code"] == "no_index"
        with pytest.raises(openai.APIError, match="No index at"):  # mid-stream: an error event
            list(ask(server.client(), stream=True))
        papers = httpx.get(f"{server.url}/v1/papers", timeout=60)
        assert papers.status_code == 503 and "assistant index" in papers.text
    with FakeOpenAI([500]) as model, serving(
            environment(bundled_home, model, ASSISTANT_MAX_RETRIES="0"),
            tmp_path / "log2") as server:
        failed = httpx.post(f"{server.url}/v1/ask", json={"question": QUESTION}, timeout=60)
        assert failed.status_code == 502
        assert "failed with HTTP 500" in failed.json()["error"]["message"]
        assert server.health()["answering"] == 0
    assert "Traceback" not in server.logged()


# The key, the queue, starting and stopping --------------------------------------------------------
def test_a_wrong_key_is_refused_with_401_and_never_logged(bundled_home, tmp_path) -> None:
    with FakeOpenAI(["ok"]) as model, serving(
            environment(bundled_home, model, ASSISTANT_API_KEY=KEY), tmp_path / "log") as server:
        with pytest.raises(openai.AuthenticationError) as refused:
            server.client("sk-wrong").models.list()
        assert refused.value.status_code == 401
        assert "ASSISTANT_API_KEY" in refused.value.message
        assert KEY not in refused.value.response.text
        with pytest.raises(openai.AuthenticationError):
            ask(server.client("sk-wrong"))
        bare = httpx.post(f"{server.url}/v1/ask", json={"question": QUESTION})
        assert bare.status_code == 401 and bare.headers["WWW-Authenticate"] == "Bearer"
        assert model.seen == []
        assert server.health()["status"] == "ok"  # /healthz needs no key
        assert answered(ask(server.client(KEY)).choices[0].message.content)
    assert KEY not in server.logged()


def test_a_full_queue_is_a_503_with_retry_after_and_one_who_gives_up_leaves_it(
        bundled_home, tmp_path) -> None:
    release = threading.Event()

    def slow(prompt: str) -> str:
        release.wait(60)
        return drpose_reply(prompt)

    with FakeOpenAI(["ok"], reply=slow) as model, serving(
            environment(bundled_home, model, ASSISTANT_SERVE_QUEUE="1"),
            tmp_path / "log") as server, ThreadPoolExecutor(3) as pool:
        try:
            first = pool.submit(ask, server.client())
            server.wait_until(answering=1)
            gives_up = pool.submit(hang_up_after, 2.0, server.url)
            server.wait_until(answering=1, waiting=1)
            assert isinstance(gives_up.result(30), httpx.ReadTimeout)
            server.wait_until(answering=1, waiting=0)  # it gave up its place
            second = pool.submit(ask, server.client())
            server.wait_until(answering=1, waiting=1)
            with pytest.raises(openai.APIStatusError) as busy:
                ask(server.client(max_retries=0))
            assert busy.value.status_code == 503
            assert busy.value.response.headers["Retry-After"].isdigit()
            assert "busy" in busy.value.message and "ASSISTANT_SERVE_QUEUE=1" in busy.value.message
        finally:
            release.set()
        assert answered(first.result(60).choices[0].message.content)
        assert answered(second.result(60).choices[0].message.content)
        assert len(model.seen) == 2  # the one that gave up never reached the model


def hang_up_after(seconds: float, url: str) -> Exception | None:
    """A question whose client gives up waiting after ``seconds`` (and closes the connection)."""
    try:
        with httpx.Client(timeout=seconds) as client:
            client.post(f"{url}/v1/chat/completions", json={
                "model": "assistant", "messages": [{"role": "user", "content": QUESTION}]})
    except httpx.HTTPError as exc:
        return exc
    return None


def test_a_non_loopback_host_needs_a_key(tmp_path) -> None:
    refused = run_cli("serve", "--host", "0.0.0.0", "--port", str(free_port()), timeout=60)
    assert refused.returncode == 1
    assert "ASSISTANT_API_KEY" in refused.stderr and refused.stderr.startswith("error: ")
    assert "Traceback" not in refused.stderr


def test_a_port_in_use_is_a_clear_error(tmp_path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        refused = run_cli("serve", "--port", str(port), timeout=60)
    assert refused.returncode == 1
    assert refused.stderr.startswith(f"error: cannot listen on 127.0.0.1:{port}")


@pytest.mark.parametrize(("stop", "code"), [(signal.SIGTERM, 0), (signal.SIGINT, 130)])
def test_it_starts_at_once_and_stops_cleanly_mid_answer(bundled_home, tmp_path, stop,
                                                        code) -> None:
    """Nothing is loaded to start; a signal stops it while a question waits for the model."""
    release = threading.Event()
    with FakeOpenAI(["ok"], reply=lambda prompt: (release.wait(60), drpose_reply(prompt))[1]
                    ) as model:
        with serving(environment(bundled_home, model), tmp_path / "log") as server:
            assert server.health()["status"] == "ok"
            assert not model.seen  # it serves before anything asked the model
            pending = threading.Thread(target=lambda: httpx.post(
                f"{server.url}/v1/chat/completions", timeout=60, json={
                    "model": "assistant", "messages": [{"role": "user", "content": QUESTION}]}),
                daemon=True)
            pending.start()
            server.wait_until(answering=1)
            while not model.seen:  # the question is at the model
                time.sleep(0.05)
            server.process.send_signal(stop)
            # it stops while the model still holds the question (released only after)
            assert server.process.wait(timeout=30) == code
        release.set()
    logged = server.logged()
    assert "Traceback" not in logged
    assert "Finished server process" in logged
