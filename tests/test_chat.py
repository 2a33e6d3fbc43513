"""The chat loop driven by transcripts (fake model, real index), and the real CLI end to end."""

from __future__ import annotations

import io
import os
import re
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, _user_cache, run_cli
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from pydantic import Field

from assistant.api import Assistant
from assistant.chat.render import PlainView, RichView
from assistant.chat.repl import complete, history_path, run_chat
from assistant.config import Settings
from assistant.errors import ModelError
from assistant.types import Answer, Response

SAFER = "SAFER: Risk-Constrained Sample-then-Filter in Large Language Models"
GLOWQ = "GlowQ: Group-Shared LOw-Rank Approximation for Quantized LLMs"
FOLLOW_UP = "What statistical method does it use to calibrate the sampling budget?"
STANDALONE = "What statistical method does SAFER use to calibrate the sampling budget?"
CLOPPER = re.compile(r"Clopper.Pearson")


class Recording(FakeListChatModel):
    """A fake model that keeps the prompts it was given and counts streams closed early."""

    prompts: list[str] = Field(default_factory=list)
    closed: int = 0
    fail_first: bool = False

    def _record(self, messages: list[Any]) -> None:
        self.prompts.append(str(messages[-1].content))
        if self.fail_first and len(self.prompts) == 1:
            raise ModelError("the model server failed mid-answer; the answer is incomplete")

    def _call(  # type: ignore[override]
        self, messages: list[Any], *args: Any, **kwargs: Any
    ) -> str:
        self._record(messages)
        return super()._call(messages, *args, **kwargs)

    def _stream(  # type: ignore[override]
        self, messages: list[Any], *args: Any, **kwargs: Any
    ) -> Iterator[Any]:
        self._record(messages)
        finished = False
        try:
            yield from super()._stream(messages, *args, **kwargs)
            finished = True
        finally:
            self.closed += not finished


def position(home: Path, minilm, question: str, title: str) -> int:
    """The [n] under which a paper is shown to the model for ``question``."""
    probe = Assistant(Settings(home=home), embeddings=minilm)
    return [s.title for s in probe.retrieve(question)].index(title) + 1


def chat(home: Path, minilm, replies: list[str], lines: list[str], **kwargs: Any
         ) -> tuple[int, str, Recording]:
    """Run the loop over ``lines``; the exit code, the transcript and the fake model."""
    llm = Recording(responses=replies or ["unused"], **kwargs)
    assistant = Assistant(Settings(home=home), llm=llm, embeddings=minilm)
    out: list[str] = []
    feed = iter(lines)

    def read_line(prompt: str) -> str:
        line = next(feed, None)
        if line is None:
            raise EOFError
        if line == "^C":
            raise KeyboardInterrupt
        return line

    code = run_chat(assistant, read_line, PlainView(out.append), intro=False)
    return code, "".join(out), llm


def safer_replies(home: Path, minilm) -> list[str]:
    first = position(home, minilm, "What is SAFER?", SAFER)
    second = position(home, minilm, STANDALONE, SAFER)
    return [
        f"SAFER is a two-stage risk control framework of abstention-aware sampling and "
        f"conformalized filtering [{first}].",
        STANDALONE,
        f"SAFER calibrates the sampling budget with the Clopper–Pearson exact method [{second}].",
    ]


def test_follow_up_is_rewritten_then_answered_with_the_cited_title(bundled_home, minilm) -> None:
    replies = safer_replies(bundled_home, minilm)
    code, out, llm = chat(bundled_home, minilm, replies, ["What is SAFER?", FOLLOW_UP])
    assert code == 0
    first, second = out.split(f"> {FOLLOW_UP}\n")
    assert first.startswith("> What is SAFER?\nSAFER is a two-stage risk control framework")
    assert f"[1] {SAFER} (arXiv 2510.10193)" in first
    assert second.startswith(f"↳ {STANDALONE}\n")
    assert CLOPPER.search(second) and f"[1] {SAFER}" in second
    assert re.search(r"\n\d+\.\d s · rewrite \d+\.\d s · first words after \d+\.\d s\n", second)
    # the rewrite prompt saw the earlier turn (answer without its [n] marks), the answer
    # prompt saw the standalone question
    assert len(llm.prompts) == 3
    assert "User: What is SAFER?\nAssistant: SAFER is a two-stage" in llm.prompts[1]
    assert "[1]" not in llm.prompts[1].split("Conversation:")[-1]
    assert STANDALONE in llm.prompts[2]


def test_standalone_questions_are_not_rewritten(bundled_home, minilm) -> None:
    glowq = position(bundled_home, minilm, "Which paper proposes GlowQ?", GLOWQ)
    replies = safer_replies(bundled_home, minilm)[:1] + [
        f"GlowQ caches a single shared right factor per input-sharing group [{glowq}]."]
    code, out, llm = chat(bundled_home, minilm, replies,
                          ["What is SAFER?", "Which paper proposes GlowQ?"])
    assert code == 0 and len(llm.prompts) == 2  # no model call for a rewrite
    assert "↳" not in out and f"[1] {GLOWQ}" in out


def test_a_new_topic_after_a_question_is_not_joined_to_it(bundled_home, minilm) -> None:
    """Seen in chat: this list question was sent as a follow-up to the SAFER question."""
    replies = safer_replies(bundled_home, minilm)[:1] + ["[1][2][3]"]
    new_topic = "Summarize every paper about diffusion models that use rewards."
    code, out, llm = chat(bundled_home, minilm, replies, ["What is SAFER?", new_topic])
    assert code == 0 and len(llm.prompts) == 2  # no model call for a rewrite
    assert "↳" not in out and "SAFER" not in llm.prompts[1].split("Question:")[-1]
    assert f"Question: {new_topic}" in llm.prompts[1]


FUSION = "GaussianFusion: Unified 3D Gaussian Representation for Multi-Modal Fusion Perception"
SSD_GS = "SSD-GS: Scattering and Shadow Decomposition for Relightable 3D Gaussian Splatting"


def test_which_of_these_is_asked_among_the_papers_of_the_previous_answer(bundled_home,
                                                                         minilm) -> None:
    """Seen in chat: "Which of these does relighting?" after a list of two papers was
    rewritten by the model into "Which of these papers uses 3D Gaussians?", losing its topic."""
    listing = "Which papers use 3D Gaussians?"
    fusion, ssd = (position(bundled_home, minilm, listing, t) for t in (FUSION, SSD_GS))
    replies = [(f"GaussianFusion fuses sensors with 3D Gaussians [{fusion}].\n"
                f"SSD-GS relights 3D Gaussian Splatting scenes [{ssd}]."),
               "SSD-GS is a physically-based relighting framework [1]."]
    code, out, llm = chat(bundled_home, minilm, replies,
                          [listing, "Which of these does relighting?"])
    assert code == 0 and len(llm.prompts) == 2  # no model call for a rewrite
    second = out.split("> Which of these does relighting?\n")[1]
    assert second.startswith("↳ Which paper does relighting?\n")
    assert "warning: asked of the 2 papers of the previous answer" in second
    assert re.search(r"\n\d+\.\d s · first words after", second)  # no rewrite time
    # the model was shown the paper that relights, of those two, and no other
    shown = re.findall(r"^\[\d+\] (.+)$", llm.prompts[1], re.MULTILINE)
    assert shown[0] == SSD_GS and set(shown) <= {FUSION, SSD_GS}
    assert f"[1] {SSD_GS}" in second


def test_a_nameless_question_the_previous_paper_answers_is_asked_of_it(bundled_home,
                                                                       minilm) -> None:
    """Seen with new users: "what are the four components?" right after an answer about
    SSD-GS was searched for alone and answered from another paper (or refused); SSD-GS, whose
    abstract names its four components, supports it best, so it is asked of SSD-GS."""
    first = position(bundled_home, minilm, "What is SSD-GS?", SSD_GS)
    replies = [f"SSD-GS is a physically-based relighting framework [{first}].",
               "SSD-GS decomposes reflectance into four components: diffuse, specular, shadow, "
               "and subsurface scattering [1]."]
    follow_up = "what are the four components?"
    code, out, llm = chat(bundled_home, minilm, replies, ["What is SSD-GS?", follow_up])
    assert code == 0 and len(llm.prompts) == 2  # no model call for a rewrite
    second = out.split(f"> {follow_up}\n")[1]
    assert second.startswith(f"↳ {follow_up} (follow-up to: What is SSD-GS?)\n")
    assert "warning: asked of the 1 paper of the previous answer" in second
    assert re.findall(r"^\[\d+\] (.+)$", llm.prompts[1], re.MULTILINE) == [SSD_GS]
    assert "subsurface scattering [1]" in second and f"[1] {SSD_GS}" in second


def test_how_do_i_cite_it_gives_the_papers_entry_from_the_index(bundled_home, minilm) -> None:
    """"how do I cite it?" after GlowQ, in the chat and through ``ask(history=...)`` (it was
    looked for before the rewrite there, and the model wrote an entry): rewritten with GlowQ,
    then answered with its link and BibTeX entry from the index."""
    first = position(bundled_home, minilm, "What is GlowQ?", GLOWQ)
    replies = [f"GlowQ is a group-shared low-rank approximation for quantized LLMs [{first}].",
               "Standalone: How do I cite GlowQ?"]
    code, out, llm = chat(bundled_home, minilm, replies, ["What is GlowQ?", "how do I cite it?"])
    assert code == 0 and len(llm.prompts) == 2  # the answer, the rewrite: no third call
    second = out.split("> how do I cite it?\n")[1]
    assert second.startswith("↳ How do I cite GlowQ?\n")
    assert f"{GLOWQ} [1]: https://arxiv.org/abs/2603.25385." in second
    assert "@inproceedings{" in second and f"[1] {GLOWQ}" in second
    llm = Recording(responses=["Standalone: How do I cite GlowQ?", "@misc{made_up}"])
    assistant = Assistant(Settings(home=bundled_home), llm=llm, embeddings=minilm)
    answer = assistant.ask("how do I cite it?", history=[("What is GlowQ?", replies[0])])
    assert answer.text.startswith(f"{GLOWQ} [1]: https://arxiv.org/abs/2603.25385.")
    assert "made_up" not in answer.text and len(llm.prompts) == 1


def test_a_filter_among_papers_retrieves_only_them_and_none_is_an_error(bundled_home,
                                                                        minilm) -> None:
    from assistant.errors import InputError
    from assistant.ingest.where import Filter

    assistant = Assistant(Settings(home=bundled_home), embeddings=minilm)
    ids = {s.title: s.paper_id for s in assistant.retrieve("Which papers use 3D Gaussians?")}
    two = frozenset({ids[FUSION], ids[SSD_GS]})
    found = assistant.retrieve("Which paper does relighting?", where=Filter().among(two))
    assert {s.paper_id for s in found} == two
    with pytest.raises(InputError, match="no indexed paper matches"):  # not Chroma's error
        assistant.retrieve("relighting", where=Filter().among(frozenset()))


def test_which_of_these_after_a_refusal_is_rewritten_as_before(bundled_home, minilm) -> None:
    """No paper in the previous answer: the follow-up goes to the model's rewrite."""
    replies = ["Which papers use speculative decoding on phones?"]
    code, out, llm = chat(bundled_home, minilm, replies,
                          ["Which papers use speculative decoding on phones?",
                           "Which of these run on phones?"])
    assert code == 0 and out.count("The indexed papers do not cover this question.") == 2
    assert llm.prompts[0].startswith("Rewrite the follow-up") and "previous answer" not in out


def test_ctrl_c_stops_the_answer_and_the_chat_goes_on(bundled_home, minilm) -> None:
    replies = safer_replies(bundled_home, minilm)
    llm = Recording(responses=[replies[0].replace("].", "]. SAFER uses a held-out calibration set "
                                                  "[1]."), replies[0]])
    assistant = Assistant(Settings(home=bundled_home), llm=llm, embeddings=minilm)
    out: list[str] = []
    feed = iter(["What is SAFER?", "What is SAFER?"])

    class Impatient(PlainView):
        """Presses Ctrl-C as soon as the first sentence is on screen, once."""

        pressed = False
        closed_when_stopped = -1

        def note(self, text: str) -> None:
            if "stopped" in text:
                Impatient.closed_when_stopped = llm.closed
            super().note(text)

        def answer(self, response: Response) -> Answer:
            if Impatient.pressed:
                return super().answer(response)
            Impatient.pressed = True
            self._write(next(iter(response)))
            raise KeyboardInterrupt

    def read_line(prompt: str) -> str:
        line = next(feed, None)
        if line is None:
            raise EOFError
        return line

    assert run_chat(assistant, read_line, Impatient(out.append), intro=False) == 0
    text = "".join(out)
    assert "stopped" in text
    assert Impatient.closed_when_stopped == 1  # the model was stopped before the prompt returned
    assert "held-out calibration" not in text  # the rest of the answer never came
    assert text.count(f"[1] {SAFER}") == 1  # the second question was answered in full
    assert text.index("stopped") < text.index(f"[1] {SAFER}")


def test_ctrl_c_at_the_prompt_clears_the_line_and_eof_ends(bundled_home, minilm) -> None:
    code, out, llm = chat(bundled_home, minilm, [], ["^C", "", "/k"])
    assert code == 0 and "5 papers retrieved per question" in out and llm.prompts == []


def test_model_error_is_one_line_and_the_chat_continues(bundled_home, minilm) -> None:
    replies = safer_replies(bundled_home, minilm)[:1]
    code, out, _ = chat(bundled_home, minilm, replies, ["What is SAFER?", "What is SAFER?"],
                        fail_first=True)
    assert code == 0
    assert out.count("error: the model server failed mid-answer") == 1
    assert f"[1] {SAFER}" in out.split("error:")[1]


def test_missing_index_ends_the_chat_with_exit_1(tmp_path: Path, minilm) -> None:
    code, out, _ = chat(tmp_path / "empty", minilm, [], ["What is SAFER?"])
    assert code == 1
    assert out.startswith("error: No index at") and "run `assistant index`" in out


def test_commands(bundled_home, minilm, tmp_path: Path) -> None:
    replies = safer_replies(bundled_home, minilm)
    replies[0] += " SAFER was trained on 4096 TPUs by Google DeepMind [1]."
    saved = tmp_path / "talk.md"
    lines = ["/help", "/sources", "/papers", "/paper 38", "/paper safer", "/paper model",
             "/paper nothing-like-this", "/k 0", "/k 2", "/model", "/model gpt-4o", "/bogus",
             "What is SAFER?", "/sources", "/reset", "/save", f"/save {saved}", "/quit",
             "What is SAFER?"]
    code, out, llm = chat(bundled_home, minilm, replies, lines)
    assert code == 0
    assert "/paper   <n or title> show one abstract" in out
    assert "no answer yet" in out
    assert " 38. " in out and "38 papers; /paper <n> shows one" in out
    assert "Clopper–Pearson exact method" in out  # /paper safer shows the abstract
    assert "Several papers match:" in out
    assert "error: no indexed paper has 'nothing-like-this' in its title" in out
    assert "error: /k takes a number of papers from 1 to 50" in out
    assert "2 papers retrieved per question" in out
    assert "Recording (embedded, run in this process)" in out
    assert "error: the embedded model is the only local one" in out
    assert "error: unknown command /bogus; /help lists the commands" in out
    sources = out.split("> What is SAFER?")[1]
    assert sources.count("   score ") == 2  # /k 2 applied
    assert f"1. {SAFER} (arXiv 2510.10193)  cited as [1]" in sources
    assert "removed by the checks: SAFER was trained on 4096 TPUs" in sources
    assert "4096" not in sources.split("removed by")[0]  # not in the answer shown
    assert "new conversation" in out and "error: /save needs a file name" in out
    assert f"saved 1 turn to {saved}" in out
    assert out.count("> What is SAFER?") == 1  # nothing is read after /quit
    markdown = saved.read_text()
    assert markdown.startswith("# Chat transcript")
    assert "## 1. What is SAFER?" in markdown
    assert f"- [1] {SAFER} (arXiv 2510.10193)" in markdown
    assert re.search(r"\n\*\d+\.\d s\*\n", markdown)


def test_reset_forgets_the_conversation(bundled_home, minilm) -> None:
    replies = safer_replies(bundled_home, minilm)
    replies = [replies[0], "The indexed papers do not cover this question."]
    code, out, llm = chat(bundled_home, minilm, replies, ["What is SAFER?", "/reset", FOLLOW_UP])
    assert code == 0
    assert len(llm.prompts) == 2 and "↳" not in out  # no rewrite after /reset
    assert FOLLOW_UP in llm.prompts[1]


def test_completion_of_commands_and_titles() -> None:
    titles = lambda: [SAFER, GLOWQ]  # noqa: E731
    assert sorted(complete("/pa", titles)) == [("/paper", -3), ("/papers", -3)]
    assert complete("/paper glow", titles) == [(GLOWQ, -4)]
    assert complete("/paper ", titles) == [(SAFER, 0), (GLOWQ, 0)]
    assert complete("what is", titles) == [] and complete("/k 3", titles) == []


def test_history_file_lives_under_home_or_the_user_data_folder(tmp_path: Path) -> None:
    import platformdirs

    assert history_path(Settings(home=tmp_path)) == tmp_path / "chat_history"
    assert history_path(Settings(home=None)) == Path(
        platformdirs.user_data_dir("assistant")) / "chat_history"


def test_terminal_reader_edits_completes_and_keeps_history(tmp_path: Path) -> None:
    import threading

    from prompt_toolkit.application import create_app_session
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    from assistant.chat.render import terminal_reader

    history = tmp_path / "data" / "chat_history"
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        read = terminal_reader(history, lambda text: complete(text, lambda: [SAFER, GLOWQ]))

        def keys(*parts: str) -> None:  # typed with pauses, as completion runs in the background
            def type_them() -> None:
                for part in parts:
                    time.sleep(0.3)
                    pipe.send_text(part)
            threading.Thread(target=type_them, daemon=True).start()

        pipe.send_text("What is\x1b\rSAFER?\r")  # Esc Enter: a new line in the same question
        assert read("> ") == "What is\nSAFER?"
        keys("/paper saf", "\t", "\r")
        assert read("> ") == f"/paper {SAFER}"
        pipe.send_text("\x1b[A\x1b[A\r")  # Up, Up
        assert read("> ") == "What is\nSAFER?"
        pipe.send_text("\x12/pap\r\r")  # Ctrl-R searches the history
        assert read("> ") == f"/paper {SAFER}"
        pipe.send_text("half typed\x03")
        with pytest.raises(KeyboardInterrupt):
            read("> ")
        pipe.send_text("\x04")
        with pytest.raises(EOFError):
            read("> ")
    assert f"+/paper {SAFER}" in history.read_text()


def test_rich_view_renders_markdown() -> None:
    from rich.console import Console

    buffer = io.StringIO()
    view = RichView(Console(file=buffer, width=60, force_terminal=False))
    answer = Answer("q", "Two **steps**:\n\n- sample [1]\n- filter [1]", (), (), False)
    response = Response(iter(["Two **steps**:\n\n", "- sample [1]\n", "- filter [1]", answer]))
    assert view.answer(response) is answer
    shown = buffer.getvalue()
    assert "**" not in shown and "• sample [1]" in shown and "• filter [1]" in shown


def test_piped_chat_without_an_index_exits_1() -> None:
    result = run_cli("chat", input="What is SAFER?\n")
    assert result.returncode == 1
    assert "run `assistant index`" in result.stderr and "Traceback" not in result.stderr


def test_chat_says_its_model_flag_applies_to_servers_only() -> None:
    """As `ask`, `mcp` and `serve` do: --model names a server's model, not the embedded one."""
    result = run_cli("chat", "--model", "gpt-4o-mini", input="What is SAFER?\n",
                     env={"OPENAI_BASE_URL": "", "OPENAI_API_KEY": ""})
    assert "--model applies to OpenAI-compatible servers" in result.stderr


# Real model, real CLI -------------------------------------------------------------------------

def _real_env(bundled_home: Path, tmp_path: Path) -> dict[str, str]:
    return {"ASSISTANT_HOME": str(tmp_path / "home"),
            "ASSISTANT_VECTORSTORE": str(bundled_home / "vectorstore"),
            "ASSISTANT_CACHE_DIR": str(_user_cache())}


PROMPT = re.escape("\x1b[0m>\x1b[0m")  # prompt_toolkit draws the prompt between colour resets


def _plain(screen: io.StringIO) -> str:
    """What the terminal showed, without its escape sequences."""
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen.getvalue())


@pytest.mark.llm
def test_terminal_chat_through_a_pseudo_terminal(bundled_home, tmp_path) -> None:
    import pexpect

    env = {**os.environ, **_real_env(bundled_home, tmp_path), "TERM": "xterm",
           "PROMPT_TOOLKIT_NO_CPR": "1"}
    # Ctrl-C must reach the chat as it would from a terminal, even when this test runs in a
    # background job, whose commands start with SIGINT ignored (and pass that on to children).
    child = pexpect.spawn(sys.executable, ["-m", "assistant", "chat"], cwd=str(ROOT), env=env,
                          encoding="utf-8", dimensions=(50, 200), timeout=300,
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    screen = io.StringIO()
    child.logfile_read = screen
    try:
        child.expect("38 papers indexed")
        child.expect(">")  # the prompt (its space comes after a colour reset)
        child.sendline("What is SAFER?")
        child.expect(re.escape(f"[1] {SAFER}"))
        child.expect(r"\d+\.\d s")
        child.send("/sour")
        time.sleep(0.5)
        child.send("\t")  # Tab completes the command
        time.sleep(0.5)
        child.sendline("")
        child.expect(r"score \d\.\d{4}")
        child.expect(PROMPT)  # the sources are listed and the prompt is back
        # a follow-up is read with the conversation: "it" is SAFER
        child.sendline(FOLLOW_UP)
        child.expect("Clopper.Pearson")
        child.expect(re.escape(f"[1] {SAFER}"))
        child.expect(PROMPT)
        child.sendline("What reward does DrPose maximize?")
        child.expect(["thinking", "reading the follow-up"])  # the answer is under way
        time.sleep(0.5)
        child.sendintr()  # Ctrl-C stops the answer and the prompt comes back
        child.expect("stopped")
        child.expect(">")
        child.sendline("/quit")
        child.expect(pexpect.EOF)
    except pexpect.TIMEOUT as exc:  # show what the terminal showed, not pexpect's buffer
        tail = _plain(screen)[-3000:]
        raise AssertionError(f"timed out; the screen ended with:\n{tail}") from exc
    finally:
        child.close()
    assert child.exitstatus == 0
    shown = _plain(screen)
    assert "SAFER" in shown and "/sources" in shown
    history = (tmp_path / "home" / "chat_history").read_text()
    assert "What is SAFER?" in history and "/sources" in history


def test_where_bib_and_save_bib(bundled_home, minilm, tmp_path: Path) -> None:
    import bibtexparser

    saved = tmp_path / "refs.bib"
    lines = ["/where", "/where year>=2027", "What is SAFER?", "/where colour=red", "/bib",
             "/where clear", '/where venue="ICLR 2026"', "What is SAFER?", "/bib",
             f"/save {saved}"]
    code, out, _ = chat(bundled_home, minilm, safer_replies(bundled_home, minilm), lines)
    assert code == 0
    assert "filter: none: answers come from every paper" in out
    assert "filter: year>=2027" in out
    assert "error: no indexed paper matches --where year>=2027" in out
    assert "error: unknown field 'colour' in 'colour=red'" in out
    assert "error: no cited papers yet" in out
    assert 'filter: venue="ICLR 2026"' in out
    assert "@inproceedings{" in out and "booktitle = {ICLR 2026}" in out
    assert f"saved 1 BibTeX entry to {saved}" in out
    library = bibtexparser.parse_string(saved.read_text())
    assert [e["title"] for e in library.entries] == [SAFER]
    assert not list(tmp_path.glob(".refs.bib.*"))  # the temporary file was renamed


def test_same_question_for_another_paper_is_the_previous_question_asked_of_it(bundled_home,
                                                                             minilm) -> None:
    """Seen with new users: "and for GaussianFusion?" after "What does SSD-GS decompose?" was
    answered as "tell me about GaussianFusion"; it is the previous question asked of
    GaussianFusion, swapped in without a model call, and shown as such."""
    question = "What does GaussianFusion decompose?"
    first = position(bundled_home, minilm, "What does SSD-GS decompose?", SSD_GS)
    second = position(bundled_home, minilm, question, FUSION)
    replies = [f"SSD-GS decomposes reflectance into four components [{first}].",
               f"GaussianFusion uses 3D Gaussians as a unified representation [{second}]."]
    code, out, llm = chat(bundled_home, minilm, replies,
                          ["What does SSD-GS decompose?", "and for GaussianFusion?"])
    assert code == 0 and len(llm.prompts) == 2  # two answers, no rewrite
    after = out.split("> and for GaussianFusion?\n")[1]
    assert after.startswith(f"↳ {question}\n")
    assert question in llm.prompts[1]


def test_a_few_words_pointing_at_the_paper_just_discussed_pass_no_support_gate(bundled_home,
                                                                              minilm) -> None:
    """"what optimizer?" after DIVERSE, asked with the question before it, supports DIVERSE
    too little to pass the support gate (0.38, the gate 0.39), and was refused before the model; the user pointed at DIVERSE, so it is
    asked of DIVERSE alone and the model's sentence is checked as any other."""
    llm = Recording(responses=["DIVERSE explores the Rashomon set with CMA-ES [1]."])
    assistant = Assistant(Settings(home=bundled_home), llm=llm, embeddings=minilm)
    history = [("tell me about DIVERSE", "DIVERSE is a framework for exploring the Rashomon "
                "set of deep neural networks [1].")]
    answer = assistant.ask("what optimizer?", history=history)
    assert len(llm.prompts) == 1 and not answer.abstained, answer.text
    assert [c.title.split(":")[0] for c in answer.citations] == ["DIVERSE"]
    assert "asked of the 1 paper of the previous answer" in answer.warnings
