"""The lexical index: bm25s's ranked search against a plain scorer that reads every document,
its saved form, and the crude stems the grounding checks count on."""

from __future__ import annotations

import math
import re
from collections import Counter
from itertools import pairwise

import pytest
import Stemmer
from hypothesis import given, settings
from hypothesis import strategies as st

from assistant.retrieve import lexical
from assistant.retrieve.lexical import BM25
from assistant.text.stems import STOP_WORDS, stem, terms

# Inflected forms that Snowball folds together ("policy", "policies") and stop words the
# index must not count ("the", "paper", "proposed").
WORDS = ["diffusion", "policy", "policies", "graph", "graphs", "token", "reward", "rewards",
         "quantized", "quantization", "lemma", "agent", "agents", "calibrated", "calibration",
         "kernel", "prior", "the", "paper", "proposed"]


def snowball(text: str) -> list[str]:
    """Words as the index should see them: lower-cased, two or more word characters, stop
    words dropped, then Snowball's English stem."""
    words = [w for w in re.findall(r"\w\w+", text.lower()) if w not in STOP_WORDS]
    return Stemmer.Stemmer("english").stemWords(words)


def reference(texts: list[str], query: str, k1: float = 1.5, b: float = 0.75) -> list[float]:
    """Every document's Okapi BM25 score, computed the textbook way."""
    counts = [Counter(snowball(t)) for t in texts]
    lengths = [sum(c.values()) for c in counts]
    average = sum(lengths) / len(lengths)
    scores = [0.0] * len(texts)
    for term in set(snowball(query)):
        df = sum(1 for c in counts if term in c)
        if not df:
            continue
        idf = math.log(1 + (len(texts) - df + 0.5) / (df + 0.5))
        for i, c in enumerate(counts):
            tf = c.get(term, 0)
            if tf:
                scores[i] += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * lengths[i] / average))
    return scores


documents = st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=12).map(" ".join),
                     min_size=1, max_size=60)
queries = st.lists(st.sampled_from(WORDS + ["absent"]), min_size=1, max_size=4).map(" ".join)


@settings(max_examples=200, deadline=None)
@given(documents, queries, st.integers(min_value=1, max_value=10))
def test_search_returns_the_best_scoring_documents_best_first(texts, query, n) -> None:
    index = BM25.build(texts)
    found = index.search(query, n)
    expected = reference(texts, query)
    scoring = sorted((s for s in expected if s > 0), reverse=True)
    # As many as asked for (or as score at all), best first, each with its own score ...
    assert len(found) == len(scoring[:n])
    assert all(math.isclose(s, best, rel_tol=1e-4) for (_, s), best in zip(found, scoring))
    for i, score in found:
        assert math.isclose(score, expected[i], rel_tol=1e-4)
    # ... and no document left out scores more than the last one returned.
    if found:
        returned = {i for i, _ in found}
        assert all(s <= found[-1][1] + 1e-4 for i, s in enumerate(expected) if i not in returned)
    # Ties come in document order, so the same question always ranks the same way.
    for (a, sa), (b, sb) in pairwise(found):
        assert sa > sb or (sa == sb and a < b)


def test_inflections_match_and_stop_words_do_not() -> None:
    index = BM25.build(["Calibration of the sampling budget.", "Graph policies for agents.",
                        "The proposed paper and its method."])
    assert [i for i, _ in index.search("How is it calibrated?", 5)] == [0]
    assert [i for i, _ in index.search("a policy", 5)] == [1]
    assert index.search("the paper proposed a method", 5) == []
    assert index.search("", 5) == [] and index.search("unheard", 5) == []


def test_an_acronyms_plural_meets_the_acronym() -> None:
    """Snowball keeps a word without a vowel whole: "LLMs" never met "LLM" ("Any papers on
    making LLM inference cheaper?" missed GlowQ, "… for Quantized LLMs")."""
    index = BM25.build(["GlowQ: low-rank approximation for quantized LLMs.", "An MDP solver.",
                        "A class of gas models."])
    assert [i for i, _ in index.search("Any papers on LLM inference?", 5)] == [0]
    assert [i for i, _ in index.search("Which papers solve MDPs?", 5)] == [1]
    assert [i for i, _ in index.search("gases and classes", 5)] == [2]  # words keep Snowball's


def test_rarity_and_knows_read_the_grounding_checks_stems() -> None:
    texts = ["Calibration of the sampling budget.", "We calibrate twice.", "Graph policies."]
    index = BM25.build(texts)
    assert stem("calibration") == "calibrat"  # the crude stem, not Snowball's "calibr"
    assert index.knows("calibrat") and not index.knows("calibr") and not index.knows("the")
    found = sum(1 for t in texts if "calibrat" in terms(t))
    assert found == 2
    assert index.rarity("calibrat") == pytest.approx(math.log(1 + (3 - 2 + 0.5) / (2 + 0.5)))
    assert index.rarity("unheard") == pytest.approx(math.log(1 + 3.5 / 0.5))  # the rarest


def test_a_saved_index_loads_with_the_same_answers(tmp_path) -> None:
    texts = [f"paper {n} about topic{n % 7}, calibrated graphs and method{n}" for n in range(50)]
    index = BM25.build(texts)
    folder = tmp_path / "v1.bm25"
    index.save(folder)
    index.save(folder)  # saved again meanwhile (another indexer): the first stays, whole
    left = [p.name for p in tmp_path.iterdir() if p.name != "home"]  # home: conftest's
    assert left == ["v1.bm25"]  # no temporary folder left
    again = BM25.load(folder)
    assert again.size == 50
    for query in ("topic3 graphs", "method17", "calibration", "nothing here"):
        assert again.search(query, 10) == index.search(query, 10)
    assert again.knows("calibrat") and again.rarity("topic3") == index.rarity("topic3")
    assert again.names == index.names

    empty = BM25.build(["the", ""])  # no word to index
    empty.save(tmp_path / "empty.bm25")
    assert BM25.load(tmp_path / "empty.bm25").search("the", 3) == []


def test_a_damaged_or_differently_made_index_does_not_load(tmp_path, monkeypatch) -> None:
    folder = tmp_path / "v1.bm25"
    BM25.build(["graph policies", "diffusion rewards"]).save(folder)
    assert BM25.load(folder).size == 2
    with monkeypatch.context() as patch:  # other weights or stop words: built again
        patch.setattr(lexical, "_FORMAT", "another")
        with pytest.raises(ValueError):
            BM25.load(folder)
    (folder / "params.index.json").write_text("{")
    with pytest.raises(ValueError):
        BM25.load(folder)
    (folder / "params.index.json").unlink()  # gone: not an index without bm25s's part
    with pytest.raises(ValueError):
        BM25.load(folder)
    with pytest.raises(ValueError):
        BM25.load(tmp_path / "missing.bm25")


def test_spelling_is_how_the_texts_write_a_name() -> None:
    index = BM25.build([
        "We introduce TimeOmni-1, trained with RL. The $Q$Avatar critic mixes two Q-functions.",
        "Low-rank adapters: a low-rank update. **DrPose** maximises PoseScore on DrPose15K.",
        "Cross-Domain Policy Optimization", "The SAFER framework is safer than SOTA CNNs.",
        "TimeOmni-1 again, in the same paper", "Deep RL for coalitions.",
    ], owners=["a", "b", "c", "d", "a", "e"])
    assert index.spelling("timeomni-1") == "TimeOmni-1"
    assert index.spelling("qavatar") == "QAvatar"  # LaTeX dollars dropped
    assert index.spelling("drpose") == "DrPose" and index.spelling("DRPOSE") == "DrPose"
    assert index.spelling("drpose15k") == "DrPose15K"
    assert index.spelling("rl") is None  # two papers use it: the field, more likely
    # in capitals: as likely the field's term as a name ("sota", "cnns"); SAFER is a word too
    assert index.spelling("sota") is None and index.spelling("cnns") is None
    assert index.spelling("safer") is None
    assert index.spelling("low-rank") is None  # written in lower case too
    assert index.spelling("cross-domain") is None  # a title's capitals are no name
    assert index.spelling("unheard") is None
