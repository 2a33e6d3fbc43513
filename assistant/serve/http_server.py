"""`assistant serve`: the assistant as an OpenAI-compatible HTTP API (FastAPI on uvicorn), for
Open WebUI, the `openai` client and anything else that speaks `/v1/chat/completions`.

The routes take OpenAI's format (assistant/serve/openai_format.py) and wait their turn for the model
(assistant/serve/turns.py: one answer at a time, each stopped when its client hangs up). ``Guard``
checks the API key and the body size before FastAPI reads anything. Nothing is loaded at start:
the store opens on the first request that needs it, the language model on the first question.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
import secrets
import socket
import time
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse

from assistant import __version__
from assistant.errors import (
    AssistantError,
    ConfigurationError,
    IndexBusyError,
    IndexMissingError,
    InputError,
    ModelError,
    StoreError,
)
from assistant.serve.openai_format import (
    MODEL,
    AskRequest,
    ChatRequest,
    chunk,
    citation,
    completion,
    completion_id,
    conversation,
    error_body,
    problems,
    references,
    usage,
)
from assistant.serve.turns import Busy, ClientGone, Job, Stopping, Turns

if TYPE_CHECKING:
    from assistant.api import Assistant, History
    from assistant.types import Answer

log = logging.getLogger(__name__)

MAX_BODY = 256 * 1024  # bytes; questions are cut to 200 tokens anyway
Mask = Callable[[str], str]


def error_response(status: int, message: str, kind: str = "invalid_request_error",
                   code: str | None = None, headers: dict[str, str] | None = None
                   ) -> JSONResponse:
    return JSONResponse(error_body(message, kind, code), status_code=status, headers=headers)


# The assistant's errors: the status that says whose fault it is, and the CLI's message
STATUS = [(InputError, 400, None), (Stopping, 503, "stopping"),
          (IndexMissingError, 503, "no_index"), (IndexBusyError, 503, "index_busy"),
          (StoreError, 503, "store_error"), (ModelError, 502, "model_error"),
          (ConfigurationError, 500, "configuration_error")]


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


# Streaming -----------------------------------------------------------------------------------
async def events(job: Job, mask: Mask) -> AsyncIterator[str]:
    """The answer as server-sent events: the checked pieces as they come, then the reference
    list; the last chunk carries ``citations``; then ``[DONE]``. A failure mid-answer is an
    OpenAI error event (the status line has gone already)."""
    chunk_id, created = completion_id(), int(time.time())
    yield chunk(chunk_id, created, {"role": "assistant", "content": ""})
    while True:
        try:
            kind, value = await job.next()
        except Stopping as exc:
            kind, value = "error", exc
        if kind == "piece":
            yield chunk(chunk_id, created, {"content": value})
        elif kind == "error":
            yield f"data: {json.dumps(failure(value, mask)[1], ensure_ascii=False)}\n\n"
            return
        else:
            answer: Answer = value
            if answer.citations:
                yield chunk(chunk_id, created, {"content": references(answer)})
            yield chunk(chunk_id, created, {}, "stop", usage=usage(answer),
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
    ``MAX_BODY`` bytes of body (413 beyond)."""

    def __init__(self, app: Any, key: str | None) -> None:
        self.app = app
        self.key = key

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
            if size <= MAX_BODY:
                body.append(message.get("body", b""))
            if not message.get("more_body") or size > 64 * MAX_BODY:
                break
        if size > MAX_BODY:
            await error_response(413, f"the request body is {size // 1024} KiB or more; the "
                                 f"limit is {MAX_BODY // 1024} KiB", code="body_too_large"
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
def build_app(assistant: Assistant, *, key: str | None = None,
              mask: Mask = str, stopping: asyncio.Event | None = None) -> Any:
    """The HTTP API over ``assistant`` (an ASGI application); setting ``stopping`` ends the
    requests in flight with 503 (the server sets it when it starts to shut down)."""
    app = FastAPI(title="assistant", version=__version__, summary="Answers with checked citations "
                  "over the indexed paper abstracts; OpenAI-compatible.")
    turns = Turns(assistant.settings.serve.serve_queue, stopping or asyncio.Event())

    def failed(exc: BaseException) -> JSONResponse:
        if isinstance(exc, ClientGone):
            return JSONResponse({}, status_code=499)  # nobody is there to read it
        if isinstance(exc, Busy):
            return error_response(503, str(exc), "server_error", "busy",
                                  headers={"Retry-After": str(exc.retry_after)})
        status, body = failure(exc, mask)
        return JSONResponse(body, status_code=status)

    _errors_in_openai_form(app, mask)
    _reading_routes(app, assistant, turns, failed)

    async def answer(question: str, history: History, k: int | None, request: Request) -> Job:
        from assistant.api import clean_question

        clean_question(question)  # an empty question is refused before it waits its turn
        return await turns.start(lambda: assistant.stream(question, history=history, k=k),
                                 request.receive)

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
            return completion(await job.result(request.receive))
        except Exception as exc:  # noqa: BLE001 - a failed request must not end the server
            return failed(exc)

    @app.post("/v1/ask", response_model=None)
    async def ask(body: AskRequest, request: Request) -> Any:
        """One question: the object `assistant ask --json` prints."""
        try:
            job = await answer(body.question, [], body.k, request)
            answered = await job.result(request.receive)
            return json.loads(mask(json.dumps(answered.to_dict(), default=str)))
        except Exception as exc:  # noqa: BLE001 - as above
            return failed(exc)

    return Guard(app, key)


def _errors_in_openai_form(app: Any, mask: Mask) -> None:
    """A bad body (400), an unknown route (404) or method (405) answered in OpenAI's error
    form, saying what is wrong."""
    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        return error_response(400, mask(problems(exc.errors())))

    @app.exception_handler(404)
    async def no_route(request: Request, exc: Exception) -> JSONResponse:
        return error_response(404, f"no such route: {request.method} {request.url.path} (the "
                              "API: /v1/chat/completions, /v1/models, /v1/ask, /v1/papers, "
                              "/healthz)", code="not_found")

    @app.exception_handler(405)
    async def wrong_method(request: Request, exc: Exception) -> JSONResponse:
        return error_response(405, f"{request.method} is not allowed on {request.url.path}",
                              headers=getattr(exc, "headers", None))


def _reading_routes(app: Any, assistant: Assistant, turns: Turns,
                    failed: Callable[[BaseException], JSONResponse]) -> None:
    """The routes that answer no question: the model, the papers, the server's health."""
    from fastapi.concurrency import run_in_threadpool

    started = int(time.time())

    @app.get("/v1/models")
    async def models() -> dict[str, Any]:
        return {"object": "list", "data": [
            {"id": MODEL, "object": "model", "created": started, "owned_by": "assistant"}]}

    @app.get("/v1/papers", response_model=None)
    async def papers() -> Any:
        """The indexed papers, as `assistant papers --json` lists them."""
        try:
            found = await run_in_threadpool(assistant.papers, False)
        except Exception as exc:  # noqa: BLE001 - a failed request must not end the server
            return failed(exc)
        return {"object": "list", "data": [p.listed() for p in found]}

    @app.get("/healthz")
    async def healthz() -> dict[str, Any]:
        """Whether the server is up, and how many questions it answers and holds."""
        return {"status": "ok", "answering": turns.answering, "waiting": turns.waiting,
                "queue": turns.waiting_max}


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
    key = settings.serve.api_key.get_secret_value() if settings.serve.api_key else None
    if not key and not is_loopback(host):
        raise ConfigurationError(
            f"serving on {host} opens the assistant to other machines: set ASSISTANT_API_KEY "
            "to a secret that clients send as `Authorization: Bearer <key>`, or serve on "
            "127.0.0.1")
    sock = listen(host, port)
    stopping = asyncio.Event()
    app = build_app(assistant, key=key, mask=mask, stopping=stopping)

    class Server(uvicorn.Server):
        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            stopping.set()  # answers in flight end now (503), within the grace period
            await super().shutdown(sockets)

    config = uvicorn.Config(app, host=host, port=port, log_config=None, lifespan="off",
                            ws="none", timeout_graceful_shutdown=3)
    log.info("the model is `%s`; %s; up to %d questions wait their turn", MODEL,
             "API key required" if key else "no API key", settings.serve.serve_queue)
    Server(config).run(sockets=[sock])
