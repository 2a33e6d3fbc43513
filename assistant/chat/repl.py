"""The terminal conversation: a loop with its input and output injected."""

from __future__ import annotations

import sys
import textwrap
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from assistant.chat.render import PlainView, RichView, View, line_reader, terminal_reader, writer
from assistant.config import K_MAX, K_MIN
from assistant.errors import AssistantError, IndexMissingError, InputError
from assistant.types import Answer

if TYPE_CHECKING:
    from assistant.api import Assistant
    from assistant.chat.render import Reader
    from assistant.config import Settings
    from assistant.index.store import PaperInfo

COMMANDS = {
    "/help": "this list",
    "/sources": "passages behind the last answer (titles, scores, text), what checks removed",
    "/papers": "list the indexed papers",
    "/paper": "<n or title> show one abstract",
    "/reset": "start a new conversation (follow-ups forget earlier turns)",
    "/k": "<n> papers retrieved per question",
    "/model": "the language model answering ([name] switches a server model)",
    "/where": "<expr> answer from matching papers only (year>=2024, author~smith); "
              "alone: show; /where clear: all papers",
    "/bib": "BibTeX of the papers the last answer cites",
    "/save": "<file> write the transcript as Markdown; <file>.bib the BibTeX of every "
             "paper cited",
    "/quit": "leave (or Ctrl-D)",
}
HELP = "\n".join(f"  {name:<9}{what}" for name, what in COMMANDS.items()) + (
    "\n\nFollow-ups may refer to earlier answers (\"What data does it use?\"). Up/Down and "
    "Ctrl-R search the history, Tab completes commands and titles, Esc Enter starts a new "
    "line, Ctrl-C stops an answer."
)


def history_path(settings: Settings) -> Path:
    """The prompt history file: under ASSISTANT_HOME when set, else the user data folder."""
    if settings.storage.home is not None:
        return settings.storage.home.expanduser() / "chat_history"
    import platformdirs

    return Path(platformdirs.user_data_dir("assistant")) / "chat_history"


def complete(text: str, titles: Callable[[], Iterable[str]]) -> list[tuple[str, int]]:
    """Completions of the input so far as (replacement, start offset from the cursor)."""
    if not text.startswith("/"):
        return []
    if " " not in text:
        return [(name, -len(text)) for name in COMMANDS if name.startswith(text)]
    if text.startswith("/paper "):
        part = text[len("/paper "):].lower()
        return [(t, -len(part)) for t in titles() if part in t.lower()]
    return []


@dataclass
class Turn:
    """One question and its answer, as kept for the transcript."""

    question: str
    standalone: str
    answer: Answer
    seconds: float


@dataclass
class Chat:
    """The state of one conversation and what each input does to it."""

    assistant: Assistant
    view: View
    k: int
    history: list[tuple[str, str]] = field(default_factory=list)
    turns: list[Turn] = field(default_factory=list)  # the transcript, kept across /reset
    last: Answer | None = None
    where: list[str] = field(default_factory=list)  # --where expressions, all must hold
    _papers: list[PaperInfo] | None = None

    def papers(self) -> list[PaperInfo]:
        if self._papers is None:
            self._papers = self.assistant.papers(abstracts=False)  # /paper reads its own
        return self._papers

    def ask(self, line: str) -> None:
        from assistant.api import clean_question
        from assistant.text.identifiers import with_titles

        question = clean_question(line)
        self.view.echo(question)
        started = time.perf_counter()
        with self.view.waiting("reading the follow-up in context…"):
            # "Which of these …?" is asked among the previous answer's papers, the rest rewritten
            # "https://arxiv.org/abs/… - what does it propose?": the paper by its title first,
            # so that "it" is not read as the previous answer's paper
            read = with_titles(question, self.papers)[0]
            scoped = self.assistant.among_earlier(read, self.history)
            standalone = scoped.question if scoped else self.assistant.rewrite(read, self.history)
        rewrite = time.perf_counter() - started
        if standalone != question:
            self.view.note(f"↳ {standalone}")
        response = self.assistant.stream(question if scoped else standalone, k=self.k,
                                         where=self.where, history=self.history if scoped else None)
        try:
            answer = self.view.answer(response)
        finally:
            response.close()  # after Ctrl-C: stops the model and releases it
        seconds = time.perf_counter() - started
        self.history.append((standalone, answer.text))
        self.turns.append(Turn(question, standalone, answer, seconds))
        self.last = answer
        for warning in answer.warnings:
            self.view.note(f"warning: {warning}")
        if answer.citations:
            self.view.text("\n" + answer.references)
        parts = [f"{seconds:.1f} s"]
        if standalone != question and not scoped:  # "which of these": no model rewrite
            parts.append(f"rewrite {rewrite:.1f} s")
        if answer.timings.first_token is not None:
            parts.append(f"first words after {rewrite + answer.timings.first_token:.1f} s")
        self.view.note(" · ".join(parts) + "\n")

    def command(self, line: str) -> bool:
        """Run a slash command; False when the chat should end."""
        name, _, arg = line.partition(" ")
        arg = arg.strip()
        if name in ("/quit", "/exit"):
            return False
        handler = getattr(self, f"cmd_{name[1:]}", None) if name in COMMANDS else None
        if handler is None:
            raise InputError(f"unknown command {name}; /help lists the commands")
        handler(arg)
        return True

    def cmd_help(self, arg: str) -> None:
        self.view.text(HELP)

    def cmd_sources(self, arg: str) -> None:
        if self.last is None:
            self.view.note("no answer yet: ask a question first")
            return
        cited = {c.paper_id: c.number for c in self.last.citations}
        for rank, s in enumerate(self.last.sources, start=1):
            mark = f"  cited as [{cited[s.paper_id]}]" if s.paper_id in cited else ""
            self.view.text(f"{rank}. {s.label}{mark}\n   score {s.score:.4f} "
                           f"(dense {s.dense:.2f}, lexical {s.lexical:.2f})")
            for passage in s.passages or (s.text,):
                self.view.note(textwrap.fill(passage, 88, initial_indent="   ",
                                             subsequent_indent="   ") + "\n")
        for dropped in self.last.dropped:
            self.view.note(f"removed by the checks: {dropped.sentence} ({dropped.reason})")

    def cmd_papers(self, arg: str) -> None:
        papers = self.papers()
        self.view.text("\n".join(f"{n:3d}. {p.display_title}" for n, p in enumerate(papers, 1)))
        self.view.note(f"{len(papers)} papers; /paper <n> shows one")

    def cmd_paper(self, arg: str) -> None:
        papers = self.papers()
        if arg.isdigit() and 1 <= int(arg) <= len(papers):
            found = [papers[int(arg) - 1]]
        elif arg.isdigit() or not arg:
            raise InputError(f"give a number from 1 to {len(papers)} (see /papers) or a title")
        else:
            word = arg.lower()
            found = [p for p in papers if p.title.lower() == word or p.arxiv_id == arg]
            found = found or [p for p in papers if word in p.title.lower()]
        if not found:
            raise InputError(f"no indexed paper has {arg!r} in its title; /papers lists them")
        if len(found) > 1:
            numbers = {p.id: n for n, p in enumerate(papers, 1)}
            self.view.text("Several papers match:\n" + "\n".join(
                f"{numbers[p.id]:3d}. {p.display_title}" for p in found))
            return
        paper = found[0]
        ids = [f"arXiv {paper.arxiv_id}" if paper.arxiv_id else "", paper.url or "",
               f"OpenReview {paper.openreview_id}" if paper.openreview_id else ""]
        self.view.text(paper.display_title)
        self.view.note(" · ".join(i for i in ids if i) or "no id")
        abstract = self.assistant.store.abstract(paper.id)
        if abstract is None:
            raise InputError("this paper's chunks are not all in the index; run `assistant index`")
        self.view.text(textwrap.fill(abstract, 88, break_on_hyphens=False) + "\n")

    def cmd_reset(self, arg: str) -> None:
        self.history.clear()
        self.last = None
        self.view.note("new conversation: follow-ups no longer refer to earlier answers")

    def cmd_k(self, arg: str) -> None:
        if arg:
            if not arg.isdigit() or not K_MIN <= int(arg) <= K_MAX:
                raise InputError(f"/k takes a number of papers from {K_MIN} to {K_MAX}")
            self.k = int(arg)
        self.view.note(f"{self.k} papers retrieved per question")

    def cmd_model(self, arg: str) -> None:
        from assistant.api import Assistant
        from assistant.models.llm import model_label

        settings = self.assistant.settings
        if arg and not settings.models.uses_openai():
            raise InputError("the embedded model is the only local one; set OPENAI_BASE_URL "
                             "(or OPENAI_API_KEY) to choose a model on a server")
        if arg:
            settings = settings.replace(model=arg)
            old = self.assistant
            self.assistant = Assistant(settings, embeddings=old.embeddings, store=old.store)
        where = "embedded, run in this process"
        if settings.models.uses_openai():
            where = settings.models.openai_base_url or "the OpenAI API"
        self.view.note(f"{model_label(self.assistant.llm)} ({where})")

    def cmd_where(self, arg: str) -> None:
        from assistant.api import parse_where

        if arg.lower() == "clear":
            self.where = []
        elif arg:
            parse_where(self.where + [arg])  # a bad expression changes nothing
            self.where = self.where + [arg]
        shown = " and ".join(self.where) or "none: answers come from every paper"
        self.view.note(f"filter: {shown}")

    def cmd_bib(self, arg: str) -> None:
        if self.last is None or not self.last.citations:
            raise InputError("no cited papers yet: ask a question first")
        self.view.text(self.last.bibtex())

    def cmd_save(self, arg: str) -> None:
        if not arg:
            raise InputError("/save needs a file name, such as /save chat.md or /save refs.bib")
        if not self.turns:
            raise InputError("nothing to save yet: ask a question first")
        path = Path(arg).expanduser()
        if path.suffix.lower() == ".bib":
            entries = dict.fromkeys(c.bibtex for t in self.turns for c in t.answer.citations
                                    if c.bibtex)
            if not entries:
                raise InputError("no answer has cited a paper yet: nothing to write")
            _write_whole(path, "\n\n".join(entries) + "\n")
            n = len(entries)
            self.view.note(f"saved {n} BibTeX entr{'ies' if n > 1 else 'y'} to {path}")
            return
        _write_whole(path, self.transcript())
        n = len(self.turns)
        self.view.note(f"saved {n} turn{'s' if n > 1 else ''} to {path}")

    def transcript(self) -> str:
        """The conversation as Markdown, each answer with its references."""
        model = self.turns[-1].answer.model or "unknown model"
        out = ["# Chat transcript", "",
               f"*{datetime.now():%Y-%m-%d %H:%M} · {model} · {len(self.turns)} turns*", ""]
        for n, turn in enumerate(self.turns, start=1):
            out += [f"## {n}. {turn.question}", ""]
            if turn.standalone != turn.question:
                out += [f"*Understood as: {turn.standalone}*", ""]
            out += [turn.answer.text, ""]
            if turn.answer.citations:
                out += ["References:", ""]
                out += [f"- [{c.number}] {c.label}" for c in turn.answer.citations] + [""]
            out += [f"*{turn.seconds:.1f} s*", ""]
        return "\n".join(out)


def _write_whole(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path``, then rename it: never half a file."""
    import os
    import tempfile

    try:
        handle, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(text)
            os.replace(name, path)
        except BaseException:
            Path(name).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror or exc}") from exc


def run_chat(assistant: Assistant, read_line: Reader, view: View, *, k: int | None = None,
             intro: bool = True, where: list[str] | None = None) -> int:
    """Converse until EOF or /quit; returns the exit code (1 when there is no index)."""
    chat = Chat(assistant, view, k or assistant.settings.retrieval.k, where=list(where or []))
    try:
        count = len(chat.papers())
    except AssistantError as exc:
        view.error(str(exc))
        return 1
    if intro:
        view.note(f"{count} papers indexed. Ask a question; /help lists commands, Ctrl-D leaves.")
    while True:
        try:
            line = read_line("> ").strip()
        except EOFError:
            return 0
        except KeyboardInterrupt:
            continue  # as in a shell: Ctrl-C at the prompt clears the line
        if not line:
            continue
        try:
            if line.startswith("/"):
                if not chat.command(line):
                    return 0
            else:
                chat.ask(line)
        except KeyboardInterrupt:
            view.note("\nstopped")
        except IndexMissingError as exc:
            view.error(str(exc))
            return 1
        except AssistantError as exc:
            view.error(str(exc))


def run_chat_command(settings: Settings, k: int | None = None,
                     where: list[str] | None = None) -> int:
    """`assistant chat`: prompt_toolkit and rich in a terminal, plain lines when piped."""
    from assistant.api import Assistant, parse_where

    if k is not None and not K_MIN <= k <= K_MAX:
        raise InputError(f"-k takes a number of papers from {K_MIN} to {K_MAX}")
    parse_where(where)  # a bad --where fails before the chat starts
    assistant = Assistant(settings)  # one per chat: the model loads once
    if sys.stdin.isatty() and sys.stdout.isatty():
        from rich.console import Console

        @cache  # asked on every key press: read the index once
        def titles() -> list[str]:
            return [p.title for p in assistant.papers(abstracts=False)]

        reader = terminal_reader(history_path(settings), lambda text: complete(text, titles))
        return run_chat(assistant, reader, RichView(Console()), k=k, where=where)
    view = PlainView(writer(sys.stdout), writer(sys.stderr))
    return run_chat(assistant, line_reader(sys.stdin), view, k=k, intro=False, where=where)
