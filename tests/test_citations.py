"""The citation checker's parts: markers, key terms, refusals, splitting."""

from __future__ import annotations

from assistant.citations import (
    CitationChecker,
    Evidence,
    cited_numbers,
    is_refusal,
    key_terms,
    split_units,
    strip_markers,
)
from assistant.types import Source


def test_markers() -> None:
    assert cited_numbers("A [1]. B [2, 3] and [4-6] and [Source 7][8]") == [1, 2, 3, 4, 5, 6, 7, 8]
    assert strip_markers("PoseScore is the reward [1][2].") == "PoseScore is the reward."


def test_key_terms_are_names_and_numbers() -> None:
    terms = key_terms("DrPose reaches 23.4% on DrPose15K, unlike GPT-4 from Paris in 2,000 runs.")
    assert {"DrPose", "23.4", "DrPose15K", "GPT-4", "Paris", "2000"} <= terms
    assert "The" not in key_terms("The method works.")


def test_refusals() -> None:
    assert is_refusal("The sources do not cover this.")
    assert is_refusal("The authors are not mentioned in the provided sources.")
    assert is_refusal("There is no information about the authors.")
    assert not is_refusal("DrPose maximizes PoseScore.")
    assert not is_refusal("GlowQ does not need a separate correction for every layer.")


def test_units_keep_bullets_and_trailing_markers() -> None:
    units = list(split_units("- First claim. [1]\n- Second claim [2]. Third one."))
    assert units[0] == ("- ", "First claim [1].", True)
    assert units[1] == ("- ", "Second claim [2].", False)
    assert units[2] == ("", "Third one.", True)


def _evidence(number: int, title: str, text: str) -> Evidence:
    source = Source(paper_id=f"p{number}", title=title, text=text, score=1.0, passages=(text,))
    return Evidence(number, source, (text,), ((1.0, 0.0),))


def test_checker_with_a_fake_embedding() -> None:
    evidence = [
        _evidence(1, "Alpha", "AlphaNet improves accuracy by 12% on CIFAR-10 with sparse layers."),
        _evidence(2, "Beta", "BetaGAN generates images with a discriminator ensemble."),
    ]
    checker = CitationChecker(evidence, embed=lambda text: (1.0, 0.0), question="What does AlphaNet do?")
    kept = checker.check("AlphaNet improves accuracy by 12% on CIFAR-10 [2].")
    assert kept.numbers == (1,) and kept.dropped is None  # moved to the source that says it
    wrong_number = checker.check("AlphaNet improves accuracy by 15% on CIFAR-10 [1].")
    assert wrong_number.dropped and "15" in wrong_number.dropped.reason
    checker.check("BetaGAN uses a discriminator ensemble [5].")
    assert checker.invalid_markers == [5]
