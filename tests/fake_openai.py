"""A tiny OpenAI-compatible chat server on loopback, scripted per request, for fault tests.

Each request takes the next behaviour from ``script`` (the last one repeats):

- ``"ok"``: the reply streamed as server-sent events, ending with ``finish_reason`` and
  ``[DONE]`` (or as one JSON body when the client did not ask for a stream);
- ``401``, ``429``, ``500``, ``503``: that status with an OpenAI-style error body (the 401
  body echoes the key it was sent, as a careless server might);
- ``"hang"``: accept the request and never answer (until the server stops);
- ``"drop"``: stream a sentence and a half, then cut the connection in the middle of the body;
- ``"truncate"``: stream a sentence and a half, then end the body cleanly, without ``finish_reason``
  or ``[DONE]`` (a proxy that closes early).

Streams send a word every ``delay`` seconds; ``Seen.finished`` says whether a reply was sent to
its end (False when the client hung up first).
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DRPOSE = "Direct Reward Fine-Tuning on Poses for Single Image to 3D Human in the Wild"


def drpose_reply(prompt: str) -> str:
    """A correct, checkable answer about DrPose, citing the number it has in the prompt."""
    match = re.search(rf"\[(\d+)\] {re.escape(DRPOSE)}", prompt)
    number = match.group(1) if match else "1"
    return (
        f"DrPose maximizes PoseScore, a differentiable reward [{number}]. "
        "PoseScore measures the consistency between the generated 3D pose and the input "
        f"[{number}]."
    )


@dataclass
class Seen:
    """One request as the server received it."""

    at: float
    path: str
    authorization: str
    body: dict[str, Any]
    finished: bool = False
    ended: float | None = None  # when the reply was sent to its end


@dataclass
class FakeOpenAI:
    script: list[Any] = field(default_factory=lambda: ["ok"])
    reply: Callable[[str], str] = drpose_reply
    seen: list[Seen] = field(default_factory=list)
    delay: float = 0.005

    def __post_init__(self) -> None:
        self._stop = threading.Event()
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with fake._lock:
                    key = self.headers.get("Authorization", "")
                    seen = Seen(time.monotonic(), self.path, key, body)
                    fake.seen.append(seen)
                    step = fake.script[min(len(fake.seen) - 1, len(fake.script) - 1)]
                fake._answer(self, step, body)
                seen.finished = step == "ok"
                seen.ended = time.monotonic()

        self.server = _QuietServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self.server.shutdown()
        self.server.server_close()

    # Behaviours ------------------------------------------------------------------------
    def _answer(self, handler: BaseHTTPRequestHandler, step: Any, body: dict[str, Any]) -> None:
        prompt = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        if step == "hang":
            self._stop.wait(60)
            handler.close_connection = True
            return
        if isinstance(step, int):
            key = handler.headers.get("Authorization", "").removeprefix("Bearer ")
            message = {401: f"Incorrect API key provided: {key}", 429: "Rate limit reached"}.get(
                step, "The server had an error while processing your request"
            )
            error = {"message": message, "type": "error", "code": step}
            _send_json(handler, step, {"error": error})
            return
        text = self.reply(prompt)
        if not body.get("stream"):
            _send_json(handler, 200, {
                "id": "c1", "object": "chat.completion", "created": 0, "model": "fake",
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": text}}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            })
            return
        words = re.findall(r"\S+\s*", text)
        if step == "ok":
            _stream(handler, words, finish=True, delay=self.delay)
        elif step == "drop":
            _stream(handler, words[:12], finish=False, cut=True, delay=self.delay)
        elif step == "truncate":
            _stream(handler, words[:12], finish=False, chunked=False, delay=self.delay)
        else:  # pragma: no cover - a mistake in a test's script
            raise ValueError(f"unknown behaviour {step!r}")


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # clients that hang up on a hanging or cut response are expected here


def _send_json(handler: BaseHTTPRequestHandler, status: int, data: dict[str, Any]) -> None:
    raw = json.dumps(data).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(raw)))
    handler.end_headers()
    handler.wfile.write(raw)


def _event(delta: dict[str, Any], finish: str | None = None, usage: bool = False) -> bytes:
    chunk: dict[str, Any] = {
        "id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "fake",
        "choices": [] if usage else [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    if usage:
        chunk["usage"] = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    return f"data: {json.dumps(chunk)}\n\n".encode()


def _stream(handler: BaseHTTPRequestHandler, words: list[str], *, finish: bool,
            cut: bool = False, chunked: bool = True, delay: float = 0.005) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    if chunked:
        handler.send_header("Transfer-Encoding", "chunked")
    else:
        handler.send_header("Connection", "close")  # the body ends when the connection does
    handler.end_headers()

    def write(data: bytes) -> None:
        handler.wfile.write(b"%x\r\n%s\r\n" % (len(data), data) if chunked else data)
        handler.wfile.flush()

    write(_event({"role": "assistant", "content": ""}))
    for word in words:
        write(_event({"content": word}))
        time.sleep(delay)
    if cut:  # mid-body, without the terminating chunk: the client sees a broken stream
        handler.connection.shutdown(socket.SHUT_RDWR)
        handler.close_connection = True
        return
    if finish:
        write(_event({}, "stop"))
        write(_event({}, usage=True))
        write(b"data: [DONE]\n\n")
    if chunked:
        handler.wfile.write(b"0\r\n\r\n")
    handler.close_connection = True
