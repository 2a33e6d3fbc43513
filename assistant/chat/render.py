"""The chat's front ends: plain lines for scripts and tests; prompt_toolkit and rich Markdown in a
terminal. The chat loop only sees a ``Reader`` and a ``View``."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TextIO

from assistant.types import Answer, Response

if TYPE_CHECKING:
    from rich.console import Console

Writer = Callable[[str], None]
Reader = Callable[[str], str]  # prompt -> line; EOFError ends the chat


class View(Protocol):
    """What the chat loop writes to; every method takes finished text."""

    def echo(self, question: str) -> None:
        """The question, where the user's input is not already on screen."""

    def text(self, text: str) -> None:
        """A block of output (command results)."""

    def note(self, text: str) -> None:
        """Secondary information: the rewritten question, timings, references."""

    def error(self, text: str) -> None:
        """One line saying what went wrong and how to fix it."""

    def answer(self, response: Response) -> Answer:
        """Show the answer as its pieces arrive; return the final Answer."""

    def waiting(self, text: str) -> AbstractContextManager[object]:
        """Shows that something slow is going on, until the block ends."""


class PlainView:
    """Plain text, line by line: piped output and transcripts in tests."""

    def __init__(self, write: Writer, error: Writer | None = None) -> None:
        self._write = write
        self._error = error or write

    def echo(self, question: str) -> None:
        self._write(f"> {question}\n")

    def text(self, text: str) -> None:
        self._write(text.rstrip("\n") + "\n")

    def note(self, text: str) -> None:
        self.text(text)

    def error(self, text: str) -> None:
        self._error(f"error: {text}\n")

    def waiting(self, text: str) -> AbstractContextManager[object]:
        return nullcontext()

    def answer(self, response: Response) -> Answer:
        wrote = False
        for piece in response:
            self._write(piece)
            wrote = True
        if wrote:
            self._write("\n")
        return response.answer


class RichView:
    """Answers rendered as Markdown while they stream, with a spinner until the first words."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def echo(self, question: str) -> None:
        pass  # the prompt already shows it

    def text(self, text: str) -> None:
        self.console.print(text, markup=False, highlight=False, soft_wrap=True)

    def note(self, text: str) -> None:
        self.console.print(text, style="dim", markup=False, highlight=False)

    def error(self, text: str) -> None:
        self.console.print(f"error: {text}", style="bold red", markup=False, highlight=False)

    def waiting(self, text: str) -> AbstractContextManager[object]:
        return self.console.status(text, spinner="dots", spinner_style="dim")

    def answer(self, response: Response) -> Answer:
        from rich.live import Live
        from rich.markdown import Markdown
        from rich.spinner import Spinner
        from rich.text import Text

        text = ""
        with Live(Spinner("dots", text="thinking…", style="dim"), console=self.console,
                  refresh_per_second=10, vertical_overflow="visible") as live:
            try:
                for piece in response:
                    text += piece
                    live.update(Markdown(text), refresh=True)
                answer = response.answer
            except KeyboardInterrupt:  # keep what was shown, drop the spinner
                live.update(Markdown(text) if text else Text(""), refresh=True)
                raise
            live.update(Markdown(answer.text), refresh=True)
        return answer


def line_reader(stream: TextIO) -> Reader:
    """One line at a time from a pipe or file."""
    def read(prompt: str) -> str:
        line = stream.readline()
        if not line:
            raise EOFError
        return line

    return read


def terminal_reader(history_file: Path, complete: Callable[[str], Iterable[tuple[str, int]]]
                    ) -> Reader:
    """prompt_toolkit: line editing, history kept in ``history_file``, Ctrl-R, completion."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.completion import Completer, Completion
    from prompt_toolkit.history import FileHistory, History, InMemoryHistory
    from prompt_toolkit.key_binding import KeyBindings

    class SlashCompleter(Completer):
        def get_completions(self, document, complete_event):  # type: ignore[no-untyped-def]
            for word, start in complete(document.text_before_cursor):
                yield Completion(word, start_position=start)

    keys = KeyBindings()

    @keys.add("escape", "enter")
    def _newline(event) -> None:  # type: ignore[no-untyped-def]
        event.current_buffer.insert_text("\n")

    history: History
    try:
        history_file.parent.mkdir(parents=True, exist_ok=True)
        history = FileHistory(str(history_file))
    except OSError:
        history = InMemoryHistory()  # a read-only home should not stop the chat
    session: PromptSession[str] = PromptSession(
        history=history, completer=SlashCompleter(), key_bindings=keys,
        complete_while_typing=True, prompt_continuation="… ",
    )
    return session.prompt


def writer(stream: TextIO) -> Writer:
    """Writes and flushes, so streamed answers show as they come."""
    def write(text: str) -> None:
        stream.write(text)
        stream.flush()

    return write
