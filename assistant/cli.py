"""The command line: parse, call the library, print. Heavy imports happen per command."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from assistant import __version__

EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


def _where(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("--where", action="append", default=[], metavar="EXPR",
                        help=f"{what} only papers where FIELD OP VALUE holds (fields: year, "
                        "venue, author, keyword, title; OP one of = != > >= < <= ~); "
                        "repeatable, all must hold")


def _model_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-k", type=int, metavar="N", help="papers to retrieve (default: ASSISTANT_K)")
    parser.add_argument("--model", help="model name on an OpenAI-compatible server")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="assistant",
        description="Answers questions about paper abstracts, citing paper titles. "
        "Offline by default; set OPENAI_API_KEY / OPENAI_BASE_URL to use a model server.",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    parser.add_argument("--version", action="version", version=f"assistant {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    _library_commands(commands)
    _answering_commands(commands)
    _eval_command(commands)
    return parser


def _library_commands(commands: Any) -> None:
    """``index`` and ``papers``: what is indexed."""
    index = commands.add_parser("index", help="index abstracts (default: the bundled ICLR 2026 set)")
    index.add_argument("paths", nargs="*", type=Path, metavar="PATH",
                       help=".txt, .jsonl, .csv, .bib, .ris or .json (CSL-JSON, OpenReview, "
                       "arXiv) files, titles .tsv, or folders")
    index.add_argument("--rebuild", action="store_true", help="drop the index and build it anew")
    index.add_argument("--json", action="store_true", help="print the summary as JSON")
    index.add_argument("--limit", type=int, metavar="N",
                       help="index at most N papers, reading no further than needed")
    _where(index, "index")

    papers = commands.add_parser("papers", help="list the indexed papers")
    papers.add_argument("--json", action="store_true", help="print a JSON list")
    _where(papers, "list")


def _answering_commands(commands: Any) -> None:
    """``ask``, ``chat``, ``mcp`` and ``serve``: answers, in the terminal or to clients."""
    ask = commands.add_parser("ask", help="answer one question with cited titles")
    ask.add_argument("question", help="the question, in quotes")
    _model_options(ask)
    ask.add_argument("--json", action="store_true", help="print the Answer as JSON")
    ask.add_argument("--bibtex", action="store_true",
                     help="print the BibTeX of the cited papers after the answer")
    _where(ask, "answer from")

    chat = commands.add_parser("chat", help="a conversation in the terminal, with follow-ups")
    _model_options(chat)
    _where(chat, "answer from")

    mcp = commands.add_parser("mcp", help="serve the assistant to MCP clients (Claude Desktop, "
                              "Cursor) over stdio")
    _model_options(mcp)

    serve = commands.add_parser("serve", help="serve an OpenAI-compatible HTTP API (Open WebUI, "
                                "the openai client)")
    serve.add_argument("--host", default="127.0.0.1",
                       help="address to listen on (default 127.0.0.1; any other needs "
                       "ASSISTANT_API_KEY)")
    serve.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    _model_options(serve)


def _eval_command(commands: Any) -> None:
    """``eval``: the quality measures, on the dev and test questions."""
    evaluate = commands.add_parser("eval", help="measure retrieval, citations and abstention")
    evaluate.add_argument("--questions", type=Path, metavar="FILE",
                          help="question set (default: the bundled data/eval/questions.jsonl)")
    evaluate.add_argument("--split", choices=("dev", "test", "both"), default="both",
                          help="dev (tune on it), test (frozen: report only) or both, side by "
                          "side (default)")
    evaluate.add_argument("--retrieval-only", action="store_true",
                          help="score retrieval only (fast, no language model)")
    evaluate.add_argument("--json", action="store_true", help="print the report as JSON")
    evaluate.add_argument("--min", action="append", default=[], metavar="METRIC=VALUE",
                          help="fail (exit 1) when METRIC is below VALUE; repeatable")
    evaluate.add_argument("--max", action="append", default=[], metavar="METRIC=VALUE",
                          help="fail (exit 1) when METRIC is above VALUE; repeatable")
    evaluate.add_argument("--no-baseline", action="store_true",
                          help="skip the LangChain-tutorial baseline")
    evaluate.add_argument("--baseline-only", action="store_true",
                          help="run the LangChain-tutorial baseline alone (it does not change "
                          "with the assistant: one run per question set is enough)")
    evaluate.add_argument("--limit", type=int, metavar="N", help="only the first N questions")
    evaluate.add_argument("--report", type=Path, metavar="FILE",
                          help="where to write the JSON report (default: under the cache folder)")
    _where(evaluate, "retrieve")


def _settings(args: argparse.Namespace, **overrides: Any) -> Any:
    from pydantic import ValidationError

    from assistant.config import Settings, explain
    from assistant.errors import ConfigurationError

    values = {k: v for k, v in overrides.items() if v is not None}  # flat names: k, model
    if args.debug:
        values["debug"] = True
    try:
        return Settings(**values)
    except ValidationError as exc:
        raise ConfigurationError(f"bad setting: {explain(exc)}") from None


def _model_settings(args: argparse.Namespace, **overrides: Any) -> Any:
    """Settings with ``--model``, which a note says applies only to a model server."""
    settings = _settings(args, model=args.model, **overrides)
    if args.model and not settings.models.uses_openai():
        print("note: --model applies to OpenAI-compatible servers (set OPENAI_BASE_URL or "
              "OPENAI_API_KEY); using the embedded model", file=sys.stderr)
    return settings


def _secret_free(text: str) -> str:
    """Any API key from the environment, masked."""
    for name in ("OPENAI_API_KEY", "ASSISTANT_API_KEY"):
        secret = os.environ.get(name)
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    return text


def _print_json(data: Any) -> None:
    print(_secret_free(json.dumps(data, indent=2, ensure_ascii=False, default=str)))


def cmd_index(args: argparse.Namespace) -> int:
    from assistant.api import parse_where
    from assistant.errors import InputError
    from assistant.index.indexing import build_index

    if args.limit is not None and args.limit < 1:
        raise InputError(f"--limit {args.limit}: give a number of papers, 1 or more")
    flt = parse_where(args.where)
    settings = _settings(args)
    progress_bar, task = None, None
    if not args.json and sys.stderr.isatty():
        from rich.progress import Progress

        progress_bar = Progress(transient=True)

    def progress(done: int, total: int) -> None:  # only called with a progress bar
        nonlocal task
        if task is None:
            progress_bar.start()
            task = progress_bar.add_task("Embedding chunks", total=total)
        progress_bar.update(task, completed=done)

    files: list[Any] = []
    try:
        report = build_index(settings, args.paths or None, rebuild=args.rebuild,
                             progress=progress if progress_bar else None, limit=args.limit,
                             keep=flt.matches if flt else None, summaries=files)
    finally:
        if task is not None:  # the bar was started
            progress_bar.stop()
    if args.json:
        _print_json({**report.as_dict(), "files": [f.as_dict() for f in files]})
    else:
        for summary in files:
            print(summary.describe())
        print(
            f"Indexed {report.papers} papers ({report.chunks} chunks) in {report.seconds:.1f} s: "
            f"{report.added} added, {report.updated} updated, {report.removed} removed, "
            f"{report.unchanged} unchanged. Store: {report.location}"
        )
    return 0


def cmd_papers(args: argparse.Namespace) -> int:
    from assistant.api import Assistant, parse_where
    from assistant.errors import InputError

    flt = parse_where(args.where)
    papers = Assistant(_settings(args)).papers(abstracts=False, where=args.where)
    if flt and not papers:
        raise InputError(f"no indexed paper matches --where {flt}; `assistant papers` lists them")
    if args.json:
        _print_json([p.listed() for p in papers])
        return 0
    for number, paper in enumerate(papers, start=1):
        ids = f"arXiv {paper.arxiv_id}" if paper.arxiv_id else (
            f"OpenReview {paper.openreview_id}" if paper.openreview_id else "no id")
        print(f"{number:3d}. {paper.display_title}  [{ids}]")
    print(f"{len(papers)} papers ({sum(p.title_derived for p in papers)} with a derived title)")
    return 0


def cmd_ask(args: argparse.Namespace) -> int:
    from assistant.api import Assistant

    settings = _model_settings(args)
    assistant = Assistant(settings)
    streamed = False
    response = assistant.stream(args.question, k=args.k, where=args.where)
    try:
        for piece in response:
            if not args.json:
                print(piece, end="", flush=True)
                streamed = True
        answer = response.answer
    except BaseException:
        if streamed:  # what was printed must not pass for a whole answer
            print("\n[answer incomplete]", flush=True)
        raise
    finally:
        response.close()
    if args.json:
        _print_json(answer.to_dict())
        return 0
    if streamed:
        print()
    for warning in answer.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if answer.citations:
        print("\n" + answer.references)
    if args.bibtex and answer.citations:
        print("\n" + answer.bibtex(), end="")
    elif args.bibtex:
        print("note: the answer cites no paper, so there is no BibTeX", file=sys.stderr)
    return 0


def cmd_chat(args: argparse.Namespace) -> int:
    from assistant.chat.repl import run_chat_command

    return run_chat_command(_model_settings(args), k=args.k, where=args.where)


def cmd_mcp(args: argparse.Namespace) -> int:
    import logging
    import signal

    from assistant.api import Assistant
    from assistant.serve.mcp_server import serve

    # stdout carries the protocol: every log line goes to stderr
    logging.basicConfig(level=logging.DEBUG if args.debug else logging.WARNING,
                        stream=sys.stderr, format="assistant mcp: %(levelname)s %(message)s")
    settings = _model_settings(args, k=args.k)

    def interrupted(signum: int, frame: Any) -> None:
        # The SDK reads stdin on a thread that no cancellation reaches: asyncio would wait
        # for the client's next line. The server never writes the index, and its caches are
        # replaced whole (written aside, then renamed), so stop at once, as SIGTERM does.
        print("\ninterrupted", file=sys.stderr, flush=True)
        os._exit(EXIT_INTERRUPTED)

    signal.signal(signal.SIGINT, interrupted)
    serve(Assistant(settings), mask=_secret_free)
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    import logging
    import signal

    from assistant.api import Assistant
    from assistant.serve.http_server import serve

    class SecretFree(logging.Formatter):  # log lines, tracebacks too, with API keys masked
        def format(self, record: logging.LogRecord) -> str:
            return _secret_free(super().format(record))

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(SecretFree("assistant serve: %(levelname)s %(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[handler])
    for name in ("assistant", "uvicorn"):
        logging.getLogger(name).setLevel(logging.DEBUG if args.debug else logging.INFO)
    settings = _model_settings(args, k=args.k)
    # uvicorn stops gracefully on SIGTERM and SIGINT, then raises the signal again for the
    # handler it found: these. SIGTERM ends with exit 0 rather than death by signal; SIGINT
    # is KeyboardInterrupt (exit 130) from a handler of our own, because asyncio replaces
    # Python's default one with a handler that cancels the server's task, and a stop that
    # came as the server finished was then sometimes lost (exit 0).
    signal.signal(signal.SIGTERM, lambda signum, frame: None)
    signal.signal(signal.SIGINT, _interrupt)
    serve(Assistant(settings), host=args.host, port=args.port, mask=_secret_free)
    return 0


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def cmd_eval(args: argparse.Namespace) -> int:
    from assistant.eval.scorecard import run_eval_command

    return run_eval_command(_settings(args), args)


COMMANDS = {
    "index": cmd_index, "papers": cmd_papers, "ask": cmd_ask, "chat": cmd_chat, "mcp": cmd_mcp,
    "serve": cmd_serve, "eval": cmd_eval,
}


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return EXIT_USAGE
    debug = args.debug or os.environ.get("ASSISTANT_DEBUG", "").lower() in ("1", "true", "yes")
    try:
        return COMMANDS[args.command](args)
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError as exc:
        if not _stdout_closed():
            return _report(exc, debug)  # another pipe (a model server's): an error
        # "assistant papers | head": the reader had enough; the rest of the output goes
        # nowhere, not to a closed pipe at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as exc:  # noqa: BLE001 - the one place errors become messages
        return _report(exc, debug)


def _stdout_closed() -> bool:
    """Whether standard output's reader has gone (its pipe reports an error); where that
    cannot be asked (no poll()), a broken pipe is taken to be standard output's."""
    import select

    try:
        poll = select.poll()
        poll.register(sys.stdout.fileno(), select.POLLOUT)
        return any(event & (select.POLLERR | select.POLLHUP) for _, event in poll.poll(0))
    except (AttributeError, OSError, ValueError):
        return True


def _report(exc: BaseException, debug: bool) -> int:
    """An error as the one line the user sees (with the traceback under --debug)."""
    from assistant.errors import AssistantError

    if debug:
        import traceback

        print(_secret_free("".join(traceback.format_exception(exc))), file=sys.stderr, end="")
    if isinstance(exc, AssistantError):
        message = str(exc)
    else:
        message = f"unexpected {type(exc).__name__}: {exc} (run with --debug for details)"
    print(f"error: {_secret_free(message)}", file=sys.stderr)
    return EXIT_ERROR


if __name__ == "__main__":
    raise SystemExit(main())
