"""`assistant serve`: the assistant as an OpenAI-compatible HTTP API (FastAPI on uvicorn), for
Open WebUI, the `openai` client and anything else that speaks `/v1/chat/completions`.

``Turns`` lets the model answer one question at a time while a bounded number wait; each
answer runs on a worker thread of its own (``Job``), which stops between two checked sentences
when its client hangs up. ``Guard`` checks the API key and the body size before FastAPI reads
anything. Nothing is loaded at start: the store opens on the first request that needs it, the
language model on the first question.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
import re
import secrets
import socket
import threading
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr

from assistant.errors import (
    AssistantError,
    ConfigurationError,
    IndexBusyError,
    IndexMissingError,
    InputError,
    ModelError,
    StoreError,
)

if TYPE_CHECKING:
    from assistant.api import Assistant, History
    from assistant.types import Answer, Citation, Response

log = logging.getLogger(__name__)

MODEL = "assistant"
MAX_BODY = 256 * 1024  # bytes; questions are cut to 200 tokens anyway
Mask = Callable[[str], str]


# Requests ------------------------------------------------------------------------------------
class TextPart(BaseModel):
    type: StrictStr
    text: StrictStr | None = None


class Message(BaseModel):
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: StrictStr | list[TextPart] | None = None

    def text(self) -> str:
        if self.content is None or isinstance(self.content, str):
            return self.content or ""
        if any(p.type != "text" or p.text is None for p in self.content):
            raise InputError("only text content is supported (parts of type `text`)")
        return "\n".join(p.text or "" for p in self.content)


class ChatRequest(BaseModel):
    """OpenAI's chat request; other OpenAI parameters (temperature, ...) are accepted and
    ignored: the assistant's answers are checked, not sampled."""

    model_config = ConfigDict(extra="allow")

    model: StrictStr = MODEL
    messages: list[Message] = Field(min_length=1)
    stream: StrictBool = False
    k: StrictInt | None = Field(None, ge=1, le=50, description="papers to retrieve")


class AskRequest(BaseModel):
    question: StrictStr
    k: StrictInt | None = Field(None, ge=1, le=50, description="papers to retrieve")


def conversation(messages: list[Message]) -> tuple[str, History]:
    """The question (the last user message) and the earlier (question, answer) turns."""
    last = max((n for n, m in enumerate(messages) if m.role == "user"), default=None)
    if last is None:
        raise InputError("no user message: the last user message is the question")
    history: list[tuple[str, str]] = []
    asked: str | None = None
    for message in messages[:last]:
        if message.role == "user":
            asked = message.text()
        elif message.role == "assistant" and asked is not None:
            history.append((asked, _without_references(message.text())))
            asked = None
    return messages[last].text(), history


def _without_references(content: str) -> str:
    """An earlier answer as the assistant wrote it, without the reference list under it."""
    return re.split(r"\n\n\[1\] ", content, maxsplit=1)[0]


# Results -------------------------------------------------------------------------------------
def citation(c: Citation) -> dict[str, Any]:
    """A citation as `assistant mcp` gives it: [number] cites this paper, for this passage."""
    return {"number": c.number, "title": c.title, "paper_id": c.paper_id,
            "arxiv_id": c.arxiv_id, "openreview_id": c.openreview_id, "passage": c.text}


def _references(answer: Answer) -> str:
    return f"\n\n{answer.references}" if answer.citations else ""


def _usage(answer: Answer) -> dict[str, int]:
    used = answer.usage
    return {"prompt_tokens": used.prompt_tokens, "completion_tokens": used.completion_tokens,
            "total_tokens": used.prompt_tokens + used.completion_tokens}


def completion(answer: Answer) -> dict[str, Any]:
    """The answer as an OpenAI chat completion, with its citations beside the choices."""
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}", "object": "chat.completion",
        "created": int(time.time()), "model": MODEL,
        "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None, "message": {
            "role": "assistant", "content": answer.text + _references(answer)}}],
        "usage": _usage(answer),
        "citations": [citation(c) for c in answer.citations], "abstained": answer.abstained,
    }


def error_body(message: str, kind: str = "invalid_request_error", code: str | None = None,
               param: str | None = None) -> dict[str, Any]:
    """OpenAI's error object."""
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def error_response(status: int, message: str, kind: str = "invalid_request_error",
                   code: str | None = None, headers: dict[str, str] | None = None
                   ) -> JSONResponse:
    return JSONResponse(error_body(message, kind, code), status_code=status, headers=headers)


class Stopping(AssistantError):
    """The server is stopping (SIGTERM, Ctrl-C) while a question waits or is answered."""


# The assistant's errors: the status that says whose fault it is, and the CLI's message
STATUS = [(InputError, 400, None), (Stopping, 503, "stopping"),
          (IndexMissingError, 503, "no_index"), (IndexBusyError, 503, "index_busy"), (StoreError, 503, "store_error"),
          (ModelError, 502, "model_error"), (ConfigurationError, 500, "configuration_error")]


def failure(exc: BaseException, mask: Mask) -> tuple[int, dict[str, Any]]:
    """An exception as a status and an OpenAI error body, worded as the CLI words it."""
    for kind, status, code in STATUS:
        if isinstance(exc, kind):
            return status, error_body(mask(str(exc)), "invalid_request_error" if status < 500
                                      else "server_error", code)
    if isinstance(exc, AssistantError):
        return 500, error_body(mask(str(exc)), "server_error")
    log.error("request failed", exc_info=exc)
    return 500, error_body(mask(f"unexpected {type(exc).__name__}: {exc} (the server's log "
                                "has the details)"), "server_error")


# One answer at a time ------------------------------------------------------------------------
class Busy(Exception):
    """The model is answering and the queue is full."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class ClientGone(Exception):
    """The client hung up before its answer."""


async def until_gone(request: Request) -> None:
    """Returns when the client closes the connection (the body has been read)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass


async def unless(waiting: Awaitable[Any], stopping: asyncio.Event,
                 request: Request | None = None) -> Any:
    """``waiting``'s result; ``Stopping`` when the server stops first, ``ClientGone`` when the
    client (if given) hangs up first."""
    task = asyncio.ensure_future(waiting)
    watchers = {asyncio.ensure_future(stopping.wait()): Stopping(
        "the server is stopping; ask again once it is back")}
    if request is not None:
        watchers[asyncio.ensure_future(until_gone(request))] = ClientGone()
    try:
        await asyncio.wait({task, *watchers}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for watcher in watchers:
            watcher.cancel()
        if not task.done():
            task.cancel()
    if task.done() and not task.cancelled():
        return task.result()
    raise next(exc for w, exc in watchers.items() if w.done() and not w.cancelled())


class Job:
    """One answer, read on a worker thread of its own (the embedded model keeps per-thread
    state), its pieces passed to the event loop. ``stop`` ends it at the next checked piece:
    the model stops writing and is free for the next question."""

    def __init__(self, answer: Callable[[], Response], loop: asyncio.AbstractEventLoop,
                 ended: Callable[[float], None], stopping: asyncio.Event) -> None:
        self.events: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        self.stop = threading.Event()
        self.stopping = stopping
        self._answer = answer
        self._loop = loop
        self._ended = ended

    def start(self) -> None:
        threading.Thread(target=self._run, name="assistant-answer", daemon=True).start()

    def _put(self, kind: str, value: Any) -> None:
        self._loop.call_soon_threadsafe(self.events.put_nowait, (kind, value))

    def _run(self) -> None:
        started = time.monotonic()
        response = None
        try:
            if self.stop.is_set():
                return
            response = self._answer()
            for piece in response:
                if self.stop.is_set():
                    return
                self._put("piece", piece)
            self._put("answer", response.answer)
        except BaseException as exc:  # noqa: BLE001 - handed to the request
            self._put("error", exc)
        finally:
            try:
                if response is not None:
                    response.close()
            finally:
                try:
                    self._loop.call_soon_threadsafe(self._ended, time.monotonic() - started)
                except RuntimeError:
                    pass  # the server has stopped

    async def next(self, request: Request | None = None) -> tuple[str, Any]:
        """The next piece, answer or error; ``Stopping`` (or ``ClientGone``) first if so."""
        return await unless(self.events.get(), self.stopping, request)

    async def result(self, request: Request) -> Answer:
        """The final Answer (for a client that is not streaming); stops when it hangs up."""
        try:
            while True:
                kind, value = await self.next(request)
                if kind == "error":
                    raise value
                if kind == "answer":
                    return value
        finally:
            self.stop.set()


class Turns:
    """The model answers one question at a time; up to ``waiting`` more wait their turn, in
    order. Beyond that, ``Busy``."""

    def __init__(self, waiting: int, stopping: asyncio.Event) -> None:
        self.waiting_max = waiting
        self.stopping = stopping
        self.answering = 0
        self.waiting = 0
        self._free: asyncio.Semaphore | None = None  # made on the server's event loop
        self._seconds = 10.0  # how long answers take lately, for Retry-After

    async def start(self, answer: Callable[[], Response], request: Request) -> Job:
        """A running Job once it is this request's turn."""
        if self.answering + self.waiting > self.waiting_max:
            queued = f"{self.waiting} more {'is' if self.waiting == 1 else 'are'} waiting"
            retry = max(1, min(300, round(self._seconds * (self.waiting + 1))))
            raise Busy(f"the assistant is busy: it answers one question at a time and "
                       f"{queued} (ASSISTANT_SERVE_QUEUE={self.waiting_max}); try again in "
                       f"{retry} s", retry)
        if self._free is None:
            self._free = asyncio.Semaphore(1)
        self.waiting += 1
        try:
            await unless(self._free.acquire(), self.stopping, request)
        finally:
            self.waiting -= 1
        self.answering += 1
        job = Job(answer, asyncio.get_running_loop(), self._ended, self.stopping)
        job.start()
        return job

    def _ended(self, seconds: float) -> None:
        self._seconds = 0.7 * self._seconds + 0.3 * seconds
        self.answering -= 1
        assert self._free is not None
        self._free.release()


# Streaming -----------------------------------------------------------------------------------
def _chunk(chunk_id: str, created: int, delta: dict[str, Any], finish: str | None = None,
           **extra: Any) -> str:
    data = {"id": chunk_id, "object": "chat.completion.chunk", "created": created,
            "model": MODEL, "choices": [{"index": 0, "delta": delta, "finish_reason": finish,
                                         "logprobs": None}], **extra}
    return f"data: {json.dumps(data, ensure_ascii=False)}\n\n"


async def events(job: Job, mask: Mask) -> AsyncIterator[str]:
    """The answer as server-sent events: the checked pieces as they come, then the reference
    list; the last chunk carries ``citations``; then ``[DONE]``. A failure mid-answer is an
    OpenAI error event (the status line has gone already)."""
    chunk_id, created = f"chatcmpl-{uuid.uuid4().hex[:24]}", int(time.time())
    yield _chunk(chunk_id, created, {"role": "assistant", "content": ""})
    while True:
        try:
            kind, value = await job.next()
        except Stopping as exc:
            kind, value = "error", exc
        if kind == "piece":
            yield _chunk(chunk_id, created, {"content": value})
        elif kind == "error":
            yield f"data: {json.dumps(failure(value, mask)[1], ensure_ascii=False)}\n\n"
            return
        else:
            answer: Answer = value
            if answer.citations:
                yield _chunk(chunk_id, created, {"content": _references(answer)})
            yield _chunk(chunk_id, created, {}, "stop", usage=_usage(answer),
                         citations=[citation(c) for c in answer.citations],
                         abstained=answer.abstained)
            yield "data: [DONE]\n\n"
            return


class EventStream(StreamingResponse):
    """Server-sent events that stop their Job however they end (a client that hangs up
    included: Starlette cancels the stream when it sees the disconnect)."""

    def __init__(self, job: Job, mask: Mask) -> None:
        super().__init__(events(job, mask), media_type="text/event-stream",
                         headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
        self.job = job

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self.job.stop.set()


# The key and the body size, before FastAPI reads anything -------------------------------------
class Guard:
    """ASGI middleware: the bearer key on /v1 routes (when one is set), and at most
    ``limit`` bytes of body (413 beyond)."""

    def __init__(self, app: Any, key: str | None, limit: int = MAX_BODY) -> None:
        self.app = app
        self.key = key
        self.limit = limit

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        if self.key and scope["path"].startswith("/v1") and not self._authorized(headers):
            await error_response(
                401, "missing or wrong API key: send ASSISTANT_API_KEY's value as "
                "`Authorization: Bearer <key>`", code="invalid_api_key",
                headers={"WWW-Authenticate": "Bearer"})(scope, receive, send)
            return
        body, size = [], 0
        while True:  # read it all, keep it while within the limit, so the client can finish
            message = await receive()
            if message["type"] != "http.request":
                return  # gone
            size += len(message.get("body", b""))
            if size <= self.limit:
                body.append(message.get("body", b""))
            if not message.get("more_body") or size > 64 * self.limit:
                break
        if size > self.limit:
            await error_response(413, f"the request body is {size // 1024} KiB or more; the "
                                 f"limit is {self.limit // 1024} KiB", code="body_too_large"
                                 )(scope, receive, send)
            return
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": b"".join(body), "more_body": False}

        await self.app(scope, replay, send)

    def _authorized(self, headers: dict[bytes, bytes]) -> bool:
        given = headers.get(b"authorization", b"").decode("latin-1")
        scheme, _, token = given.partition(" ")
        assert self.key is not None
        return scheme.lower() == "bearer" and secrets.compare_digest(
            token.strip().encode(), self.key.encode())


# The application -----------------------------------------------------------------------------
def build_app(assistant: Assistant, *, key: str | None = None, waiting: int = 8,
              mask: Mask = str, stopping: asyncio.Event | None = None) -> Any:
    """The HTTP API over ``assistant`` (an ASGI application); setting ``stopping`` ends the
    requests in flight with 503 (the server sets it when it starts to shut down)."""
    from fastapi.concurrency import run_in_threadpool

    app = FastAPI(title="assistant", version="0.1.0", summary="Answers with checked citations "
                  "over the indexed paper abstracts; OpenAI-compatible.")
    turns = Turns(waiting, stopping or asyncio.Event())
    started = int(time.time())

    def failed(exc: BaseException) -> JSONResponse:
        if isinstance(exc, Busy):
            return error_response(503, str(exc), "server_error", "busy",
                                  headers={"Retry-After": str(exc.retry_after)})
        status, body = failure(exc, mask)
        return JSONResponse(body, status_code=status)

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        return error_response(400, mask(_problems(exc.errors())))

    @app.exception_handler(404)
    async def no_route(request: Request, exc: Exception) -> JSONResponse:
        return error_response(404, f"no such route: {request.method} {request.url.path} (the "
                              "API: /v1/chat/completions, /v1/models, /v1/ask, /v1/papers, "
                              "/healthz)", code="not_found")

    @app.exception_handler(405)
    async def wrong_method(request: Request, exc: Exception) -> JSONResponse:
        return error_response(405, f"{request.method} is not allowed on {request.url.path}",
                              headers=getattr(exc, "headers", None))

    async def answer(question: str, history: History, k: int | None, request: Request) -> Job:
        from assistant.api import clean_question

        clean_question(question)  # an empty question is refused before it waits its turn
        return await turns.start(lambda: assistant.stream(question, history=history, k=k),
                                 request)

    @app.post("/v1/chat/completions", response_model=None)
    async def chat_completions(body: ChatRequest, request: Request) -> Any:
        """OpenAI's chat completions: the last user message is the question, earlier turns
        the conversation it may follow up on."""
        try:
            if body.model != MODEL:
                return error_response(404, f"the model `{body.model}` does not exist: this "
                                      f"server's model is `{MODEL}` (GET /v1/models)",
                                      code="model_not_found")
            question, history = conversation(body.messages)
            job = await answer(question, history, body.k, request)
            if body.stream:
                return EventStream(job, mask)
            return completion(await job.result(request))
        except ClientGone:
            return JSONResponse({}, status_code=499)  # nobody is there to read it
        except Exception as exc:  # noqa: BLE001 - a failed request must not end the server
            return failed(exc)

    @app.post("/v1/ask", response_model=None)
    async def ask(body: AskRequest, request: Request) -> Any:
        """One question: the object `assistant ask --json` prints."""
        try:
            job = await answer(body.question, [], body.k, request)
            answered = await job.result(request)
            return json.loads(mask(json.dumps(answered.to_dict(), default=str)))
        except ClientGone:
            return JSONResponse({}, status_code=499)
        except Exception as exc:  # noqa: BLE001 - as above
            return failed(exc)

    @app.get("/v1/models")
    async def models() -> dict[str, Any]:
        return {"object": "list", "data": [
            {"id": MODEL, "object": "model", "created": started, "owned_by": "assistant"}]}

    @app.get("/v1/papers", response_model=None)
    async def papers() -> Any:
        """The indexed papers, as `assistant papers --json` lists them."""
        try:
            found = await run_in_threadpool(assistant.papers, False)
        except Exception as exc:  # noqa: BLE001 - as above
            return failed(exc)
        return {"object": "list", "data": [
            {k: v for k, v in p.as_dict().items() if k != "abstract"} for p in found]}

    @app.get("/healthz")
    async def healthz() -> dict[str, Any]:
        """Whether the server is up, and how many questions it answers and holds."""
        return {"status": "ok", "answering": turns.answering, "waiting": turns.waiting,
                "queue": turns.waiting_max}

    return Guard(app, key)


def _problems(errors: Any) -> str:
    """FastAPI's validation errors as one line that names each field ("`messages.0.content`:
    Input should be a valid string or a valid list")."""
    problems: dict[str, list[str]] = {}
    for error in errors:
        # pydantic names each branch of a union it tried ("str", "list[TextPart]"): not fields
        where = ".".join(str(part) for part in error["loc"][1:]
                         if not re.fullmatch(r"str|int|bool|float|none|\w+\[.*\]", str(part)))
        if error["type"] == "json_invalid":
            problems.setdefault("the body is not valid JSON", [])
        elif not where:
            problems.setdefault("the body must be a JSON object", [])
        else:
            problems.setdefault(f"`{where}`", []).append(error["msg"])
    said = []
    for where, messages in problems.items():
        # "Input should be a valid string or a valid list"
        tried = [m.removeprefix("Input should be ") if n else m for n, m in enumerate(messages)]
        said.append(f"{where}: {' or '.join(dict.fromkeys(tried))}" if tried else where)
    return "bad request: " + "; ".join(said)


# Serving -------------------------------------------------------------------------------------
def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a name: it may resolve to anything


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port``, or an error that says what to change."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ConfigurationError(f"cannot listen on {host}:{port} ({exc.strerror or exc}); "
                                 "choose another --port or --host") from exc
    return sock


def serve(assistant: Assistant, host: str = "127.0.0.1", port: int = 8000,
          mask: Mask = str) -> None:
    """Serve the HTTP API until SIGINT or SIGTERM (uvicorn's graceful shutdown)."""
    import uvicorn

    settings = assistant.settings
    key = settings.api_key.get_secret_value() if settings.api_key else None
    if not key and not is_loopback(host):
        raise ConfigurationError(
            f"serving on {host} opens the assistant to other machines: set ASSISTANT_API_KEY "
            "to a secret that clients send as `Authorization: Bearer <key>`, or serve on "
            "127.0.0.1")
    sock = listen(host, port)
    stopping = asyncio.Event()
    app = build_app(assistant, key=key, waiting=settings.serve_queue, mask=mask,
                    stopping=stopping)

    class Server(uvicorn.Server):
        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            stopping.set()  # answers in flight end now (503), within the grace period
            await super().shutdown(sockets)

    config = uvicorn.Config(app, host=host, port=port, log_config=None, lifespan="off",
                            ws="none", timeout_graceful_shutdown=3)
    log.info("the model is `%s`; %s; up to %d questions wait their turn", MODEL,
             "API key required" if key else "no API key", settings.serve_queue)
    Server(config).run(sockets=[sock])
