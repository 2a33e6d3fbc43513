"""The model's judgement of whether a "which papers …?" question has an answer at all
(assistant/answer/chain.py, ``_Reply.listed``): measure it on dev and choose ``list_threshold``.

    python benchmarks/list_probe.py --out rows.jsonl [--split dev]
    python benchmarks/list_probe.py --from rows.jsonl [--report dev-eval.json …]

For each list question of the split (``intent.asks_for_several``) that calls no paper by name,
the papers the support gate shows the model, best supported first, up to
``AnswerConfig.list_papers``, are put to the judge in ``prompts/judge_list.md`` (the question,
the paper's title and the first 1,200 characters of its abstract); one JSON line per question
with each paper's support, P(yes) and whether it is a gold paper.

The threshold: a list is written when one of those papers reaches it, else the answer is "not
covered". ``--from`` prints, for each threshold, the near misses stopped and the answerable lists
refused, among the questions the eval ``--report``s answered (those they abstained on change
nothing); the one chosen stops the most near misses for the fewest answerable lists. The
questions are searched for as ``Assistant.retrieve`` does (names re-cased), without what a
question says to leave out or a typo's repair, which ``ask`` also does.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from assistant import resources  # noqa: E402
from assistant.answer.citations import Evidence  # noqa: E402
from assistant.answer.evidence import AnswerConfig, called  # noqa: E402
from assistant.answer.intent import asking, asks_for_several  # noqa: E402
from assistant.answer.support import backing, calibration  # noqa: E402
from assistant.api import Assistant  # noqa: E402
from assistant.eval.questions import load_questions  # noqa: E402


def probe(split: str, out: Path) -> None:
    assistant = Assistant()
    judge = assistant.judge
    if judge is None:
        raise SystemExit("the configured model gives no token probabilities: no judge to probe")
    fitted, count = calibration(), AnswerConfig().list_papers
    with out.open("w", encoding="utf-8") as handle:
        for q in load_questions(resources.eval_questions(), split):
            text = q.joined()
            if q.kind == "followup" or not asks_for_several(text):
                continue
            sources = assistant.retrieve(text)
            supported = backing(sources, fitted.threshold, fitted.relative)
            if called(text, [Evidence(n, s, s.passages, ()) for n, s in enumerate(supported)]):
                continue  # "Which techniques does the GlowQ abstract name?": not judged
            shown = sorted(supported, key=lambda s: -s.support)[:count]
            papers = []
            for source in shown:
                whole = assistant.store.abstract(source.paper_id) or source.text
                p_yes = judge(asking(text), replace(source, passages=(whole,)), "judge_list")
                papers.append({"paper_id": source.paper_id, "gold": source.paper_id in q.gold,
                               "support": source.support,
                               "p_yes": None if p_yes is None else round(p_yes, 4)})
            row = {"id": q.id, "split": q.split, "answerable": not q.expect_abstain,
                   "papers": papers}
            handle.write(json.dumps(row) + "\n")
            handle.flush()
            print(q.id, row["answerable"], [(p["gold"], p["p_yes"]) for p in papers], flush=True)


def curve(rows: list[dict], answered: set[str] | None) -> None:
    """Near misses stopped and answerable lists refused at each threshold."""
    # a paper without a judgement (no token probabilities) lets the list be written
    judged = [r for r in rows if r["papers"] and (answered is None or r["id"] in answered)
              and all(p["p_yes"] is not None for p in r["papers"])]
    for step in range(21):
        threshold = round(0.55 + 0.01 * step, 2)
        stopped = [r["id"] for r in judged if not r["answerable"]
                   and max(p["p_yes"] for p in r["papers"]) < threshold]
        refused = [r["id"] for r in judged if r["answerable"]
                   and max(p["p_yes"] for p in r["papers"]) < threshold]
        print(f"{threshold:.2f}  near misses stopped {len(stopped):2d}  answerable refused "
              f"{len(refused):2d}  {' '.join(refused)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="probe the split and write its rows here")
    parser.add_argument("--split", default="dev", choices=["dev", "test"])
    parser.add_argument("--from", dest="source", type=Path, help="rows written by --out")
    parser.add_argument("--report", type=Path, action="append", default=[],
                        help="eval reports: count only the questions they answered")
    args = parser.parse_args()
    if args.out:
        probe(args.split, args.out)
    path = args.source or args.out
    if path is None:
        parser.error("give --out (probe) or --from (the curve)")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    answered = None
    if args.report:
        answered = {r["id"] for report in args.report for r in json.loads(
            report.read_text(encoding="utf-8"))["questions"]["assistant"] if not r["abstained"]}
    curve(rows, answered)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
