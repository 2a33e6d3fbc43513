"""Questions about the collection itself ("what papers do you have?", "how many papers are
indexed?", "what topics does this collection cover?"): answered from the index, each paper by
its title, rather than "not covered" as if an abstract had to say it. Nothing is cited: no
claim is made about what a paper says."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from assistant.index.paper_info import PaperInfo
from assistant.types import Answer, Timings

# titles written out in the answer; past this many, the rest are counted
LISTED = 50


def collection_answer(question: str, papers: Sequence[PaperInfo], scope: str = "",
                      seconds: float = 0.0) -> Iterator[str | Answer]:
    """The indexed papers' titles, then the ``Answer``; ``scope`` is the filter they were
    asked through ("year>=2026"), ``seconds`` how long reading the index took."""
    titles = sorted(p.title for p in papers)
    count = len(titles)
    if not titles and scope:
        text = f"No indexed paper matches {scope}; `assistant papers` lists them all."
    elif not titles:
        text = ("No paper is indexed: `assistant index` indexes the bundled ICLR 2026 abstracts "
                "or your own files.")
    else:
        shown = "\n".join(f"{n}. {t}" for n, t in enumerate(titles[:LISTED], start=1))
        more = (f"\n… and {count - LISTED:,} more; `assistant papers` lists them all."
                if count > LISTED else
                "\nAsk about any of them by name or topic; `assistant papers` gives their ids.")
        text = (f"{count:,} paper{'s' * (count != 1)} {'is' if count == 1 else 'are'} "
                f"indexed{f' where {scope}' if scope else ''}:\n{shown}{more}")
    yield text
    yield Answer(question=question, text=text, citations=(), sources=(), abstained=False,
                 timings=Timings(retrieve=round(seconds, 3), total=round(seconds, 3)))
