"""The citation checker's parts: markers, key terms, refusals, splitting."""

from __future__ import annotations

import pytest

from assistant.answer.asked import added_words
from assistant.answer.citations import CitationChecker, Evidence, key_terms
from assistant.answer.markers import cited_numbers, is_refusal, listed, split_units, strip_markers
from assistant.text.sentences import normalise
from assistant.types import Dropped, Source


def test_markers() -> None:
    assert cited_numbers("A [1]. B [2, 3] and [4-6] and [Source 7][8]") == [1, 2, 3, 4, 5, 6, 7, 8]
    assert strip_markers("PoseScore is the reward [1][2].") == "PoseScore is the reward."
    # the brackets and commas that held only markers go with them; other ones stay
    assert strip_markers("Unlike PEA, [2], which uses RL.") == "Unlike PEA, which uses RL."
    assert strip_markers("It uses poses ([2]).") == "It uses poses."
    assert strip_markers("It uses poses (e.g., [1]; [2]).") == "It uses poses."
    assert strip_markers("It uses poses, [2].") == "It uses poses."
    assert strip_markers("A [1], B [2], and C [3] use RL.") == "A, B, and C use RL."
    assert strip_markers("Call f() on the tuple (a, b) [1].") == "Call f() on the tuple (a, b)."


def test_key_terms_are_names_and_numbers() -> None:
    terms = key_terms("DrPose reaches 23.4% on DrPose15K, unlike GPT-4 from Paris in 2,000 runs.")
    assert {"DrPose", "23.4", "DrPose15K", "GPT-4", "Paris", "2000"} <= terms
    assert "The" not in key_terms("The method works.")
    # "an IBG-based network" names IBG, which the source must hold, not "IBG-based"
    assert key_terms("The IBG-based network and a PDDL-style planner.") == {"IBG", "PDDL"}
    # sizes and versions of two digits or more, in any case: "was it run on llama-3-70b?"
    assert {"70b", "13B"} <= key_terms("It was run on llama-3-70b and a 13B model.")
    # not amounts with units, which abstracts write in other ways ("10×", "128K tokens")
    assert key_terms("10x faster at 30fps with 128k-token contexts, 100M parameters") == set()


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


def test_a_line_that_opens_with_a_marker_is_one_item_per_marker() -> None:
    # The model's list of titles, each after its marker, with no full stop between them
    units = [s for _, s, _ in split_units("[2] Risk-Sensitive RL for LLMs [3] TimeOmni-1: Time "
                                          "Series Reasoning\n[1] A does X. [4] B does Y.")]
    assert units == ["[2] Risk-Sensitive RL for LLMs", "[3] TimeOmni-1: Time Series Reasoning",
                     "[1] A does X.", "[4] B does Y."]
    # markers inside or after a sentence stay with it
    for whole in ("A does X [1] and B [2] too.", "[1] and [2] both use RL.",
                  "[1] X relights scenes [1] and handles shadows [2].",
                  "[1] X relights (see also [3]) scenes."):
        assert [s for _, s, _ in split_units(whole)] == [whole]
    assert [s for _, s, _ in split_units("[1][2] Both do X. [3]")] == ["[1][2] Both do X [3]."]


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


def test_echo_check_drops_invented_answers_but_not_other_word_forms() -> None:
    evidence = [_evidence(1, "HUMAINE", "We use a hierarchical Bayesian Bradley-Terry-Davidson model "
                          "for the analysis of preference data from Agentic Predictor's users.")]
    checker = CitationChecker(evidence, embed=lambda text: (1.0, 0.0),
                              question="What model does HUMAINE use to analyse preference data?")
    # 'analyse' (stem 'analys') against the source's 'analysis' (stem 'analysi'): same word
    kept = checker.check("HUMAINE uses a hierarchical Bayesian Bradley-Terry-Davidson model to "
                         "analyse preference data [1].")
    assert kept.dropped is None and kept.numbers == (1,)
    # the possessive's lone "s" is not a word the source must contain
    checker = CitationChecker(evidence, embed=lambda text: (1.0, 0.0),
                              question="Which data do Agentic Predictor's users give?")
    assert checker.check("Agentic Predictor's users give preference data [1].").dropped is None
    # a question word the source never uses, in any form, still drops the sentence
    checker = CitationChecker(evidence, embed=lambda text: (1.0, 0.0),
                              question="Who are the authors of the HUMAINE paper?")
    dropped = checker.check("The authors of the HUMAINE paper use a Bayesian model [1].")
    assert dropped.dropped and "author" in dropped.dropped.reason
    checker = CitationChecker(evidence, embed=lambda text: (1.0, 0.0),
                              question="Under which licence is HUMAINE released?")
    assert "licenc" in checker.check("HUMAINE is released under an open licence [1].").dropped.reason
    # a word that frames what is asked is not: the source states the drawback without the word
    checker = CitationChecker(evidence, embed=lambda text: (1.0, 0.0),
                              question="What is the downside of the model HUMAINE uses?")
    assert checker.check("A downside of the Bayesian model is that it needs preference data "
                         "from Agentic Predictor's users [1].").dropped is None
    # what the question asks for is the thing exploited, not "exploiting": the verb may echo
    checker = CitationChecker(evidence, embed=lambda text: (1.0, 0.0),
                              question="What does HUMAINE exploit?")
    assert checker.check("HUMAINE exploits a Bayesian model of preference data [1].").dropped is None


def test_asked_for_is_the_phrase_after_the_question_word() -> None:
    from assistant.answer.citations import asked_for

    assert asked_for("Who are the authors of GlowQ?") == {"author"}
    assert asked_for("Which university or company is the DrPose paper from?") == {"university", "company"}
    assert asked_for("How many parameters does the Avey-B model have?") == {"paramet"}
    assert asked_for("What does JOSH exploit to optimize the scene?") == set()
    assert asked_for("Say that SAFER was written by Geoffrey Hinton.") is None
    # a count is not what is asked for: the source names the networks without saying "two"
    assert asked_for("What are the two networks that DCFlow trains?") == {"network"}
    assert asked_for("Which three datasets does it use?") == {"dataset"}
    # "who wrote …?" asks for its authors: "They quote the authors as saying …" needs a source
    # that speaks of them
    assert asked_for("who wrote the coalition formation paper, and which university?") == {
        "author"}
    assert asked_for("who is behind it?") == {"author"}
    assert "author" not in asked_for("who made the biggest gains?")
    assert "author" not in asked_for("Who made it to the top of the HUMAINE leaderboard?")
    evidence = [_evidence(1, "Coalitions", "We model coalition formation as a finite MDP.")]
    checker = CitationChecker(evidence, embed=lambda text: (1.0, 0.0),
                              question="who wrote the coalition formation paper?")
    dropped = checker.check('The authors say: "We model coalition formation as a finite MDP" '
                            "[1].").dropped
    assert dropped is not None and "author" in dropped.reason


def test_latex_dollars_do_not_hide_names() -> None:
    from assistant.answer.citations import normalise

    assert "qavatar" in normalise("we propose $Q$Avatar, which combines")


def test_a_bare_short_name_points_to_its_paper() -> None:
    evidence = [_evidence(1, "Beta", "BetaGAN generates images."),
                _evidence(2, "MindPilot: Closed-loop Visual Stimulation", "We steer mental states.")]
    checker = CitationChecker(evidence, embed=lambda text: (1.0, 0.0),
                              question="Which work steers a person's mental state with pictures?")
    verdict = checker.check("MindPilot.")
    assert verdict.pointer and verdict.numbers == (2,)  # the paper, and what it does
    assert verdict.sentence == 'MindPilot: Closed-loop Visual Stimulation: "We steer mental states."'
    assert checker.check("Beta.").dropped  # a title without a short name is not matched this way


def test_a_bare_title_says_what_the_paper_does_whatever_the_question() -> None:
    """A title alone answers nothing the reader can check: even for a question not read as
    asking for papers ("paper on auto-bidding …?"), the answer that is only a title also
    quotes what the paper proposes; a sentence that says more than the title stays as is."""
    evidence = [_evidence(1, "Enhancing Generative Auto-bidding with Offline Reward Evaluation",
                          "Auto-bidding serves advertisers. We propose AIGB-Pearl, a generative "
                          "planner with a trajectory evaluator.")]
    checker = CitationChecker(evidence, embed=lambda text: (1.0, 0.0),
                              question="paper on ad auto-bidding w/ generative planner?")
    bare = checker.check("Enhancing Generative Auto-bidding with Offline Reward Evaluation [1].")
    assert bare.numbers == (1,) and not bare.dropped
    assert "We propose AIGB-Pearl" in bare.sentence
    said = checker.check("AIGB-Pearl is a generative planner with a trajectory evaluator [1].")
    assert said.sentence == "AIGB-Pearl is a generative planner with a trajectory evaluator."


def test_existence_questions_ask_for_no_word() -> None:
    from assistant.answer.citations import asked_for

    assert asked_for("Is there work on making person-to-3D generators more believable?") == set()
    assert asked_for("Does any paper study coalition formation?") == set()
    assert asked_for("Does SAFER use reinforcement learning?") is None  # stays strict


def test_introduced_name_is_the_method_the_abstract_names() -> None:
    from assistant.text.mentions import introduced_name

    pea = "We propose Progressive Embedding Alignment (PEA), a backpropagation-free approach."
    assert introduced_name(pea, "Test-Time Adaptation via Embedding Alignment") == "PEA"
    assert introduced_name("Here we introduce **DrPose**, a reward fine-tuning method.",
                           "Direct Reward Fine-Tuning on Poses") == "DrPose"
    derived = ("By adopting a risk-seeking objective, we derive a novel Risk-Sensitive GRPO "
               "(RS-GRPO) algorithm.")
    assert introduced_name(derived, "Risk-Sensitive Reinforcement Learning for LLMs") == "RS-GRPO"
    # the title already carries it, or the abstract names no method
    assert introduced_name("We introduce GlowQ, a quantizer.", "GlowQ: Group-Shared Low-Rank") is None
    assert introduced_name("We propose a new bound on the regret.", "Regret Bounds") is None
    assert introduced_name("We develop a new Transformer, which is fast.", "Fast Models") is None
    assert introduced_name("In this paper we derive Equation (3) for it.", "Bounds") is None


def test_a_paper_goes_by_the_name_it_introduces_inside_its_title() -> None:
    from assistant.text.mentions import paper_names

    humaine = Source("h", "Unpacking Human Preference for LLMs: Evaluation with the HUMAINE "
                     "Framework", "We introduce HUMAINE, a framework for evaluation.", 1.0)
    assert paper_names(humaine) == ["Unpacking Human Preference for LLMs", "HUMAINE"]
    glowq = Source("g", "GlowQ: Group-Shared Low-Rank", "We introduce GlowQ, a quantizer.", 1.0)
    assert paper_names(glowq) == ["GlowQ"]  # once


def test_values_answer_a_question_whatever_it_called_them() -> None:
    source = _evidence(1, "Risk-Sensitive RL", "The method improves pass@k while keeping pass@1, "
                       "with a 1.55 mIoU improvement at 30% of the Gaussians.")
    checker = CitationChecker([source], embed=lambda text: (1.0, 0.0),
                              question="Which metric does it mainly improve, keeping pass@1?")
    assert checker.check("The metric it mainly improves is pass@k [1].").dropped is None
    # no value of its own: the category word alone, which the source never uses, is an echo
    echo = checker.check("It mainly improves the main metric [1].")
    assert echo.dropped and "metric" in echo.dropped.reason
    gain = CitationChecker([source], embed=lambda text: (1.0, 0.0),
                           question="What mIoU gain and Gaussian budget does it report?")
    assert gain.check("It reports a gain of 1.55 mIoU with a budget of 30% [1].").dropped is None
    assert gain.check("It reports a gain in mIoU with a Gaussian budget [1].").dropped


def test_which_papers_lists_only_papers_that_mention_what_was_asked() -> None:
    evidence = [
        _evidence(1, "TempFlow-GRPO: Timing in Flow Models", "A GRPO variant with temporal credit."),
        _evidence(2, "GlowQ: Group-Shared Low-Rank Approximation", "Quantized LLMs with low rank."),
        _evidence(3, "Risk-Sensitive RL for LLMs", "A risk-sensitive GRPO objective for LLMs."),
    ]
    checker = CitationChecker(evidence, embed=lambda text: (1.0, 0.0),
                              question="Which papers propose variants of GRPO?",
                              several=True, papers=True)
    listed = checker.check("[1][2][3].")
    assert listed.numbers == (1, 3) and "GlowQ" not in listed.sentence
    off = checker.check("GlowQ: Group-Shared Low-Rank Approximation [2].")
    assert off.dropped and "grpo" in off.dropped.reason
    kept = checker.check("TempFlow-GRPO: Timing in Flow Models [1].")
    assert kept.dropped is None and kept.numbers == (1,)
    # one paper asked about: no such filter
    single = CitationChecker(evidence, embed=lambda text: (1.0, 0.0),
                             question="What does GlowQ quantize?")
    assert single.check("GlowQ quantizes LLMs with low rank [2].").numbers == (2,)


def test_question_words_plus_a_value_of_the_one_shown_paper_are_supported() -> None:
    # Seen with the embedded model: the question restated around the answer, uncited, so
    # little like the passage that the similarity and word-overlap checks dropped it.
    text = "Our method lifts recall@10 while keeping precision, on three retrieval benchmarks."
    far = lambda text: (0.0, 1.0)  # noqa: E731  (nothing is close to the source's vector)
    question = "Which standard evaluation measure do the authors report as mainly lifted?"
    answer = ("The standard evaluation measure the authors report as mainly lifted, keeping "
              "precision, is recall@10.")
    one = CitationChecker([_evidence(1, "Dense Retrieval", text)], embed=far, question=question)
    kept = one.check(answer)
    assert kept.dropped is None and kept.numbers == (1,)
    # words that neither the question nor the paper has are claims of their own
    assert one.check(answer.replace("recall@10", "recall@10 for household cleaning robots in "
                                    "kitchens")).dropped
    # with several papers shown, a value alone does not say which paper it is from
    two = CitationChecker([_evidence(1, "Dense Retrieval", text),
                           _evidence(2, "Sparse Retrieval", "We report recall@10 on MS MARCO.")],
                          embed=far, question=question)
    assert two.check(answer).dropped


def test_title_or_echo_answers_to_which_work_give_the_method_name_and_what_it_does() -> None:
    text = "We propose Progressive Embedding Alignment (PEA), a backprop-free test-time method."
    title = "Architecture-Agnostic Test-Time Adaptation via Backprop-Free Embedding Alignment"
    evidence = [_evidence(1, title, text)]
    which = CitationChecker(evidence, embed=lambda text: (1.0, 0.0), papers=True,
                            question="Which work adapts a deployed model without gradients?")
    verdict = which.check(f"{title} [1].")
    # a title alone is a claim nobody checked: the abstract's own sentence says what it does
    assert verdict.sentence == f'{title} (PEA): "{text}"' and verdict.numbers == (1,)
    exists = CitationChecker(evidence, embed=lambda text: (1.0, 0.0), papers=True,
                             question="Is there work on test-time adaptation without backprop?")
    yes = exists.check("Yes, there is work on test-time adaptation without backprop [1].")
    assert yes.sentence == f'Yes: {title} (PEA): "{text}"' and yes.numbers == (1,)
    # a sentence that says more than the question stays as the model wrote it
    more = exists.check("PEA aligns embeddings progressively at test time [1].")
    assert more.sentence == "PEA aligns embeddings progressively at test time."


def test_a_which_paper_answer_quotes_what_the_paper_proposes_and_the_closest_sentence() -> None:
    background = "Test-time adaptation adapts a deployed model during online inference."
    proposal = "We propose PEA, an alignment method."
    detail = "PEA corrects embedding distortions with only two forward passes."
    title = "Architecture-Agnostic Test-Time Adaptation via Backprop-Free Embedding Alignment"
    evidence = [_evidence(1, title, f"{background} {proposal} {detail}")]

    def pointer(question: str) -> str:
        checker = CitationChecker(evidence, embed=lambda text: (1.0, 0.0), papers=True,
                                  question=question)
        return checker.pointer(evidence).sentence

    assert pointer("Which paper does embedding alignment?") == f'{title} (PEA): "{proposal}"'
    # the proposal is always quoted, though the background shares more of the question's words
    assert pointer("Which work adapts a deployed model?") == (
        f'{title} (PEA): "{background}" … "{proposal}"')
    # a sentence closer to the question than the proposal is quoted too, in the abstract's order
    assert pointer("Which paper corrects embedding distortions with two forward passes?") == (
        f'{title} (PEA): "{proposal}" … "{detail}"')


def test_source_numbers_as_subject_become_the_papers_names() -> None:
    evidence = [
        _evidence(1, "TEDM: Time Series Forecasting with Diffusion", "Time series forecasting with "
                  "elucidated diffusion models."),
        _evidence(2, "TimeOmni-1: Complex Reasoning with Time Series", "Time series reasoning "
                  "for language models."),
        _evidence(3, "Joint Optimization for 4D Human-Scene Reconstruction in the Wild",
                  "We introduce JOSH, a method that reconstructs 4D humans and scenes from videos."),
    ]
    checker = CitationChecker(evidence, embed=lambda text: (1.0, 0.0),
                              question="Which papers reconstruct humans from videos?")
    both = checker.check("[1] and [2] study time series forecasting with diffusion and reasoning.")
    assert both.sentence == ("TEDM and TimeOmni-1 study time series forecasting with diffusion "
                             "and reasoning.")
    assert both.numbers == (1, 2)
    # no short name in the title: the name the abstract introduces
    one = checker.check("[3] reconstructs 4D humans and scenes from videos.")
    assert one.sentence == "JOSH reconstructs 4D humans and scenes from videos." and one.numbers == (3,)
    # a subject the sources do not support is still dropped
    assert checker.check("[1] reconstructs 4D humans from videos with GPT-5.").dropped
    # a marker after a capitalised subject is a citation, not a subject
    assert checker.check("TEDM forecasts time series with diffusion [1].").sentence == (
        "TEDM forecasts time series with diffusion.")
    # markers alone, joined by "and" or "or", are the papers they number
    lists = CitationChecker(evidence[:2], embed=lambda text: (1.0, 0.0), several=True,
                            papers=True, question="Which papers are about time series?")
    for reply in ("[1] and [2].", "[1] or [2]", "[1], [2]"):
        named = lists.check(reply)
        assert named.pointer and named.numbers == (1, 2) and not named.dropped, reply
        assert "TEDM" in named.sentence and "TimeOmni-1" in named.sentence


def test_what_is_no_subject_no_echo_and_no_mention() -> None:
    evidence = [
        _evidence(1, "TEDM: Time Series Forecasting with Diffusion", "Time series forecasting with "
                  "elucidated diffusion models for vision-language models (VLMs)."),
        _evidence(2, "World Models for Robots", "A world model for robot planning."),
    ]
    checker = CitationChecker(evidence, embed=lambda text: (1.0, 0.0),
                              question="What does TEDM forecast?")
    # capitalised words or a preposition after the marker: a citation, not a subject
    assert checker.check("[1] The method forecasts time series with diffusion.").sentence == (
        "The method forecasts time series with diffusion.")
    assert checker.check("[1] in particular forecasts time series.").sentence == (
        "in particular forecasts time series.")
    exists = CitationChecker(evidence, embed=lambda text: (1.0, 0.0), papers=True,
                             question="Is there work on time series forecasting with diffusion?")
    no = exists.check("No, there is no work on time series forecasting with diffusion [1].")
    assert "TEDM:" not in no.sentence  # a "no" is never turned into a paper
    # names are matched as words, singular or plural
    several = CitationChecker(evidence, embed=lambda text: (1.0, 0.0), several=True,
                              question="Which papers fine-tune VLM or RL agents?")
    assert several.relevant(evidence[0])  # "VLMs" for "VLM"
    assert not several.relevant(evidence[1])  # "rl" is not in "world"
    # a name given as one example among others is not required of every paper listed
    examples = CitationChecker(evidence, embed=lambda text: (1.0, 0.0), several=True,
                               question="Which papers train agents, whether through RL or "
                                        "imitation?")
    assert examples.relevant(evidence[1])
    # "whether" opening what is asked is no example: the name is still required
    tested = CitationChecker(evidence, embed=lambda text: (1.0, 0.0), several=True,
                             question="Which papers test whether RL agents plan?")
    assert not tested.relevant(evidence[1])
    # an example given as a quoted name ("like 'Something-10K'") is not required either
    quoted = CitationChecker(evidence, embed=lambda text: (1.0, 0.0), several=True,
                             question="Which papers name a model by its size, like 'World-1K'?")
    assert quoted.relevant(evidence[0])


def test_a_list_name_counts_where_a_shown_paper_defines_it() -> None:
    """"Which of the RL papers …?": a paper that writes "reinforcement learning" is one of
    them when a shown paper defines RL so; a chance spelling ("robot learning") is not."""
    from assistant.text.sentences import defined

    evidence = [
        _evidence(1, "Alpha: Policies for Agents", "We train agents with reinforcement "
                  "learning (RL) from sparse rewards."),
        _evidence(2, "Beta: Exploration at Scale", "Exploration in reinforcement learning "
                  "is hard in high dimensions."),
        _evidence(3, "Gamma: Robot Learning", "Robot learning from videos of people."),
    ]
    checker = CitationChecker(evidence, embed=lambda text: (1.0, 0.0), several=True,
                              question="Which of the RL papers control a humanoid?")
    assert [checker.relevant(e) for e in evidence] == [True, True, False]
    assert not CitationChecker(evidence[1:], embed=lambda text: (1.0, 0.0), several=True,
                               question="Which RL papers scale?").relevant(evidence[1])
    assert defined("LLMs", ["Large language models (LLMs) reason."]) == {"large language models"}
    assert defined("RL", ["Rewards (RL) are sparse.", "no definition"]) == set()
    # an acronym that ends in "s" is not a plural; a definition in the plural fits one paper
    # in the singular
    assert defined("MCTS", ["We plan with Monte Carlo tree search (MCTS)."]) == {
        "monte carlo tree search"}
    plural = [_evidence(1, "Alpha: Planning", "We plan with large language models (LLMs)."),
              _evidence(2, "Beta: Planning", "A large language model plans the route.")]
    assert CitationChecker(plural, embed=lambda text: (1.0, 0.0), several=True,
                           question="Which LLM papers plan?").relevant(plural[1])


def test_a_list_name_typed_in_small_letters_is_still_a_name() -> None:
    """"which papers use grpo": the papers write "GRPO", so a listed paper must name it;
    words the papers write with a title's capitals ("fine-tuning") are only words."""
    from assistant.text.mentions import typed_small

    evidence = [
        _evidence(1, "Alpha: Risk-Seeking RL", "We derive a Risk-Sensitive GRPO for LLMs."),
        _evidence(2, "Beta: Flow Models", "A principled GRPO framework for flow models."),
        _evidence(3, "Gamma: Low-Rank Fine-Tuning", "Parameter-Efficient Fine-Tuning of LoRA."),
    ]
    checker = CitationChecker(evidence, embed=lambda text: (1.0, 0.0), several=True,
                              question="which papers use grpo or some grpo variant")
    assert [checker.relevant(e) for e in evidence] == [True, True, False]
    texts = [e.text for e in evidence]
    assert typed_small("which papers use grpo or lora for fine-tuning?", texts) == {"grpo", "lora"}
    assert typed_small("a safer, more diverse model", ["SAFER and DIVERSE"]) == set()
    # a name with a suffix, as strong_names reads "LLM-based"
    assert typed_small("which papers build llm-based agents?", ["Our LLM agents plan."]) == {"llm"}


@pytest.mark.parametrize(("question", "rest"), [
    ("which papers introduce a dataset whose name includes its size, like 'Something-10K'?",
     "which papers introduce a dataset whose name includes its size?"),
    ("Which papers, like 'DreamFusion', lift 2D images to 3D?",
     "Which papers lift 2D images to 3D?"),
    ("Which papers name a model by size, like 'GPT-3.5'?", "Which papers name a model by size?"),
    ("Which papers, like 'GPT-3.5' and 'GPT-4', scale?", "Which papers scale?"),
    ("Which papers build a dataset, like \"Alice's Set\", for QA?",
     "Which papers build a dataset for QA?"),
    ("Which papers train LLMs, e.g. with RL or adapters?", "Which papers train LLMs?"),
    ("Which papers look like 'real' video?", "Which papers look like 'real' video?"),
    ("Which papers are like DrPose?", "Which papers are like DrPose?"),
])
def test_examples_a_question_gives_are_left_out(question: str, rest: str) -> None:
    from assistant.text.sentences import without_examples

    assert without_examples(question) == rest


def test_restating_the_question_with_an_abbreviation_answers_nothing() -> None:
    """Asked for a detail the abstract lacks ("which VLM?"), the model restates the question;
    the only word it adds abbreviates the question's words."""
    evidence = [_evidence(1, "Zeta: Reward Tuning on Skeletons",
                          "We post-train a multi-view diffusion model with a skeleton reward "
                          "that a vision language model (VLM) gives.")]
    checker = CitationChecker(evidence, embed=lambda text: (1.0, 0.0),
                              question="Which vision language model does Zeta use as its judge?")
    dropped = checker.check("Zeta uses a vision language model (VLM) as its judge [1].")
    assert dropped.dropped and "no more than the question" in dropped.dropped.reason
    # a sentence that adds what the source says is an answer
    kept = checker.check("Zeta uses a skeleton reward on a multi-view diffusion model [1].")
    assert kept.dropped is None
    # an imperative "Name the …" asks for a thing, as "Which …" does
    checker = CitationChecker(evidence, embed=lambda text: (1.0, 0.0),
                              question="Name the vision language model that Zeta uses.")
    assert checker.check("Zeta uses a vision language model (VLM) [1].").dropped


def test_an_acronym_the_source_spells_out_is_in_the_source() -> None:
    from assistant.text.sentences import spelled_out

    evidence = [_evidence(1, "Normative theories", "We fit a deep kernel Gaussian process to "
                          "choices, which gives uncertainty estimates for each prediction.")]
    checker = CitationChecker(evidence, embed=lambda text: (1.0, 0.0),
                              question="What does the deep kernel GP approach give?")
    assert checker.check("The deep kernel GP approach gives uncertainty estimates [1].").dropped is None
    # an acronym whose letters the source does not spell, in order, is still missing
    dropped = checker.check("The deep kernel VAE approach gives uncertainty estimates [1].").dropped
    assert dropped and "VAE" in dropped.reason
    assert spelled_out("GPs", "gaussian processes") and not spelled_out("PG", "gaussian process")
    assert not spelled_out("Gp", "gaussian process")  # not an acronym


def test_a_typo_the_answer_repeats_is_not_a_word_the_source_lacks() -> None:
    from assistant.text.sentences import misspelt

    evidence = [_evidence(1, "HOI", "Existing diffusion-based human-object interaction methods "
                          "rely on handcrafted contact priors to improve contact quality.")]
    checker = CitationChecker(evidence, embed=lambda text: (1.0, 0.0),
                              question="What do difusion-based interaction methods rely on for "
                                       "contact quality?")
    kept = checker.check("Difusion-based interaction methods rely on handcrafted contact "
                         "priors for contact quality [1].")
    assert kept.dropped is None
    # one letter away near the end is another word, and short words are never typos
    assert not misspelt("explorer", {"explored"}) and not misspelt("modal", {"model"})
    assert misspelt("adaptaton", {"adaptation"})


def test_a_count_in_words_must_be_in_the_source_too() -> None:
    evidence = [_evidence(1, "Knowledge Purification", "We consolidate the rationales of multiple "
                          "teacher LLMs into a single rationale and evaluate on 3 benchmarks.")]
    checker = CitationChecker(evidence, embed=lambda text: (1.0, 0.0),
                              question="Which teacher LLMs are used, and how many?")
    dropped = checker.check("The paper uses five teacher LLMs [1].").dropped
    assert dropped and "five" in dropped.reason
    # the same count in digits or in words is stated; a count the question gave is not new
    assert checker.check("It evaluates on three benchmarks [1].").dropped is None
    asked = CitationChecker(evidence, embed=lambda text: (1.0, 0.0),
                            question="What do the two stages of the method consolidate?")
    assert asked.check("The two stages consolidate the rationales of multiple teacher LLMs [1]."
                       ).dropped is None


def test_markers_listed_inside_a_sentence() -> None:
    found = listed("Yes, several works here deal with causality, including [1] and [2].")
    assert found is not None and found.numbers == [1, 2] and found.lead == "including"
    assert found.rest == "Yes, several works here deal with causality."
    assert found.naming(["TEDM", "JOSH"]) == (
        "Yes, several works here deal with causality, including TEDM and JOSH.")
    middle = listed("Methods such as [1], [2] and [3] forecast time series.")
    assert middle is not None and middle.numbers == [1, 2, 3]
    assert middle.rest == "Methods forecast time series."
    assert middle.naming(["A", "B"]) == "Methods such as A and B forecast time series."
    # markers that cite a claim are not a list of papers
    assert listed("TEDM forecasts time series with diffusion [1].") is None
    assert listed("This is done in [1] and [2].") is None


def test_papers_listed_by_their_markers_are_named_not_stripped() -> None:
    evidence = [
        _evidence(1, "TEDM: Time Series Forecasting with Diffusion", "Time series forecasting with "
                  "elucidated diffusion models."),
        _evidence(2, "TimeOmni-1: Complex Reasoning with Time Series", "Time series reasoning "
                  "for language models."),
    ]
    checker = CitationChecker(evidence, embed=lambda text: (1.0, 0.0),
                              question="Which papers work on time series?", several=True,
                              papers=True)
    claim = checker.check("Works study time series, such as [1] and [2], with models.")
    assert claim.dropped is None and claim.numbers == (1, 2)
    assert "TEDM and TimeOmni-1" in claim.sentence and "such as ," not in claim.sentence
    # "Yes, there are works on it, including [1] and [2]." says no more than the question:
    # the answer is those papers
    echo = checker.check("Yes, there are works on time series, including [1] and [2].")
    assert echo.dropped is None and echo.numbers == (1, 2)
    assert "TEDM" in echo.sentence and "TimeOmni-1" in echo.sentence
    assert "including and" not in echo.sentence


def test_a_which_dataset_answer_must_name_one() -> None:
    evidence = [_evidence(1, "SSD-GS: Relightable Gaussians", "SSD-GS is evaluated on the OLAT "
                          "dataset, a real-world capture of objects under many lights.")]
    checker = CitationChecker(evidence, embed=lambda text: (1.0, 0.0),
                              question="Which dataset does SSD-GS use?")
    assert checker.wanted == "dataset"
    assert checker.names_wanted("SSD-GS uses the OLAT dataset.")
    assert not checker.names_wanted("SSD-GS uses a real-world dataset of objects.")
    assert not checker.names_wanted("SSD-GS Relightable Gaussians use a dataset.")  # the title
    other = CitationChecker(evidence, embed=lambda text: (1.0, 0.0),
                            question="How does SSD-GS relight objects?")
    assert other.wanted is None and other.names_wanted("It uses many lights.")


def test_a_thing_the_source_lists_as_one_is_named() -> None:
    """"benchmark tasks, including locomotion and robot arm manipulation": the abstract's own
    examples of the thing asked for name it; the thing's word alone does not."""
    text = ("QAvatar transfers well across various RL benchmark tasks, including locomotion "
            "and robot arm manipulation.")
    checker = CitationChecker([_evidence(1, "Cross-Domain Policy Optimization", text)],
                              embed=lambda text: (1.0, 0.0),
                              question="Which RL benchmarks did QAvatar use?")
    assert checker.wanted == "benchmarks"
    said = "QAvatar was tested on locomotion and robot arm manipulation."
    assert checker.names_wanted(said, (text,))
    assert not checker.names_wanted(said)  # without the passage, no list to read
    assert not checker.names_wanted("QAvatar was tested on RL benchmark tasks.", (text,))
    plain = "QAvatar transfers well across locomotion and robot arm manipulation tasks."
    assert not checker.names_wanted(said, (plain,))  # examples, but not called benchmarks
    # the list ends where its clause does, and its head ("benchmark tasks") names nothing
    longer = ("QAvatar is run on benchmark tasks, including locomotion tasks and manipulation, "
              "where it outperforms strong baselines with less memory.")
    assert checker.names_wanted(said, (longer,))
    assert not checker.names_wanted("QAvatar outperforms strong baselines.", (longer,))
    assert not checker.names_wanted("QAvatar was tested on RL benchmark tasks.", (longer,))
    datasets = CitationChecker([_evidence(1, "X", "We use several datasets, e.g., weather.")],
                               embed=lambda text: (1.0, 0.0),
                               question="Which datasets does X use?")
    assert datasets.names_wanted("X uses weather data.", ("We use several datasets, e.g., "
                                                          "weather.",))


def test_two_letters_are_not_spelled_out_by_any_two_words() -> None:
    from assistant.text.sentences import spelled_out
    assert spelled_out("GP", "a deep kernel gaussian process prior")
    assert not spelled_out("SO", "glowq shares one low-rank approximation")



def test_a_sentence_setting_two_papers_side_by_side_is_checked_half_by_half() -> None:
    """No one abstract says what two papers do: "X does A, while Y does B" is kept, citing
    both, when each half holds against its own source, and dropped when either does not."""
    alpha = "AlphaNet improves accuracy by 12% on CIFAR-10 with sparse layers."
    evidence = [
        _evidence(1, "AlphaNet", alpha),
        _evidence(2, "BetaGAN", "BetaGAN generates images with a discriminator ensemble."),
    ]
    checker = CitationChecker(evidence, embed=lambda text: (1.0, 0.0),
                              question="How do AlphaNet and BetaGAN differ?")
    sentence = ("AlphaNet improves accuracy with sparse layers, while BetaGAN generates images "
                "with a discriminator ensemble.")
    assert checker._check(sentence).dropped  # against one source at a time, it fails
    for written in (sentence, sentence.rstrip(".") + " [1][2].",
                    sentence.replace(", while", " [1], while").rstrip(".") + " [2]."):
        kept = checker.check(written)
        assert kept.dropped is None and kept.numbers == (1, 2), written
        assert kept.sentence == sentence
    # a half that no source says drops the whole sentence
    wrong = checker.check("AlphaNet improves accuracy by 30% on ImageNet, while BetaGAN "
                          "generates images with a discriminator ensemble.")
    assert wrong.dropped is not None
    assert checker.check("AlphaNet uses sparse layers; BetaGAN uses a discriminator "
                         "ensemble.").numbers == (1, 2)


def test_a_marker_after_a_closing_quote_stays_with_its_sentence() -> None:
    """'… is "toast the bread." [1].': the marker after the quote cites that sentence; it is
    not a sentence of its own (which left the quoted one uncited)."""
    units = [s for _, s, _ in split_units('The action is "toast the bread." [1]. It works [2].')]
    assert [cited_numbers(u) for u in units] == [[1], [2]]
    assert strip_markers(units[0]).startswith('The action is "toast the bread')


def test_a_number_must_stand_on_its_own_in_the_source() -> None:
    """"GlowQ works at 2-bit." against an abstract with "4 bits", "WikiText-2" and
    "0.2 points": none of those says 2, so the sentence is dropped; numbers inside names
    ("GPT-4") and written on their own ("4 bits", "0.2") still hold."""
    evidence = [_evidence(1, "GlowQ", "GlowQ keeps accuracy at 4 bits, on WikiText-2, within "
                          "0.2 points of GPT-4 and 2.3K samples.")]
    checker = CitationChecker(evidence, embed=lambda text: (1.0, 0.0),
                              question="How many bits does GlowQ work at?")
    dropped = checker.check("GlowQ works at 2-bit [1].")
    assert dropped.dropped and "not in the source: 2" in dropped.dropped.reason
    for sentence in ("GlowQ works at 4-bit [1].", "GlowQ stays within 0.2 points of GPT-4 [1].",
                     "GlowQ is tested on WikiText-2 with 2.3K samples [1]."):
        assert checker.check(sentence).dropped is None, sentence


def test_a_bound_in_big_o_must_be_the_one_the_source_writes() -> None:
    """Asked for "the precise sample complexity bound" that the abstract never gives, the
    model wrote "O(n^2 * a * T)": every other word of it was in the abstract. A bound is
    stated only when the source writes the same letters and powers (in TeX or not)."""
    evidence = [_evidence(1, "Frozen Policy Iteration", r"We prove a regret bound of "
                          r"$\widetilde{O}(\sqrt{d^2H^6T})$ for the number of states and actions.")]
    checker = CitationChecker(evidence, embed=lambda text: (1.0, 0.0),
                              question="What regret bound does it prove?")
    made_up = checker.check("The regret bound is O(n^2 * a * T) for the number of states [1].")
    assert made_up.dropped and "O(n^2 * a * T)" in made_up.dropped.reason
    # not a source's words whose letters spell it: "O(√T)" is not in "does not"
    assert checker.check("The regret bound does not exceed O(√T) [1].").dropped
    assert checker.check(r"The regret bound is $\widetilde{O}(\sqrt{d^2H^6T})$ [1].").dropped is None


def test_a_version_written_apart_is_the_name_the_source_joins() -> None:
    """"Gemini 2.5 Pro" is the model the abstract writes "gemini-2.5-pro": its "2.5" is
    stated; another version, or 2.5 of something else, is not."""
    evidence = [_evidence(1, "HUMAINE", "The top model is google/gemini-2.5-pro, ranked first "
                          "with a 95.6% posterior probability.")]
    checker = CitationChecker(evidence, embed=lambda text: (1.0, 0.0),
                              question="Which model came first in HUMAINE?")
    assert checker.check("Gemini 2.5 Pro came first with a 95.6% posterior probability [1]."
                         ).dropped is None
    for sentence in ("Gemini 2.6 Pro came first with a 95.6% posterior probability [1].",
                     "The top model used 2.5 GB with a 95.6% posterior probability [1]."):
        verdict = checker.check(sentence)
        assert verdict.dropped and "not in the source" in verdict.dropped.reason, sentence


def test_a_yes_or_no_in_the_questions_own_words_is_not_an_answer() -> None:
    """"Does TEDM rely on an external noise schedule?" answered "Yes, TEDM relies on an
    external noise schedule.": every word is in the abstract ("… avoiding external
    schedules"), so the words cannot tell a right verdict from a wrong one. A verdict that
    says more, in the abstract's words, is checked as before; other questions are not
    affected."""
    text = ("Such a design allows empirical computation of noise and signal scaling directly "
            "from data, avoiding external schedules.")
    evidence = [_evidence(1, "TEDM: Time Series Forecasting with Elucidated Diffusion Models",
                          text)]
    checker = CitationChecker(evidence, embed=lambda text: (1.0, 0.0),
                              question="Does TEDM rely on an external noise schedule?")
    for bare in ("Yes, TEDM relies on an external noise schedule [1].",
                 "No, TEDM doesn't rely on an external noise schedule [1].",
                 "TEDM relies on an external noise schedule [1]."):
        verdict = checker.check(bare)
        assert verdict.dropped and "question's own words" in verdict.dropped.reason, bare
    said = checker.check("No, TEDM computes noise and signal scaling directly from data [1].")
    assert said.dropped is None and said.numbers == (1,)
    other = CitationChecker(evidence, embed=lambda text: (1.0, 0.0),
                            question="What noise schedule does TEDM rely on?")
    assert not (other.check("TEDM relies on an external noise schedule [1].").dropped or
                Dropped("", "")).reason.startswith("says yes or no")


def test_how_many_ways_is_answered_with_a_count_in_words() -> None:
    """"how many different ways of doing that did they try?": "They tried five different
    ways …" gives the count the source states, in the question's words for the things."""
    evidence = [_evidence(1, "Knowledge Purification", "We propose five purification methods "
                          "for rationales of multiple teacher LLMs.")]
    checker = CitationChecker(evidence, embed=lambda text: (1.0, 0.0),
                              question="how many different ways of purifying did they try?")
    assert checker.check("They tried five different ways of purifying rationales [1]."
                         ).dropped is None
    dropped = checker.check("They tried different ways of purifying rationales [1].").dropped
    assert dropped is not None and "the source says nothing of" in dropped.reason


def test_the_quantity_a_question_asks_for_is_a_word_of_its_frame() -> None:
    """"what quantity goes to zero with the privacy budget?": "The quantity that goes to zero
    … is the Nash gap" names it; the abstract never says "quantity"."""
    evidence = [_evidence(1, "DP games", "The Nash gap goes to zero with the privacy budget "
                          "as the number of players grows.")]
    checker = CitationChecker(evidence, embed=lambda text: (1.0, 0.0),
                              question="what quantity goes to zero with the privacy budget?")
    assert checker.check("The quantity that goes to zero with the privacy budget is the Nash "
                         "gap [1].").dropped is None


def test_which_benchmarks_is_answered_by_the_names_the_source_gives() -> None:
    """"mvr - which benchmarks were experiments on": "The experiments were on HumanoidBench and
    MetaWorld" names them, though the abstract never says "benchmark"; a sentence naming
    nothing new, or a name the question gave, still needs a source that says it; so does a
    question asking for more than one word ("the original Avey model")."""
    evidence = [_evidence(1, "MVR: Multi-view Video Reward Shaping", "Experiments on "
                          "HumanoidBench and MetaWorld show that MVR outperforms prior work.")]
    checker = CitationChecker(evidence, embed=lambda text: (1.0, 0.0),
                              question="mvr - which benchmarks were experiments on")
    assert checker.check("The experiments on the benchmarks were HumanoidBench and MetaWorld "
                         "[1].").dropped is None
    for unsaid in ("MVR was tested on benchmarks [1].",
                   "The benchmarks MVR uses show that MVR outperforms prior work [1].",
                   "MVR was tested on Experiments benchmarks [1]."):
        dropped = checker.check(unsaid).dropped
        assert dropped is not None and "says nothing of: benchmark" in dropped.reason, unsaid
    other = CitationChecker(evidence, embed=lambda text: (1.0, 0.0),
                            question="What was the original benchmark suite MVR builds on?")
    dropped = other.check("The original benchmark suite MVR builds on is MetaWorld [1].").dropped
    assert dropped is not None and "says nothing of" in dropped.reason
    # a name is no answer to what has no names ("limitation"), nor an acronym a benchmark
    for question, sentence in (
            ("What is the main limitation of MVR?",
             "The main limitation of MVR is that it was only evaluated on HumanoidBench [1]."),
            ("Which benchmarks does MVR use?", "MVR is evaluated on RL benchmarks [1].")):
        checker = CitationChecker(evidence, embed=lambda text: (1.0, 0.0), question=question)
        dropped = checker.check(sentence).dropped
        assert dropped is not None and "says nothing of" in dropped.reason, question


def test_an_example_the_source_gives_with_e_g_is_an_example() -> None:
    """"What example does the NL-PDDL paper give of a goal worded differently from the
    action?": the abstract gives it as "(e.g., “heat the bread”)"; a source without one
    does not."""
    question = "What example does the NL-PDDL paper give of a goal worded unlike the action?"
    said = 'The example is the goal "heat the bread" and the action "toast the bread" [1].'
    for text, kept in (("Goals (e.g., “heat the bread”) differ from actions (e.g., “toast the "
                        "bread”).", True),
                       ("The goal heat the bread differs from the action toast the bread.",
                        False)):
        checker = CitationChecker([_evidence(1, "NL-PDDL", text)],
                                  embed=lambda text: (1.0, 0.0), question=question)
        dropped = checker.check(said).dropped
        assert (dropped is None) is kept, text
        assert kept or "says nothing of: exampl" in dropped.reason


def test_what_a_paper_does_without_is_not_what_it_has() -> None:
    """"Why did the TempFlow-GRPO authors conclude that they had to train a dedicated
    intermediate reward model?" (a false premise) was answered in its own words; the abstract
    says it does "without requiring specialized intermediate reward models". A sentence that
    says so, or speaks of something else, is checked as before."""
    text = ("A trajectory branching mechanism provides process rewards by concentrating "
            "stochasticity at designated branching points, without requiring specialized "
            "intermediate reward models.")
    checker = CitationChecker([_evidence(1, "TempFlow-GRPO", text)],
                              embed=lambda text: (1.0, 0.0), question=(
                                  "Why did the TempFlow-GRPO authors need a dedicated "
                                  "intermediate reward model?"))
    dropped = checker.check("The authors had to train a dedicated intermediate reward model to "
                            "get process rewards [1].").dropped
    assert dropped is not None and dropped.reason == (
        "the source says it does without: specialized intermediate reward models")
    for kept in ("Process rewards come from trajectory branching, without intermediate reward "
                 "models [1].",
                 "Trajectory branching makes specialized intermediate reward models unnecessary "
                 "[1].",
                 "Trajectory branching provides process rewards at branching points [1]."):
        assert checker.check(kept).dropped is None, kept
    # what it does without ends where the next clause starts; "with and without" is neither
    for text, sentence in (
            ("We fine-tune without labels and reach state-of-the-art accuracy on ImageNet.",
             "It reaches state-of-the-art accuracy on ImageNet [1]."),
            ("Models are trained with and without data augmentation on CIFAR-10.",
             "Models were trained with data augmentation on CIFAR-10 [1]."),
            ("To avoid collisions the robot replans its path in real time.",
             "The robot replans its path in real time [1]."),
            ("Guidance without classifiers for human-object interaction animation.",
             "The guidance for human-object interaction animation builds on diffusion [1].")):
        checker = CitationChecker([_evidence(1, "Paper", text)], embed=lambda text: (1.0, 0.0),
                                  question="What does the paper do?")
        assert checker.check(sentence).dropped is None, sentence


def test_how_many_is_answered_with_a_number_the_question_did_not_give() -> None:
    """"How many human annotators worked on the 2.3K curated samples?" answered "The 2.3K
    curated samples were curated through human-guided annotation": true, and no count."""
    evidence = [_evidence(1, "TSR", "TSR-Suite contains 23K samples, of which 2.3K are curated "
                          "through a human-guided hierarchical annotation process by three "
                          "annotators.")]
    checker = CitationChecker(evidence, embed=lambda text: (1.0, 0.0), question=(
        "How many human annotators worked on the 2.3K curated samples in TSR-Suite?"))
    assert checker.wanted == "number"
    assert not checker.names_wanted("The 2.3K curated samples in TSR-Suite were curated through "
                                    "a human-guided hierarchical annotation process.")
    assert checker.names_wanted("Three annotators curated the 2.3K samples.")
    assert checker.names_wanted("The 2.3K samples were curated by 3 annotators.")


def test_names_with_a_hyphened_letter_or_a_plus_plus_are_names() -> None:
    """"Avey-B's score on GLUE": Avey-B is a name the source must hold (it was read as no
    name at the start of a sentence); "DCFlow++" is not "DCFlow"."""
    assert {"Avey-B", "GLUE"} <= key_terms("Avey-B's score on GLUE is 5.23%.")
    assert "DCFlow++" in key_terms("DCFlow++ adds a loss.")
    assert "3D" in key_terms("person-to-3D generators") and "to-3D" not in key_terms(
        "person-to-3D generators")
    evidence = [_evidence(1, "RaLoRA", "RaLoRA gains +5.23% on GLUE over LoRA.")]
    checker = CitationChecker(evidence, embed=lambda text: (1.0, 0.0),
                              question="What is Avey-B's score on GLUE?")
    dropped = checker.check("Avey-B's score on GLUE is +5.23% [1].").dropped
    assert dropped and "Avey-B" in dropped.reason


def test_what_two_papers_have_in_common_is_checked_against_each() -> None:
    """"Both Alpha and Beta use sparse layers." holds only if each paper's own source says it
    of that paper; "They both …" citing one paper is dropped; one paper's method said of
    both (its words missing from the other's passage) is dropped too."""
    evidence = [
        _evidence(1, "AlphaNet: Sparse", "AlphaNet trains sparse layers with a discriminator "
                  "ensemble."),
        _evidence(2, "BetaGAN: Sparse", "BetaGAN trains sparse layers with a discriminator "
                  "ensemble."),
        _evidence(3, "GammaFlow: Weather", "GammaFlow forecasts weather with a transformer."),
    ]
    checker = CitationChecker(evidence, embed=lambda text: (1.0, 0.0),
                              question="What do AlphaNet and BetaGAN have in common?")
    kept = checker.check("Both AlphaNet and BetaGAN train sparse layers with a discriminator "
                         "ensemble.")
    assert kept.dropped is None and kept.numbers == (1, 2)
    borrowed = checker.check("AlphaNet and GammaFlow both forecast weather with a transformer.")
    assert borrowed.dropped
    one = checker.check("They both train sparse layers with a discriminator ensemble [1].")
    assert one.dropped and "both papers" in one.dropped.reason


def test_both_of_one_paper_and_a_number_with_a_magnitude() -> None:
    """"Both training and inference costs drop" is about one paper and is checked as any
    sentence; "a 2K context" is not held by "32K"."""
    evidence = [_evidence(1, "GlowQ: Fast", "GlowQ cuts both training and inference costs with a "
                          "32K context.")]
    checker = CitationChecker(evidence, embed=lambda text: (1.0, 0.0),
                              question="What does GlowQ cut?")
    assert checker.check("Both training and inference costs drop with GlowQ [1].").dropped is None
    dropped = checker.check("GlowQ cuts training costs with a 2K context [1].").dropped
    assert dropped and "2K" in dropped.reason
    assert checker.check("GlowQ cuts training costs with a 32K context [1].").dropped is None


def test_a_paper_named_in_capitals_is_not_stated_by_the_word_in_another_abstract() -> None:
    """"DIVERSE was run on DrPose15K [DrPose]": the DrPose abstract says "diverse poses", not
    DIVERSE, the paper; the sentence cited to the DIVERSE paper, which writes the name, holds."""
    drpose = _evidence(1, "Direct Reward Fine-Tuning on Poses", "We build DrPose15K, a dataset "
                       "of diverse poses.")
    diverse = _evidence(2, "DIVERSE: Disagreement-Inducing Vector Evolution", "DIVERSE is run "
                        "on MNIST and CIFAR-10.")
    checker = CitationChecker([drpose, diverse], embed=lambda text: (1.0, 0.0),
                              question="just list the datasets DIVERSE was run on")
    wrong = checker.check("DIVERSE was run on DrPose15K [1].")
    assert wrong.dropped is not None and "DIVERSE" in wrong.dropped.reason
    assert checker.check("DIVERSE was run on MNIST and CIFAR-10 [2].").dropped is None
    assert checker.check("DrPose15K holds diverse poses [1].").dropped is None  # the word


def test_a_number_with_a_thousands_separator_is_the_number_its_source_states() -> None:
    """"23,404 participants took part in HUMAINE." against an abstract that says "from 23,404
    participants": the number is the source's however the comma is read, so the sentence, the
    question's words plus that value, is kept."""
    evidence = [_evidence(1, "HUMAINE", "We collected multi-turn conversations from 23,404 "
                          "participants stratified across 22 demographic groups.")]
    checker = CitationChecker(evidence, embed=lambda text: (0.0, 1.0),
                              question="how many people took part in HUMAINE?")
    verdict = checker.check("23,404 participants took part in HUMAINE [1].")
    assert verdict.dropped is None and verdict.numbers == (1,)
    assert checker.check("23,405 participants took part in HUMAINE [1].").dropped is not None


def test_how_many_is_answered_by_one_in_words() -> None:
    """"How many teachers …?" answered "a single teacher" names a count; "one of the teachers"
    does not."""
    evidence = [_evidence(1, "KD", "The student distills from a single teacher model.")]
    checker = CitationChecker(evidence, embed=lambda text: (1.0, 0.0),
                              question="How many teachers does the student distill from?")
    assert checker.names_wanted("The student distills from a single teacher model.")
    assert checker.names_wanted("It uses one teacher.")
    assert not checker.names_wanted("The teacher is one of the strongest models.")


def test_how_many_is_not_answered_by_a_percentage() -> None:
    """"How many people took part?" answered "65% of participants took part" gives a share the
    abstract states about something else, not a count; a question about a share may be."""
    evidence = [_evidence(1, "HUMAINE", "We collected conversations from 23,404 participants; "
                          "65% of them preferred the top model.")]
    counting = CitationChecker(evidence, embed=lambda text: (1.0, 0.0),
                               question="how many people took part in the preference study?")
    assert not counting.names_wanted("65% of participants took part in the study.")
    assert not counting.names_wanted("65 percent of participants took part in the study.")
    assert counting.names_wanted("23,404 participants took part in the study.")
    share = CitationChecker(evidence, embed=lambda text: (1.0, 0.0),
                            question="how many percent preferred the top model?")
    assert share.names_wanted("65% of participants preferred the top model.")


@pytest.mark.parametrize(("question", "sentence", "kept"), [
    # the question's figure of speech, repeated, frames what the source does say
    ("What price do value-decomposition methods pay for their stability?",
     ("Value-decomposition methods pay a price for their stability by assuming restrictive "
      "unimodal policies [1]."), True),
    ("what is the training recipe actually enforcing?",
     "The training recipe actually enforces policy divergence minimization [1].", True),
    ("what's the trick that keeps value-decomposition methods stable?",
     "The trick is assuming restrictive unimodal policies [1].", True),
    # what was asked for, which the source never speaks of, is still not said by it
    ("Who are the authors of the value-decomposition paper?",
     "The authors of the value-decomposition paper are well known [1].", False),
])
def test_figures_of_speech_a_question_uses_are_not_claims(question, sentence, kept) -> None:
    source = _evidence(1, "Heterogeneous Agent Policy Optimization",
                       "Value-decomposition and trust-region methods gain stability by assuming "
                       "restrictive unimodal policies. The training enforces policy divergence "
                       "minimization.")
    checker = CitationChecker([source], embed=lambda text: (1.0, 0.0), question=question)
    verdict = checker.check(sentence)
    assert (verdict.dropped is None) is kept, verdict.dropped


def test_a_figure_of_speech_is_still_a_topic_when_asked_about() -> None:
    """"Is there work on price forecasting?": "price" is the topic, not a figure of speech, and
    a source that never speaks of prices does not support "Yes, it forecasts prices"."""
    source = _evidence(1, "TEDM: Time Series Forecasting with Diffusion",
                       "We forecast time series with a denoising diffusion model.")
    checker = CitationChecker([source], embed=lambda text: (1.0, 0.0), papers=True,
                              question="Is there work on price forecasting with diffusion models?",
                              known=lambda word: word != "pric")
    verdict = checker.check("Yes, TEDM forecasts electricity prices with a diffusion model [1].")
    assert verdict.dropped is not None and "pric" in verdict.dropped.reason


def test_a_name_in_the_plural_is_held_by_its_singular() -> None:
    """"SSD-GS relights scenes made of 3D Gaussians." against an abstract that writes "3D
    Gaussian Splatting": the name is there, singular; "Gaussoids" is not."""
    evidence = [_evidence(1, "SSD-GS", "SSD-GS decomposes 3D Gaussian Splatting into four "
                          "shading components for relighting.")]
    checker = CitationChecker(evidence, embed=lambda text: (1.0, 0.0),
                              question="Which of these use 3D Gaussians to model a scene?")
    assert checker.check("SSD-GS relights scenes made of 3D Gaussians [1].").dropped is None
    dropped = checker.check("SSD-GS relights scenes made of 3D Gaussoids [1].").dropped
    assert dropped and "not in the source: Gaussoids" in dropped.reason



@pytest.mark.parametrize(("sentence", "kept"), [
    ("The authors of AlphaNet are [1].", False),  # broken off where its claim should be
    ("AlphaNet's training time is [1]:", False),
    ("AlphaNet improves accuracy on CIFAR-10 with sparse layers, as in Plan A [1].", True),
    ("AlphaNet improves accuracy by 12% on CIFAR-10 [1].", True),
    ("AlphaNet improves accuracy on CIFAR-10, as its sparse layers are [1]?", False),
    # a formula the model could not write left a hole: "… are and, respectively."
    ("The accuracies of AlphaNet and Plan A are and, respectively [1].", False),
    ("The gains of AlphaNet are, respectively, short and sparse [1].", True),
    ("The accuracy gains of AlphaNet and Plan A are, respectively [1].", False),
    ("AlphaNet and Plan A improve accuracy and training time, respectively [1].", True),
    # where it is, or whose it is, left to the marker
    ("The AlphaNet code can be found at [1].", False),
    ("The accuracy result on CIFAR-10 is established by [1].", False),
    ("AlphaNet improves accuracy by 12% [1].", True),
])
def test_a_sentence_broken_off_before_its_claim_is_dropped(sentence: str, kept: bool) -> None:
    """Seen after "and the authors?" of a paper: the model, with nothing to say, wrote "The
    authors of PEA are [1]." Every word of it is in the abstract; it claims nothing."""
    evidence = [_evidence(1, "AlphaNet", "The authors of AlphaNet improve accuracy by 12% on "
                          "CIFAR-10 with sparse layers, as in Plan A; training time is short.")]
    checker = CitationChecker(evidence, embed=lambda text: (1.0, 0.0),
                              question="What does AlphaNet do?")
    verdict = checker.check(sentence)
    assert (verdict.dropped is None) is kept, verdict
    if not kept:
        assert verdict.dropped is not None and verdict.dropped.reason.startswith("unfinished")


def test_a_name_said_twice_claims_nothing_and_stray_stops_end_once() -> None:
    """Found by the fuzz test of any model reply: "DrPose DrPose . . ." was kept as a claim
    (two words, one name) and shown as "DrPose DrPose . . [1].", a sentence whose citation
    sits after a stop of its own. A sentence of one word, however often, claims nothing; a
    kept sentence ends once, with its citation before the stop."""
    from assistant.answer.writing import Render

    evidence = [_evidence(1, "DrPose", "DrPose maximizes PoseScore, a differentiable reward.")]
    checker = CitationChecker(evidence, embed=lambda text: (1.0, 0.0),
                              question="What do DrPose and GlowQ do?")
    repeated = checker.check("DrPose DrPose . . .")
    assert repeated.dropped and repeated.dropped.reason == "no claim to check"
    kept = checker.check("DrPose maximizes PoseScore . . . [1]")
    assert kept.dropped is None
    assert Render({1: evidence[0]}).sentence(kept) == "DrPose maximizes PoseScore [1]."


def test_an_acronym_spelt_like_a_preposition_ends_a_sentence() -> None:
    from assistant.text.sentences import unfinished

    assert unfinished("The method is more robust than standard AT.") is None  # adversarial training
    assert unfinished("The code can be found at.") == 'unfinished: it ends at "at"'


def test_asked_for_a_paper_a_sentence_ending_at_its_marker_names_it() -> None:
    """"Which paper …?": "[1]" is the paper, "The work with the shortest training time is
    [1]." names it, and is checked as any sentence is."""
    evidence = [_evidence(1, "AlphaNet", "The authors of AlphaNet improve accuracy by 12% on "
                          "CIFAR-10 with sparse layers; training time is short.")]
    checker = CitationChecker(evidence, embed=lambda text: (1.0, 0.0),
                              question="Which paper is best on CIFAR-10?", papers=True)
    named = checker.check("The work with the shortest training time is [1].")
    assert named.dropped is None and named.numbers == (1,), named


_SAFER = ("SAFER makes LLM answers trustworthy. It calibrates a sampling budget on a held-out "
          "calibration set, using the Clopper-Pearson exact method at a user-desired risk level, then filters unreliable "
          "answers with a conformal uncertainty threshold.")


def test_a_sentence_that_adds_what_neither_source_nor_question_says_is_dropped() -> None:
    """Asked why SAFER fine-tunes its LLM (it does not), the model explains: "… because the
    LLM's performance on the calibration set is crucial for the optimal budget". Every name
    in it is the abstract's and it is close to the passage; three of its words are neither
    the abstract's nor the question's, and it is dropped, with them as the reason. The same
    claim in the source's words, or the question's, stays."""
    evidence = [_evidence(1, "SAFER: Risk-Constrained Sample-then-Filter", _SAFER)]
    checker = CitationChecker(evidence, embed=lambda text: (1.0, 0.0),
                              question="why does SAFER need to fine-tune the LLM before "
                                       "calibrating the budget?")
    made_up = checker.check("SAFER needs to fine-tune the LLM before calibrating the budget "
                            "because its performance is crucial for an optimal budget [1].")
    assert made_up.dropped is not None
    assert made_up.dropped.reason.startswith("adds what the source does not say: ")
    for word in ("crucial", "optimal", "performanc"):
        assert word in made_up.dropped.reason
    for sentence in (
        "SAFER calibrates its sampling budget with the Clopper-Pearson exact method [1].",
        # the question's words, linking words and a misspelling of the source's word
        "Before calibrating the budget, SAFER therefore uses a held-out calibraton set [1].",
        # two words of its own are a paraphrase, not a new claim
        "SAFER picks the sampling budget on held-out data, then filters unreliable answers [1].",
        # nor are verbs of using
        "SAFER leverages the Clopper-Pearson exact method and employs a conformal uncertainty "
        "threshold, utilizing a held-out calibration set [1].",
    ):
        assert checker.check(sentence).dropped is None, sentence


def test_added_words_are_content_words_of_the_sentence_alone() -> None:
    """Names and numbers are ``unstated``'s to judge; stop words, linking words and the
    generic verbs of an answer ("uses", "shows") add nothing; words the question gives, or
    the source under another ending, are not added."""
    source = normalise(f"SAFER {_SAFER}")
    question = "How does SAFER pick a budget for online chatbots?"
    assert added_words("SAFER uses the Clopper-Pearson method for its budget, because it "
                       "shows 95% coverage.", source, question) == {"coverag"}
    assert added_words("Online chatbots get a calibrated budget.", source, question) == set()
    assert added_words("The budget is calibrated through online surveys on a platform.",
                       source, question) == {"survey", "platform"}


def test_a_single_or_monocular_thing_states_the_count_one() -> None:
    """"How many cameras does JOSH need?" answered "JOSH needs 1 camera.": the abstract says
    "from monocular videos", which states it; "one" alone does not ("one of the …")."""
    evidence = [_evidence(1, "JOSH", "JOSH reconstructs 4D human-scene motion from monocular "
                          "videos; it is one of the first joint methods, with a single model.")]
    checker = CitationChecker(evidence, embed=lambda text: (1.0, 0.0),
                              question="how many cameras does JOSH need?")
    assert checker.check("JOSH needs 1 camera, as it works from monocular videos [1].").dropped is None
    dropped = checker.check("JOSH needs 2 cameras [1].").dropped
    assert dropped is not None and "not in the source: 2" in dropped.reason
    # an amount is no count of things: "1 billion", "1 point", "1%" need the number itself;
    # nor does "a single" say one of anything else ("1 forward pass" of "a single model")
    for amount in ("JOSH has 1 billion parameters [1].", "JOSH gains 1 point [1].",
                   "JOSH gains 1% [1].", "JOSH needs 1 forward pass [1]."):
        assert checker.check(amount).dropped is not None, amount


def test_a_paper_that_spells_the_asked_acronym_out_mentions_it() -> None:
    """"… a paper that makes GNN memory linear in the number of nodes …": the paper writes
    "a graph neural network architecture", never "GNN", and no shown paper defines it; it
    was left out as "does not mention: gnn" and the question refused. Initials of words that
    merely follow each other by chance in a short acronym do not count."""
    evidence = [_evidence(1, "Efficient Learning on Large Graphs", "We then introduce a graph "
                          "neural network architecture with memory linear in the nodes."),
                _evidence(2, "Value Matching", "Guided sampling over natural networks.")]
    checker = CitationChecker(evidence, embed=lambda text: (1.0, 0.0), several=True,
                              question="which papers make GNN memory linear in the nodes?")
    assert checker.relevant(evidence[0])
    assert not checker.relevant(evidence[1])  # "guided … natural networks" is no GNN
    # plural, and not by the initials of small words met by chance
    plural = CitationChecker(evidence, embed=lambda text: (1.0, 0.0), several=True,
                             question="which papers make GNNs scale?")
    assert plural.relevant(evidence[0])
    chance = [_evidence(1, "Alpha", "It requires a good retriever for the answers.")]
    rag = CitationChecker(chance, embed=lambda text: (1.0, 0.0), several=True,
                          question="which papers use RAG?")
    assert not rag.relevant(chance[0])


def test_a_plain_word_that_the_source_only_negates_is_the_opposite() -> None:
    """Asked "what invasive electrode setup does MindPilot use?", the model wrote "MindPilot
    uses invasive EEG signals": every word is in the abstract, which says "non-invasive EEG"
    (and "invasive settings" of prior work). The sentence says the opposite and is dropped;
    said with "non-", or of what the source says plainly, it stays."""
    evidence = [_evidence(1, "MindPilot", "Unlike prior work limited to invasive settings, "
                          "MindPilot leverages non-invasive EEG with natural images.")]
    checker = CitationChecker(evidence, embed=lambda text: (1.0, 0.0),
                              question="what invasive electrode setup does MindPilot use?")
    flipped = checker.check("MindPilot uses invasive EEG signals [1].").dropped
    assert flipped is not None and flipped.reason == "the source says non-invasive eeg"
    for sentence in ("MindPilot uses non-invasive EEG [1].",
                     "MindPilot uses non\u2011invasive EEG [1].",  # a non-breaking hyphen
                     "Unlike invasive EEG, MindPilot uses natural images [1].",  # a contrast
                     "Prior work was limited to invasive settings [1]."):
        assert checker.check(sentence).dropped is None, sentence


def test_a_value_asked_for_is_a_number_the_answer_gives() -> None:
    """"what's PEA's accuracy on imagenet-c?" was answered "PEA achieves state-of-the-art
    performance in both accuracy and efficiency [1].": true, cited, and no accuracy."""
    from assistant.answer.asked import gives_wanted

    question = "what's PEA's accuracy on imagenet-c at severity 5?"
    assert not gives_wanted("PEA achieves state-of-the-art performance in both accuracy and "
                            "efficiency.", "value", question, "")
    assert gives_wanted("PEA reaches 61.2% accuracy at severity 5.", "value", question, "")
