"""Indexing into a real Chroma folder: idempotent, changes and removals, lock, crashes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import ClassVar

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from assistant.config import IndexSettings, Settings
from assistant.errors import IndexBusyError, IndexMissingError
from assistant.index.indexing import build_index
from assistant.index.store import lock_path, open_store, writer_lock


def write_corpus(folder: Path, abstracts: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "papers.txt"
    path.write_text("Test Papers\n\n" + "\n\n".join(abstracts) + "\n")
    return path


def abstracts(n: int, salt: str = "") -> list[str]:
    return [
        f"We propose Method{i}{salt}, which improves task {i} by {i % 17} points. "
        f"It uses dataset D{i} and a loss for topic {i * 3}. Experiments confirm the gains."
        for i in range(n)
    ]


def chunked(settings: Settings, tokens: int, overlap: int) -> Settings:
    """``settings`` with another chunk size, below the users' minimum too (short test abstracts
    need small chunks to be cut at all): not validated, on purpose."""
    index = IndexSettings.model_construct(chunk_tokens=tokens, chunk_overlap=overlap)
    return settings.model_copy(update={"index": index})


def chunk_state(settings: Settings, embeddings) -> dict[str, tuple]:
    found = open_store(settings, embeddings).collection.get(include=["metadatas", "documents"])
    return {i: (m["paper_hash"], d) for i, m, d in zip(found["ids"], found["metadatas"], found["documents"])}


def test_reindex_unchanged_writes_nothing(settings: Settings, fake_embeddings, tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "c", abstracts(12))
    first = build_index(settings, [corpus], embeddings=fake_embeddings)
    assert (first.papers, first.added, first.updated, first.removed) == (12, 12, 0, 0)
    before = chunk_state(settings, fake_embeddings)

    calls = []
    class Counting(DeterministicFakeEmbedding):
        name: ClassVar[str] = "DeterministicFakeEmbedding"  # the same model, counted

        def embed_documents(self, texts):
            calls.append(len(texts))
            return super().embed_documents(texts)

    again = build_index(settings, [corpus], embeddings=Counting(size=384))
    assert (again.added, again.updated, again.removed, again.unchanged) == (0, 0, 0, 12)
    assert calls == []
    assert again.chunks == first.chunks
    assert chunk_state(settings, fake_embeddings) == before


def test_new_chunk_size_or_overlap_rechunks_every_paper(settings, fake_embeddings,
                                                         tmp_path) -> None:
    corpus = write_corpus(tmp_path / "c", abstracts(5))
    small = chunked(settings, 24, 0)
    first = build_index(small, [corpus], embeddings=fake_embeddings)
    assert first.added == 5

    large = chunked(settings, 200, 0)
    again = build_index(large, [corpus], embeddings=fake_embeddings)
    assert (again.added, again.updated, again.unchanged) == (0, 5, 0)
    assert (first.chunks, again.chunks) == (10, 5)  # one chunk per abstract now, none left over
    found = open_store(settings, fake_embeddings).collection.get(include=["metadatas"])
    assert {m["chunking"] for m in found["metadatas"]} == {"200/0+25"}

    # The overlap alone changes too: the chunks are the same texts, re-stamped.
    overlap = chunked(settings, 200, 16)
    third = build_index(overlap, [corpus], embeddings=fake_embeddings)
    assert (third.updated, third.unchanged, third.chunks) == (5, 0, 5)
    fourth = build_index(overlap, [corpus], embeddings=fake_embeddings)
    assert (fourth.updated, fourth.unchanged) == (0, 5)


@pytest.mark.parametrize("measured", [False, True], ids=["characters", "embedder-lengths"])
def test_chunks_are_embedded_by_length_and_each_paper_written_once_whole(
    settings, tmp_path, monkeypatch, measured
) -> None:
    import assistant.index.sync as sync_module
    from assistant.ingest.corpus import load_papers
    from assistant.ingest.tokens import count_tokens, encoding

    monkeypatch.setattr(sync_module, "_BATCH", 4)
    monkeypatch.setattr(sync_module, "_WINDOW", 12)
    long_ones = [" ".join(f"Sentence {j} of paper {i} reports result R{i}x{j}."
                          for j in range(i % 4 * 9 + 1))
                 for i in range(20)]
    papers = load_papers([write_corpus(tmp_path / "c", long_ones)])
    calls: list[list[str]] = []

    class Recording(DeterministicFakeEmbedding):
        name: ClassVar[str] = "DeterministicFakeEmbedding"

        def embed_documents(self, texts):
            calls.append(list(texts))
            return super().embed_documents(texts)

    class Measuring(Recording):
        def run_lengths(self, texts):  # a model whose cost runs against the text's length
            return [10_000 - len(t) for t in texts]

    store = open_store(settings, (Measuring if measured else Recording)(size=384), create=True)
    writes: list[list[str]] = []
    threads: set[str] = set()

    class Spy:
        def __getattr__(self, name):
            return getattr(collection, name)

        def upsert(self, **kw):
            import threading

            writes.append(kw["ids"])
            threads.add(threading.current_thread().name)
            return collection.upsert(**kw)

    collection = store.collection
    store.collection = Spy()
    enc = encoding(settings.storage.cache_path())
    seen = []
    report = sync_module.index_papers(store, papers, lambda t: count_tokens(enc, t),
                                       chunk_tokens=32, chunk_overlap=0,
                                       progress=lambda d, t: seen.append((d, t)))
    chunks = sum(len(w) for w in writes)
    assert report.chunks == chunks > len(papers)  # several chunks for most papers
    assert all(len(c) <= 4 for c in calls)
    assert [d for d, _ in seen] == sorted({d for d, _ in seen}) and seen[-1] == (chunks, chunks)
    # Within each window (whole papers, at least 12 chunks), calls go from short to long texts,
    # as the embedder measures them when it can.
    lengths = [[10_000 - len(t) if measured else len(t) for t in c] for c in calls]
    ascending = sum(1 for a, b in zip(lengths, lengths[1:]) if max(a) <= min(b))
    assert ascending >= len(calls) - (chunks // 12 + 1)
    # Every paper's chunks are written in one call, never split over two.
    found = collection.get(include=["metadatas"])
    paper_of = dict(zip(found["ids"], (m["paper_id"] for m in found["metadatas"])))
    calls_per_paper: dict[str, set[int]] = {}
    for n, w in enumerate(writes):
        for i in w:
            calls_per_paper.setdefault(paper_of[i], set()).add(n)
    assert len(calls_per_paper) == len(papers)
    assert all(len(v) == 1 for v in calls_per_paper.values())
    assert len(writes) > 1  # written as papers complete, not all at the end
    assert threads == {"assistant-index-writer"}  # while the embedder goes on


def test_paper_fields_live_on_the_first_chunk_and_reads_restore_them(settings, fake_embeddings,
                                                                     tmp_path) -> None:
    small = chunked(settings, 32, 0)
    corpus = write_corpus(tmp_path / "c", [a + " " + a for a in abstracts(4)])
    first = build_index(small, [corpus], embeddings=fake_embeddings)
    store = open_store(small, fake_embeddings)
    raw = store.collection.get(include=["metadatas"])
    later = [i for i, m in zip(raw["ids"], raw["metadatas"]) if m["chunk"] > 0]
    assert first.chunks >= 2 * first.papers and later
    for chunk_id, meta in zip(raw["ids"], raw["metadatas"]):
        if meta["chunk"] == 0:
            assert {"title", "n_chunks", "slot", "source"} <= set(meta)
            assert "abstract" not in meta  # the chunks hold it (next test)
        else:  # six keys, not twelve: Chroma writes a row per key
            assert set(meta) == {"paper_id", "chunk", "tokens", "paper_hash", "chunking", "overlap"}

    ids, _, metas = store.all_chunks()
    titles = {p.id: p.title for p in store.papers()}
    assert len(ids) == first.chunks
    assert all(m["title"] == titles[m["paper_id"]] and m["n_chunks"] >= 2 for m in metas)
    assert all("abstract" not in m for m in metas if m["chunk"] > 0)
    got = store.chunks([later[0], f"{raw['metadatas'][0]['paper_id']}:0", "nope:3"])
    assert set(got) == {later[0], f"{raw['metadatas'][0]['paper_id']}:0"}
    assert got[later[0]][1]["title"] == titles[got[later[0]][1]["paper_id"]]

    # A store written before schema 2 carries the fields on every chunk; they are kept as read.
    store.collection.update(ids=[later[0]], metadatas=[{"title": "Written whole"}])
    assert store.chunks([later[0]])[later[0]][1]["title"] == "Written whole"

    # A paper whose first chunk is gone is incomplete, and the next run writes it again.
    victim = got[later[0]][1]["paper_id"]
    store.collection.delete(ids=[f"{victim}:0"])
    again = build_index(small, [corpus], embeddings=fake_embeddings)
    assert (again.updated, again.unchanged, again.chunks) == (1, 3, first.chunks)


def test_abstracts_are_the_chunks_joined_and_kept_whole_where_they_are_not(
        settings, fake_embeddings, tmp_path, monkeypatch) -> None:
    import assistant.index.store as store_module
    import assistant.index.sync as sync_module
    from assistant.ingest.corpus import load_papers

    small = chunked(settings, 24, 12)
    texts = [a + ' It cites (see Sec. 3.) And says "it works." ' + a for a in abstracts(3)]
    corpus = write_corpus(tmp_path / "c", texts)
    build_index(small, [corpus], embeddings=fake_embeddings)
    store = open_store(small, fake_embeddings)
    expected = {p.id: p.abstract for p in load_papers([corpus])}
    raw = store.collection.get(include=["metadatas"])
    assert any(m.get("overlap", 0) > 0 for m in raw["metadatas"])  # chunks that repeat
    assert not any("abstract" in m for m in raw["metadatas"])
    assert {p.id: p.abstract for p in store.papers()} == expected
    assert all(store.abstract(pid) == text for pid, text in expected.items())

    # A chunk gone: no abstract rather than a part of one.
    victim = next(iter(expected))
    store.collection.delete(ids=[f"{victim}:1"])
    assert store.abstract(victim) is None
    assert {p.id: p.abstract for p in store.papers()}[victim] == ""

    # Chunked again another way, over the same chunk ids: no chunk keeps the repeat it had.
    build_index(small, [corpus], embeddings=fake_embeddings)  # the missing chunk back
    for tokens, overlap in [(30, 12), (24, 0), (24, 12)]:
        again = chunked(small, tokens, overlap)
        assert build_index(again, [corpus], embeddings=fake_embeddings).updated == 3
        assert {p.id: p.abstract for p in store.papers()} == expected, (tokens, overlap)
        assert all(store.abstract(pid) == text for pid, text in expected.items())
    assert {p.id: p.abstract for p in store.papers(abstracts=False)} == dict.fromkeys(expected, "")

    # Where the chunks would not join back to the text, the first chunk keeps it whole, as
    # every store before schema 3 did, and it is read from there.
    monkeypatch.setattr(store_module, "join_chunks", lambda texts, overlaps: "")
    monkeypatch.setattr(sync_module, "join_chunks", lambda texts, overlaps: "")
    rebuilt = build_index(chunked(small, small.index.chunk_tokens, 11), [corpus],
                          embeddings=fake_embeddings)
    assert rebuilt.updated == 3  # chunked another way: written again
    raw = store.collection.get(where={"chunk": 0}, include=["metadatas"])
    assert {m["paper_id"]: m["abstract"] for m in raw["metadatas"]} == expected
    assert all(store.abstract(pid) == text for pid, text in expected.items())


def test_changed_abstract_is_replaced_and_removed_paper_leaves(settings, fake_embeddings, tmp_path) -> None:
    texts = abstracts(6)
    corpus = write_corpus(tmp_path / "c", texts)
    build_index(settings, [corpus], embeddings=fake_embeddings)
    long_text = texts[0] + " " + " ".join(f"Extra finding {i} holds on benchmark B{i}." for i in range(40))
    write_corpus(tmp_path / "c", [long_text, *texts[1:5]])  # one changed, one removed
    report = build_index(settings, [corpus], embeddings=fake_embeddings)
    assert (report.added, report.updated, report.removed, report.unchanged) == (0, 1, 1, 4)
    store = open_store(settings, fake_embeddings)
    ids = {p.id for p in store.papers()}
    assert len(ids) == 5
    documents = store.collection.get(include=["documents"])["documents"]
    assert not any(texts[5][:30] in d for d in documents)
    assert any("Extra finding 39" in d for d in documents)


def test_new_title_for_same_abstract_updates_in_place(settings, fake_embeddings, tmp_path) -> None:
    folder = tmp_path / "c"
    write_corpus(folder, abstracts(3))
    build_index(settings, [folder], embeddings=fake_embeddings)
    (folder / "titles.tsv").write_text("file\tordinal\ttitle\npapers.txt\t2\tMethod1: a named paper\n")
    report = build_index(settings, [folder], embeddings=fake_embeddings)
    assert (report.added, report.updated, report.unchanged) == (0, 1, 2)
    titles = {p.title for p in open_store(settings, fake_embeddings).papers()}
    assert "Method1: a named paper" in titles


def test_bad_file_leaves_the_index_untouched(settings, fake_embeddings, tmp_path) -> None:
    good = write_corpus(tmp_path / "c", abstracts(4))
    build_index(settings, [good], embeddings=fake_embeddings)
    before = chunk_state(settings, fake_embeddings)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"abstract": "fine"}\n{oops\n')
    with pytest.raises(Exception, match="bad.jsonl:2"):
        build_index(settings, [good, bad], embeddings=fake_embeddings)
    assert chunk_state(settings, fake_embeddings) == before


def test_second_indexer_is_refused(settings, fake_embeddings, tmp_path) -> None:
    corpus = write_corpus(tmp_path / "c", abstracts(2))
    build_index(settings, [corpus], embeddings=fake_embeddings)
    with writer_lock(lock_path(settings)):
        with pytest.raises(IndexBusyError, match="another `assistant index`"):
            build_index(settings, [corpus], embeddings=fake_embeddings)
    assert build_index(settings, [corpus], embeddings=fake_embeddings).unchanged == 2


def test_second_indexer_process_fails_fast(settings, fake_embeddings, tmp_path) -> None:
    corpus = write_corpus(tmp_path / "c", abstracts(2))
    build_index(settings, [corpus], embeddings=fake_embeddings)
    with writer_lock(lock_path(settings)):
        started = time.monotonic()
        result = subprocess.run(
            [sys.executable, "-m", "assistant", "index", str(corpus)], capture_output=True,
            text=True, env={**os.environ, "ASSISTANT_HOME": str(settings.storage.home)},
            timeout=300,
        )
        elapsed = time.monotonic() - started
    assert result.returncode == 1
    assert "another `assistant index` is writing" in result.stderr
    assert elapsed < 120  # it did not wait for the lock


def test_other_embedding_model_is_refused(settings, tmp_path) -> None:
    corpus = write_corpus(tmp_path / "c", abstracts(2))
    build_index(settings, [corpus], embeddings=DeterministicFakeEmbedding(size=384))

    class Other(DeterministicFakeEmbedding):
        name: ClassVar[str] = "other-model"

    with pytest.raises(IndexMissingError, match="assistant index --rebuild"):
        open_store(settings, Other(size=384))
    with pytest.raises(IndexMissingError, match="assistant index --rebuild"):
        build_index(settings, [corpus], embeddings=Other(size=384))
    report = build_index(settings, [corpus], embeddings=Other(size=384), rebuild=True)
    assert report.added == 2


def test_dimension_mismatch_is_refused(settings, tmp_path) -> None:
    corpus = write_corpus(tmp_path / "c", abstracts(2))
    build_index(settings, [corpus], embeddings=DeterministicFakeEmbedding(size=384))

    class Wider(DeterministicFakeEmbedding):  # same model name, other vector size
        name: ClassVar[str] = "DeterministicFakeEmbedding"
        dimension: ClassVar[int] = 768

    with pytest.raises(IndexMissingError, match="384-dimensional"):
        open_store(settings, Wider(size=768))


def test_missing_index_says_to_run_index(settings, fake_embeddings) -> None:
    with pytest.raises(IndexMissingError, match="run `assistant index`"):
        open_store(settings, fake_embeddings)


KILLABLE = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from typing import ClassVar
    from langchain_core.embeddings import DeterministicFakeEmbedding
    from assistant.config import IndexSettings, Settings
    from assistant.index.indexing import build_index

    class Slow(DeterministicFakeEmbedding):
        name: ClassVar[str] = "DeterministicFakeEmbedding"

        def embed_documents(self, texts):
            time.sleep(0.3)
            return super().embed_documents(texts)

    def progress(done, total):
        print(done, total, flush=True)

    from chromadb.api.models.Collection import Collection
    real_upsert = Collection.upsert

    def upsert(self, *args, **kwargs):  # Chroma's writes run on a thread of their own
        out = real_upsert(self, *args, **kwargs)
        print("written", flush=True)
        return out

    Collection.upsert = upsert
    build_index(Settings(home=Path(sys.argv[1])), [Path(sys.argv[2])],
                embeddings=Slow(size=384), progress=progress)
    """
)


def test_kill_9_mid_index_then_rerun_is_consistent(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "c", abstracts(900))
    home = tmp_path / "killed"
    process = subprocess.Popen(
        [sys.executable, "-c", KILLABLE, str(home), str(corpus)], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    embedded = None
    for line in process.stdout:  # kill it once a write is done, before the last is
        if line.strip() == "written":
            break
        embedded = line.split()
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    assert embedded and int(embedded[0]) < int(embedded[1])

    from chromadb.api.client import SharedSystemClient

    SharedSystemClient.clear_system_cache()
    fake = DeterministicFakeEmbedding(size=384)
    resumed = build_index(Settings(home=home), [corpus], embeddings=fake)
    clean = build_index(Settings(home=tmp_path / "clean"), [corpus], embeddings=fake)
    assert resumed.unchanged > 0  # the killed run's work was kept
    assert resumed.chunks == clean.chunks
    ids = open_store(Settings(home=home), fake).collection.get()["ids"]
    assert len(ids) == len(set(ids)) == clean.chunks
    again = build_index(Settings(home=home), [corpus], embeddings=fake)
    assert (again.added, again.updated, again.unchanged) == (0, 0, 900)


def test_reads_of_the_whole_store_are_paged(settings, fake_embeddings, tmp_path) -> None:
    # Chroma fails an unpaged read of about 32,000 chunks ("too many SQL variables"); paged
    # reads must return every record exactly once, whatever the page size.
    build_index(settings, [write_corpus(tmp_path / "c", abstracts(12))], embeddings=fake_embeddings)
    store = open_store(settings, fake_embeddings)
    whole = store.collection.get(include=["metadatas", "documents"])
    for page in (1, 5, 10_000):
        paged = store.get_all(["metadatas", "documents"], page=page)
        assert sorted(paged["ids"]) == sorted(whole["ids"]) and len(paged["ids"]) == len(set(paged["ids"]))
        assert len(paged["documents"]) == len(paged["metadatas"]) == len(whole["ids"])


class _Recording:
    """A collection stand-in that records each write and the thread it ran on."""

    def __init__(self, fail_on: int | None = None, hold=None) -> None:
        self.writes: list[tuple[str, list[str]]] = []
        self.fail_on, self.hold = fail_on, hold

    def upsert(self, **write):
        import threading

        if self.hold is not None and not self.writes:
            assert self.hold.wait(timeout=10)
        if len(self.writes) + 1 == self.fail_on:
            self.writes.append(("failed", write["ids"]))
            raise RuntimeError("disk full")
        self.writes.append((threading.current_thread().name, write["ids"]))


def test_writes_run_in_order_on_their_own_thread_while_indexing_goes_on() -> None:
    import threading

    from assistant.index.sync import _Writer

    released = threading.Event()
    collection = _Recording(hold=released)
    with _Writer(collection) as writer:
        writer.upsert(ids=["a"])  # held until this thread goes on: it must not wait for it
        writer.upsert(ids=["b"])
        released.set()
        for name in "cde":
            writer.upsert(ids=[name])
    assert [ids for _, ids in collection.writes] == [["a"], ["b"], ["c"], ["d"], ["e"]]
    assert {thread for thread, _ in collection.writes} == {"assistant-index-writer"}

    inline = _Recording()
    with _Writer(inline, background=False) as writer:
        writer.upsert(ids=["a"])
        assert inline.writes == [(threading.current_thread().name, ["a"])]


def test_a_failed_write_stops_the_rest_and_is_raised_in_the_indexing_thread() -> None:
    from assistant.index.sync import _Writer

    collection = _Recording(fail_on=2)
    with pytest.raises(RuntimeError, match="disk full"):
        with _Writer(collection) as writer:
            for name in "abcdefgh":
                writer.upsert(ids=[name])
    assert [ids for _, ids in collection.writes] == [["a"], ["b"]]  # nothing after the failure

    late = _Recording(fail_on=1)
    with pytest.raises(RuntimeError, match="disk full"):  # raised on leaving, if not before
        with _Writer(late) as writer:
            writer.upsert(ids=["a"])


def test_an_interrupted_indexer_drops_the_waiting_writes_and_finishes_the_one_under_way() -> None:
    import threading

    from assistant.index.sync import _Writer

    released = threading.Event()
    collection = _Recording(hold=released)
    with pytest.raises(KeyboardInterrupt):
        with _Writer(collection) as writer:
            writer.upsert(ids=["a"])  # under way, held
            while collection.hold is not None and writer._queue.qsize():  # noqa: SLF001
                time.sleep(0.01)  # the writer took it
            writer.upsert(ids=["b"])
            writer.upsert(ids=["c"])
            threading.Timer(0.2, released.set).start()
            raise KeyboardInterrupt
    assert [ids for _, ids in collection.writes] == [["a"]]
