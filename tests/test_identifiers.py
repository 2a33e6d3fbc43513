"""Papers a question gives by arXiv id or link, OpenReview id or link, or DOI
(assistant/text/identifiers.py): read as the indexed paper's title."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from assistant.text.identifiers import with_titles


@dataclass
class Paper:
    title: str
    arxiv_id: str | None = None
    openreview_id: str | None = None
    doi: str | None = None


PAPERS = [Paper("DrPose", "2603.02619", "kWZTPWrczs"), Paper("GFlowNet", "2603.01047"),
          Paper("Old One", "cs/0101001", doi="10.1145/3583780.3615012"),
          # as a BibTeX file may give them: a version, a prefix, a link; an id in lower case
          Paper("Lancet", "arXiv:2601.00001v2", "7fwd3vjipk",
                doi="https://doi.org/10.1016/S0140-6736(20)30183-5")]


@pytest.mark.parametrize(("question", "read"), [
    ("what is arXiv 2603.02619 about?", 'what is "DrPose" about?'),
    ("arxiv:2603.02619v3 summary please", '"DrPose" summary please'),
    ("https://arxiv.org/abs/2603.01047v2 - summarize this paper", '"GFlowNet" - summarize this paper'),
    ("https://arxiv.org/pdf/2603.01047.pdf: what does it do?", '"GFlowNet": what does it do?'),
    ("explain arxiv.org/abs/2603.02619.", 'explain "DrPose".'),
    ("what is 2603.02619?", 'what is "DrPose"?'),  # bare, but an id the index has
    ("what does openreview kWZTPWrczs propose?", 'what does "DrPose" propose?'),
    ("https://openreview.net/forum?id=kWZTPWrczs&noteId=x what is this?", '"DrPose" what is this?'),
    ("is arXiv cs/0101001 any good?", 'is "Old One" any good?'),
    ("see https://doi.org/10.1145/3583780.3615012.", 'see "Old One".'),
    ("DOI: 10.1145/3583780.3615012 - what's the method?", '"Old One" - what\'s the method?'),
    ("arxiv.org/abs/2603.02619?context=cs what is it?", '"DrPose" what is it?'),
    ("https://openreview.net/forum?noteId=x&id=kWZTPWrczs what?", '"DrPose" what?'),
    ("what is arXiv 2601.00001?", 'what is "Lancet"?'),
    ("doi 10.1016/s0140-6736(20)30183-5 in short", '"Lancet" in short'),
    ("see https://doi.org/10.1016/S0140-6736(20)30183-5/ please", 'see "Lancet" please'),
    ("what is 7fwd3vjipk?", 'what is "Lancet"?'),
])
def test_an_identifier_of_an_indexed_paper_is_read_as_its_title(question: str, read: str) -> None:
    asked, notes = with_titles(question, lambda: PAPERS)
    assert asked == read
    assert len(notes) == 1 and notes[0].startswith("read ") and notes[0].endswith(read.split('"')[1] + '"')


@pytest.mark.parametrize(("question", "note"), [
    ("arXiv:2603.99999 summary please", "arXiv 2603.99999 is not in the index"),
    ("https://openreview.net/forum?id=AbCdEfGhIj what is it?", "OpenReview AbCdEfGhIj is not in the index"),
    ("doi:10.1234/abc.def?", "DOI 10.1234/abc.def is not in the index"),
])
def test_an_identifier_the_index_does_not_have_is_reported_and_left_as_it_is(question, note) -> None:
    assert with_titles(question, lambda: PAPERS) == (question, [note])


@pytest.mark.parametrize("question", [
    "a reward of 1234.5678?", "what does GlowQ do?", "how does DrPose15K compare?",
    "is 2603.00001 a prime?",  # bare and not an indexed id: a number
    "does the openreview discussion mention baselines?", "is MobileNetV3 used?",
])
def test_what_is_not_an_identifier_is_left_alone(question: str) -> None:
    assert with_titles(question, lambda: PAPERS) == (question, [])


def test_the_index_is_read_only_when_the_question_may_hold_an_identifier() -> None:
    def unread() -> list[Paper]:
        raise AssertionError("the index was read")

    assert with_titles("what does GlowQ do to quantized LLMs?", unread) == (
        "what does GlowQ do to quantized LLMs?", [])


def test_an_imported_records_url_or_note_gives_its_ids() -> None:
    """The same reading of links as in questions gives a BibTeX or JSON record its ids."""
    from assistant.text.identifiers import written_ids

    assert written_ids("arXiv preprint arXiv:2603.02619v2") == {"arxiv_id": "2603.02619"}
    assert written_ids("https://openreview.net/forum?id=kWZTPWrczs, see "
                       "https://arxiv.org/pdf/cs/0101001.pdf") == {
        "arxiv_id": "cs/0101001", "openreview_id": "kWZTPWrczs"}
    assert written_ids("published in Nature 2024") == {}
