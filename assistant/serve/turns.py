"""One answer at a time: ``Turns`` lets the model answer one question while a bounded number
wait, in order; each answer runs on a worker thread of its own (``Job``) and stops between two
checked sentences when its client hangs up or the server stops."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable
from contextlib import suppress
from typing import TYPE_CHECKING, Any

from assistant.errors import AssistantError

if TYPE_CHECKING:
    from assistant.types import Answer, Response

Receive = Callable[[], Awaitable[Any]]  # an ASGI receive


class Stopping(AssistantError):
    """The server is stopping (SIGTERM, Ctrl-C) while a question waits or is answered."""


class Busy(Exception):
    """The model is answering and the queue is full."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class ClientGone(Exception):
    """The client hung up before its answer."""


async def until_gone(receive: Receive) -> None:
    """Returns when the client closes the connection (its body has been read)."""
    while (await receive())["type"] != "http.disconnect":
        pass


async def unless(waiting: Awaitable[Any], stopping: asyncio.Event,
                 receive: Receive | None = None) -> Any:
    """``waiting``'s result; ``Stopping`` when the server stops first, ``ClientGone`` when the
    client whose ``receive`` is given hangs up first."""
    task = asyncio.ensure_future(waiting)
    watchers = {asyncio.ensure_future(stopping.wait()): Stopping(
        "the server is stopping; ask again once it is back")}
    if receive is not None:
        watchers[asyncio.ensure_future(until_gone(receive))] = ClientGone()
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
                with suppress(RuntimeError):  # the server has stopped
                    self._loop.call_soon_threadsafe(self._ended, time.monotonic() - started)

    async def next(self, receive: Receive | None = None) -> tuple[str, Any]:
        """The next piece, answer or error; ``Stopping`` (or ``ClientGone``) first if so."""
        return await unless(self.events.get(), self.stopping, receive)

    async def result(self, receive: Receive) -> Answer:
        """The final Answer (for a client that is not streaming); stops when it hangs up."""
        try:
            while True:
                kind, value = await self.next(receive)
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

    async def start(self, answer: Callable[[], Response], receive: Receive) -> Job:
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
            await unless(self._free.acquire(), self.stopping, receive)
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
