"""Reference libraries in (BibTeX, RIS, CSL-JSON, OpenReview, arXiv), --where filters, and
BibTeX out, on export files made by hand in tests/data/formats/ (see its README)."""

from __future__ import annotations

import json
from pathlib import Path

import bibtexparser
import pytest
from bibtexparser import middlewares

from assistant.answer.references import bibtex_entry, citation_key, unique_keys
from assistant.errors import InputFileError
from assistant.ingest.formats import (
    NO_ABSTRACT,
    NOT_MATCHED,
    Reference,
    Summary,
    detect_format,
    iter_references,
    read_references,
)
from assistant.ingest.where import Filter, FilterError, chroma_metadata, parse

DATA = Path(__file__).parent / "data" / "formats"


def by_title(refs: list[Reference], start: str) -> Reference:
    return next(r for r in refs if r.title.startswith(start))


# --- BibTeX -----------------------------------------------------------------------------

def test_bibtex_reads_zotero_and_better_bibtex_entries_with_accents_decoded() -> None:
    refs, summary = read_references(DATA / "zotero.bib")
    assert (summary.format, summary.read, dict(summary.skipped)) == ("bibtex", 4, {NO_ABSTRACT: 1})
    drpose = refs[0]
    assert drpose.key == "muller2026DirectRewardFinetuning"  # the Better BibTeX citekey
    assert drpose.title == ("Direct Reward Fine-Tuning on Poses for Single Image to 3D Human "
                            "in the Wild")  # nested braces gone
    assert drpose.authors == ("Jana Müller", "Seo-yeon Kim")
    assert drpose.year == 2026
    assert drpose.venue == "The Fourteenth International Conference on Learning Representations"
    assert drpose.keywords == ("3D human reconstruction", "diffusion models", "reward fine-tuning")
    assert drpose.openreview_id == "kWZTPWrczs"
    assert drpose.abstract.startswith("Single-view 3D human reconstruction")
    assert drpose.raw_bibtex.startswith("@inproceedings{muller2026DirectRewardFinetuning,")
    assert (drpose.file, drpose.line, drpose.source) == ("zotero.bib", 3, "zotero.bib:3")


def test_bibtex_fields_of_every_kind() -> None:
    refs, _ = read_references(DATA / "zotero.bib")
    frozen = by_title(refs, "Frozen Policy Iteration")
    assert frozen.authors == ("Lucía García", "Seán O'Brien")
    assert "$Q^{\\pi}$" in frozen.title  # math kept as the corpus writes it
    assert frozen.arxiv_id == "2603.00716" and frozen.keywords == (
        "reinforcement learning", "linear function approximation")
    glowq = by_title(refs, "GlowQ")
    assert glowq.authors == ("Mads Sørensen", "Émilie Dupont", "Quantization Working Group")
    assert glowq.key == "Sorensen_2024_GlowQ" and glowq.doi == "10.5555/glowq.2024"
    assert glowq.venue == "Journal of Efficient ML"  # JabRef's capitalised field names
    private = by_title(refs, "Differentially Private")
    assert private.year == 2025  # BibLaTeX date
    assert private.venue == "International Conference on Learning Representations"
    assert "\\emph" not in private.abstract and "Euclidean distance" in private.abstract
    assert not any(r.title == "Avey-B" for r in refs)  # no abstract: skipped


def test_a_broken_bib_file_names_the_entry_line(tmp_path: Path) -> None:
    good = (DATA / "zotero.bib").read_text()
    broken = tmp_path / "broken.bib"
    broken.write_text(good + "\n@article{broken,\n  title = {Unclosed,\n  year = {2024}\n\n"
                      "@misc{next, title = {x}}\n")
    line = good.count("\n") + 2
    with pytest.raises(InputFileError, match=rf"broken\.bib:{line}: this entry cannot be parsed"):
        read_references(broken)


def test_duplicate_bib_keys_are_skipped_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "dup.bib"
    path.write_text("@misc{a, title={One}, abstract={First.}}\n"
                    "@misc{a, title={Two}, abstract={Second.}}\n")
    refs, summary = read_references(path)
    assert [r.title for r in refs] == ["One"]
    assert summary.skipped["duplicate citation key"] == 1


# --- RIS, CSL-JSON ----------------------------------------------------------------------

def test_ris_records_with_ab_or_n2_abstracts() -> None:
    refs, summary = read_references(DATA / "library.ris")
    assert (summary.read, dict(summary.skipped)) == (2, {NO_ABSTRACT: 1})
    diverse, tempflow = refs
    assert diverse.authors == ("Chidi Okafor", "Åsa Lindqvist")
    assert (diverse.year, diverse.venue, diverse.doi) == (2026, "ICLR 2026", "10.5555/diverse.2026")
    assert diverse.keywords == ("Rashomon set", "model multiplicity")
    assert (diverse.openreview_id, diverse.key, diverse.line) == (
        "kQjSUHC84V", "okafor2026diverse", 1)
    assert tempflow.title.startswith("TempFlow-GRPO")  # T1
    assert tempflow.abstract.startswith("Recent flow matching models")  # N2
    assert tempflow.authors == ("Wei Zhang", "Giulia Rossi")  # A1
    assert (tempflow.year, tempflow.venue) == (2025, "Transactions on Machine Learning Research")
    assert (tempflow.arxiv_id, tempflow.line) == ("2508.04324", 15)


def test_an_unclosed_ris_record_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "cut.ris"
    text = (DATA / "library.ris").read_text()
    path.write_text(text.rsplit("ER  -", 1)[0])  # the last record loses its end
    with pytest.raises(InputFileError, match=r"cut\.ris:26: this record has no end line"):
        read_references(path)


def test_csl_json_from_zotero() -> None:
    refs, summary = read_references(DATA / "zotero_csl.json")
    assert (summary.format, summary.read, dict(summary.skipped)) == (
        "csl-json", 2, {NO_ABSTRACT: 1})
    avey, human = refs
    assert avey.authors == ("Marc François", "The Avey Consortium")  # family/given, literal
    assert (avey.year, avey.venue, avey.arxiv_id, avey.key) == (
        2026, "arXiv", "2602.15814", "francois2026avey")
    assert avey.keywords == ("language models", "attention-free")
    assert (human.doi, human.openreview_id, human.year) == (
        "10.5555/humanscene.2026", "7eLE4mfEpz", 2026)
    assert human.key is None  # a Zotero item URI is not a citation key
    assert (avey.line, human.line) == (2, 30)


# --- OpenReview, arXiv ------------------------------------------------------------------

def test_openreview_api_v2_notes() -> None:
    refs, summary = read_references(DATA / "openreview_v2.jsonl")
    assert (summary.format, summary.read, dict(summary.skipped)) == (
        "openreview", 3, {NO_ABSTRACT: 1})  # the withdrawn one has no abstract
    drpose = refs[0]
    assert drpose.openreview_id == "kWZTPWrczs"
    assert drpose.url == "https://openreview.net/forum?id=kWZTPWrczs"
    assert (drpose.year, drpose.venue) == (2026, "ICLR 2026 Poster")
    assert drpose.authors == ("Jana Müller", "Seo-yeon Kim")
    assert drpose.keywords == ("3D human reconstruction", "reward fine-tuning")
    assert drpose.key == "muller2026direct" and drpose.raw_bibtex.startswith("@inproceedings{")


def test_openreview_api_v1_notes_in_a_json_list() -> None:
    refs, summary = read_references(DATA / "openreview_v1.json")
    assert (summary.format, summary.read) == ("openreview", 2)
    private, tempflow = refs
    assert (private.openreview_id, private.venue, private.year) == (
        "7qNbWQTV26", "ICLR 2026 Spotlight", 2026)
    assert private.authors == ("Lena Schön", "Hiro Nakamura")
    assert tempflow.keywords == ("flow models", "GRPO")  # a comma-separated string
    assert (tempflow.venue, tempflow.year) == (None, 2024)  # year from cdate


def test_arxiv_snapshot_records() -> None:
    refs, summary = read_references(DATA / "arxiv_slice.jsonl")
    assert (summary.format, summary.read) == ("arxiv", 5)
    frozen, glowq, avey, tempflow, human = refs
    assert frozen.authors == ("Lucía García", "Seán O'Brien")  # authors_parsed, LaTeX decoded
    assert glowq.authors == ("Mads Sørensen", "Émilie Dupont", "Quantization Working Group")
    assert "\n" not in frozen.title and frozen.abstract.startswith("We study")
    assert (frozen.arxiv_id, frozen.year, frozen.keywords) == (
        "2603.00716", 2026, ("cs.LG", "stat.ML"))
    assert (frozen.venue, frozen.url) == ("arXiv", "https://arxiv.org/abs/2603.00716")
    assert (tempflow.doi, tempflow.venue) == ("10.5555/tempflow.2025",
                                              "Trans. Mach. Learn. Res. 2025")
    assert avey.authors == ("Marc François",) and human.year == 2025


def test_arxiv_limit_and_filter_apply_while_reading(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    lines = (DATA / "arxiv_slice.jsonl").read_text().splitlines()
    path.write_text("\n".join(lines) + "\n{not json at all\n")  # reading must stop before it
    keep = parse(["year>=2026"])
    summary = Summary(path.name, "arxiv")
    refs = list(iter_references(path, summary, limit=2,
                                keep=lambda r: keep.matches(r.metadata())))
    assert [r.arxiv_id for r in refs] == ["2603.00716", "2603.25385"]
    assert summary.limited and summary.read == 2
    with pytest.raises(InputFileError, match=r"big\.jsonl:6: not valid JSON"):
        list(iter_references(path))
    summary = Summary(path.name, "arxiv")
    assert [r.arxiv_id for r in iter_references(
        path, summary, limit=3, keep=lambda r: keep.matches(r.metadata()))] == [
        "2603.00716", "2603.25385", "2602.15814"]
    assert summary.skipped == {}
    summary = Summary(path.name, "arxiv")
    old = parse(["year<2026"])
    assert len(list(iter_references(path, summary, limit=1,
                                    keep=lambda r: old.matches(r.metadata())))) == 1
    assert summary.skipped[NOT_MATCHED] == 3
    assert "3 did not match the filter" in summary.describe()


def test_an_empty_json_file_says_so(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("\n")
    with pytest.raises(InputFileError, match=r"empty\.jsonl: the file is empty"):
        read_references(path, fmt="arxiv")


def test_a_non_object_json_record_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "notes.json"
    path.write_text('[\n {"id": "a", "forum": "a", "content": {"abstract": {"value": "x"}}},\n'
                    ' 42\n]\n')
    with pytest.raises(InputFileError, match=r"notes\.json:3: expected a JSON object"):
        read_references(path)


# --- detection --------------------------------------------------------------------------

@pytest.mark.parametrize(("name", "fmt"), [
    ("zotero.bib", "bibtex"), ("library.ris", "ris"), ("zotero_csl.json", "csl-json"),
    ("openreview_v2.jsonl", "openreview"), ("openreview_v1.json", "openreview"),
    ("arxiv_slice.jsonl", "arxiv"),
])
def test_detect_format(name: str, fmt: str) -> None:
    assert detect_format(DATA / name) == fmt


def test_the_projects_own_layouts_are_left_to_the_corpus_reader(tmp_path: Path) -> None:
    own = tmp_path / "papers.jsonl"
    own.write_text(json.dumps({"title": "T", "abstract": "A.", "authors": ["X"]}) + "\n")
    assert detect_format(own) is None
    assert detect_format(tmp_path / "abstracts.txt") is None
    with pytest.raises(InputFileError, match="not a reference file"):
        read_references(own)


def test_an_arxiv_snapshot_named_json_is_still_json_lines(tmp_path: Path) -> None:
    path = tmp_path / "arxiv-metadata-oai-snapshot.json"  # the snapshot's real name
    path.write_text((DATA / "arxiv_slice.jsonl").read_text())
    assert detect_format(path) == "arxiv"
    assert read_references(path)[1].read == 5


# --- where ------------------------------------------------------------------------------

PAPER = {"title": "Frozen Policy Iteration", "year": 2025, "venue": "ICLR 2026 Poster",
         "authors": ["Lucía García", "Seán O'Brien"], "keywords": ["reinforcement learning"]}


@pytest.mark.parametrize(("exprs", "expected"), [
    (["year>=2025"], True), (["year > 2025"], False), (["year<2026", "year=2025"], True),
    (["year!=2025"], False), (["year<=2024"], False),
    (["venue=ICLR 2026 Poster"], True), (["venue=iclr 2026 poster"], False),
    (["venue~iclr"], True), (["venue!=NeurIPS"], True), (['venue="ICLR 2026 Poster"'], True),
    (["author~garcía"], True), (["author~smith"], False), (["author=Seán O'Brien"], True),
    (["author!=Seán O'Brien"], False), (["authors~brien"], True),
    (["keyword~REINFORCEMENT"], True), (["keyword=learning"], False),
    (["title~policy", "year>=2024"], True), (["title~policy", "year>=2026"], False), ([], True),
])
def test_where_matches(exprs: list[str], expected: bool) -> None:
    assert parse(exprs).matches(PAPER) is expected


def test_where_on_missing_fields() -> None:
    bare = {"title": "Untitled", "year": None, "venue": None, "authors": [], "keywords": []}
    assert not parse(["year>=2000"]).matches(bare)
    assert parse(["year!=2000", "venue!=ICLR", "author!=X"]).matches(bare)
    assert not parse(["venue~iclr"]).matches(bare)
    assert parse(["year=2025"]).matches({"year": "2025"})  # metadata read back as text


def test_where_matches_references_as_read() -> None:
    refs, _ = read_references(DATA / "zotero.bib")
    keep = parse(["year>=2025", "author~müller"])
    assert [r.key for r in refs if keep.matches(r.metadata())] == [
        "muller2026DirectRewardFinetuning"]


def test_chroma_where() -> None:
    assert parse([]).chroma_where() is None
    assert parse(["title~policy"]).chroma_where() is None  # applied in Python only
    assert parse(["year>=2024"]).chroma_where() == {"year": {"$gte": 2024}}
    assert parse(["year<2026", "venue!=NeurIPS", "author~x", "keyword=RL"]).chroma_where() == {
        "$and": [{"year": {"$lt": 2026}}, {"venue": {"$ne": "NeurIPS"}},
                 {"keywords": {"$contains": "RL"}}]}
    assert parse(["author!=A B"]).chroma_where() == {"authors": {"$not_contains": "A B"}}


def test_chroma_where_agrees_with_matches_on_a_real_collection() -> None:
    import chromadb

    papers = [PAPER, {**PAPER, "year": 2023, "venue": "NeurIPS", "authors": ["Ana B"]},
              {"title": "Bare"}]
    client = chromadb.EphemeralClient()
    collection = client.create_collection("where-test", embedding_function=None)
    collection.add(ids=["0", "1", "2"], embeddings=[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]],
                   metadatas=[{**chroma_metadata(p), "n": i, "paper_id": f"p{i}"}
                              for i, p in enumerate(papers)])
    for flt in [parse(e) for e in (
            ["year>=2024"], ["venue!=NeurIPS"], ["author=Ana B"], ["author!=Ana B"],
            ["year<2026", "keyword=reinforcement learning"], ["venue=NeurIPS"])] + [
            parse(["year>=2024"]).among(frozenset({"p1", "p2"})),
            Filter().among(frozenset({"p1"}))]:
        chroma = set(collection.get(where=flt.chroma_where())["ids"])
        python = {str(i) for i, p in enumerate(papers) if flt.matches({**p, "paper_id": f"p{i}"})}
        assert chroma == python, str(flt)
    client.delete_collection("where-test")


def test_a_filter_among_papers_keeps_only_them_and_its_own_conditions() -> None:
    """"Which of these …?" is asked among the previous answer's papers (by id)."""
    flt = parse(["year>=2025"]).among(frozenset({"a", "b"}))
    assert flt and str(flt) == "year>=2025 and one of 2 papers"
    assert flt.matches({**PAPER, "paper_id": "a"}) and flt.matches({**PAPER, "id": "b"})
    assert not flt.matches({**PAPER, "paper_id": "c"})
    assert not flt.matches({**PAPER, "year": 2024, "paper_id": "a"})
    assert flt.among(frozenset({"b", "c"})).papers == {"b"}  # both must hold
    assert Filter().among(frozenset({"a"})) and not Filter()
    assert not flt.among(frozenset({"c"})).matches({**PAPER, "paper_id": "c"})  # none left


def test_chroma_metadata_leaves_out_what_chroma_refuses() -> None:
    assert chroma_metadata({"title": "T", "year": "2025", "venue": None, "authors": [],
                            "keywords": ("a", "")}) == {"title": "T", "year": 2025,
                                                        "keywords": ["a"]}


@pytest.mark.parametrize(("expr", "message"), [
    ("citations>10", r"unknown field 'citations'.*fields: year, venue, title, author, keyword"),
    ("year>=twenty", r"year in 'year>=twenty' must be a whole number"),
    ("venue>ICLR", r"'>' in 'venue>ICLR' compares numbers and only 'year' is a number"),
    ("year~202", r"'~' in 'year~202' looks inside text"),
    ("venue=", r"no value after '='"),
    ("just words", (r"cannot read the filter 'just words': expected FIELD OP VALUE.*"
                    r"operators: = != > >= < <= ~")),
    ("year=>2024", r"must be a whole number"),
])
def test_where_errors_name_the_bad_part(expr: str, message: str) -> None:
    with pytest.raises(FilterError, match=message):
        parse([expr])
    assert issubclass(FilterError, ValueError)


# --- BibTeX out -------------------------------------------------------------------------

def _read_back(text: str) -> bibtexparser.Library:
    library = bibtexparser.parse_string(text, append_middleware=[
        middlewares.LatexDecodingMiddleware()])
    assert not library.failed_blocks, [b.error for b in library.failed_blocks]
    return library


def test_bibtex_out_keeps_original_entries_and_keys() -> None:
    refs, _ = read_references(DATA / "zotero.bib")
    library = _read_back("\n\n".join(bibtex_entry(r) for r in refs))
    assert [e.key for e in library.entries] == [r.key for r in refs]
    assert bibtex_entry(refs[2]) == refs[2].raw_bibtex.strip()  # JabRef's capitals untouched


def test_generated_entries_have_stable_keys_and_read_back() -> None:
    refs = [r for name in ("arxiv_slice.jsonl", "library.ris", "zotero_csl.json")
            for r in read_references(DATA / name)[0]]
    def made() -> str:  # as answers give them: keys unique over all (Assistant._bibtex_keys)
        keys = unique_keys(citation_key(r) for r in refs)
        return "\n\n".join(bibtex_entry(r, k) for r, k in zip(refs, keys, strict=True))
    text = made()
    assert text == made()  # stable
    library = _read_back(text)
    entries = {e.key: e for e in library.entries}
    assert list(entries)[:5] == ["garcia2026frozen", "sorensen2026glowq", "francois2026avey",
                                 "zhang2025tempflow", "haddad2025joint"]
    assert "zhang2025tempflowa" in entries  # the RIS copy of the same paper, de-duplicated
    assert "francois2026avey" in entries and "francois2026aveya" in entries
    frozen = entries["garcia2026frozen"]
    assert frozen.entry_type == "misc"
    assert frozen["title"] == refs[0].title  # accents and math come back as read
    assert frozen["author"] == "Lucía García and Seán O'Brien"
    assert (frozen["eprint"], frozen["archivePrefix"]) == ("2603.00716", "arXiv")
    diverse = entries["okafor2026diverse"]
    assert (diverse.entry_type, diverse["booktitle"]) == ("inproceedings", "ICLR 2026")
    assert diverse["doi"] == "10.5555/diverse.2026"
    tempflow = entries["zhang2025tempflow"]
    assert (tempflow.entry_type, tempflow["journal"]) == ("article",
                                                          "Trans. Mach. Learn. Res. 2025")


def test_made_keys_never_clash_across_answers(bundled_home, minilm) -> None:
    """Two bundled titles start with "Efficient" (no authors): answers citing one each, saved
    together (chat's /save refs.bib), give two keys, and a paper keeps its key."""
    from assistant.api import Assistant
    from assistant.config import Settings
    from assistant.types import Answer, Citation

    assistant = Assistant(Settings(home=bundled_home), embeddings=minilm)
    papers = [p for p in assistant.papers(abstracts=False) if p.title.startswith("Efficient")]
    assert len(papers) == 2 and len({citation_key(p) for p in papers}) == 1

    def cited(paper):
        return assistant._cite(Answer("q", "x [1].", (Citation(1, paper.id, paper.title, ""),),
                                      (), False))
    answers = [cited(p) for p in papers]
    keys = [e.key for e in _read_back("\n\n".join(a.bibtex() for a in answers)).entries]
    assert len(set(keys)) == 2 and all(k.startswith(citation_key(papers[0])) for k in keys)
    assert cited(papers[1]).bibtex() == answers[1].bibtex()


def test_special_characters_are_escaped_so_the_entry_reads_back() -> None:
    paper = {"title": "The {odd} 50% & #1 title_with $x^{2}$ in it", "authors": ["Zoë Ø'Łuk"],
             "year": 2024, "venue": "Proceedings of Things", "url": "https://x.org/a_{b}%20c"}
    entry = _read_back(bibtex_entry(paper)).entries[0]
    assert entry.key == "oluk2024odd"
    assert entry["title"] == paper["title"] and entry["author"] == "Zoë Ø'Łuk"
    assert entry["url"] == "https://x.org/a_%7Bb%7D%20c"


@pytest.mark.parametrize(("paper", "key"), [
    ({"title": "A Study of the Things", "authors": ["Jane Doe"], "year": 2026}, "doe2026study"),
    ({"title": "On $Q^{\\pi}$ Learning", "authors": ["Doe, Jane"]}, "doelearning"),
    ({"title": "Étude", "authors": []}, "anonetude"),
    ({"title": "Avey-B", "authors": ["Marc François"], "year": 2026}, "francois2026avey"),
])
def test_citation_keys(paper: dict, key: str) -> None:
    assert citation_key(paper) == key
