"""A deterministic scale corpus: new abstracts recombined from the bundled ones.

Each generated paper takes an opening, a method and a results sentence from different
bundled abstracts, gives the method a unique invented name, and gets a unique title, so
N papers look like N distinct abstracts of realistic length. Same seed, same corpus.
"""

from __future__ import annotations

import argparse
import json
import random
import re
from pathlib import Path

from assistant.ingest.corpus import load_papers
from assistant.resources import bundled_corpus_dir
from assistant.text.sentences import split_sentences

_SYLLABLES = ["ra", "lo", "mi", "ven", "tor", "qua", "zel", "dri", "pho", "nex", "ka", "sul", "bri", "ont"]
_NAMED = re.compile(r"\b[A-Z][A-Za-z]*[A-Z][A-Za-z0-9\-]*\b")


def _name(rng: random.Random, index: int) -> str:
    stem = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 3))).capitalize()
    return f"{stem}{index}"


def generate(n: int, seed: int = 7) -> list[dict[str, str]]:
    """``n`` papers as JSONL-ready records with ``title`` and ``abstract``."""
    rng = random.Random(seed)
    pools = [split_sentences(p.abstract) for p in load_papers([bundled_corpus_dir()])]
    openings = [s[0] for s in pools]
    middles = [x for s in pools for x in s[1:-1]]
    endings = [s[-1] for s in pools]
    papers = []
    for index in range(n):
        name = _name(rng, index)
        body = [rng.choice(openings)] + rng.sample(middles, rng.randint(4, 7)) + [rng.choice(endings)]
        text = " ".join(_NAMED.sub(name, sentence, count=1) for sentence in body)
        topic = " ".join(body[0].split()[:8]).rstrip(",.;:")
        papers.append({"id": f"gen-{seed}-{index}", "title": f"{name}: {topic}", "abstract": text})
    return papers


def write(n: int, path: Path, seed: int = 7) -> Path:
    """Write the corpus as JSONL and return its path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        for paper in generate(n, seed):
            out.write(json.dumps(paper) + "\n")
    return path


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--papers", type=int, required=True)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    print(write(args.papers, args.out, args.seed))
