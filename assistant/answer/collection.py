"""Questions the index answers, not an abstract:

- about the collection itself ("what papers do you have?", "how many papers are indexed?",
  "what topics does this collection cover?"): the papers' titles, nothing cited, rather than
  "not covered" as if an abstract had to say it;
- for one paper's reference ("give me the bibtex for GlowQ", "arxiv link for TEDM"): its link
  and BibTeX entry as the index records them, not written by the model (which makes them up).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from assistant.answer.intent import asks_for_reference
from assistant.index.paper_info import PaperInfo, paper_info
from assistant.text.mentions import paper_names
from assistant.text.stems import terms
from assistant.types import Answer, Citation, Source, Timings

# titles written out in the answer; past this many, the rest are counted
LISTED = 50


def collection_answer(question: str, papers: Sequence[PaperInfo], scope: str = "",
                      seconds: float = 0.0) -> Iterator[str | Answer]:
    """The indexed papers' titles, then the ``Answer``; ``scope`` is the filter they were
    asked through ("year>=2026"), ``seconds`` how long reading the index took."""
    titles = sorted(p.display_title for p in papers)
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


def link(paper: PaperInfo) -> str | None:
    """Where a paper can be read: its arXiv page, else its OpenReview forum, URL or DOI."""
    if paper.arxiv_id:
        return f"https://arxiv.org/abs/{paper.arxiv_id}"
    if paper.openreview_id:
        return f"https://openreview.net/forum?id={paper.openreview_id}"
    return paper.url or (f"https://doi.org/{paper.doi}" if paper.doi else None)


def reference_of(question: str, found: Sequence[Source],
                 first_chunks: Callable[[list[str]], Mapping[str, dict[str, Any]]]
                 ) -> tuple[PaperInfo, str] | None:
    """(the paper, "entry" or "link") when the question asks for one paper's reference and
    nothing else (``intent.asks_for_reference``), the paper among the few ``found`` for it
    whose title and names hold every other word the question gives (its record read by
    ``first_chunks``, as ``Store.first_chunks``); else None."""
    if asks_for_reference(question, set(terms(question))) is None:
        return None  # (its own words as the paper's: whether it could be one at all)
    for source in found:
        wanted = asks_for_reference(question, set(terms(" ".join([source.title,
                                                                   *paper_names(source)]))))
        if wanted is not None:
            first = first_chunks([source.paper_id]).get(source.paper_id)
            return (paper_info(first, ""), wanted) if first is not None else None
    return None


def reference_answer(question: str, paper: PaperInfo, wanted: str, entry: str,
                     seconds: float = 0.0) -> Iterator[str | Answer]:
    """"give me the bibtex for GlowQ" (``wanted`` "entry") or "arxiv link for TEDM"
    ("link"): the paper's title, cited, with its link, and its BibTeX ``entry`` when asked
    for; then the ``Answer``."""
    where = link(paper)
    text = f"{paper.display_title} [1]: " + (
        where or "the index holds no arXiv id, OpenReview id, URL or DOI for it") + "."
    if wanted == "entry":
        text += f"\n\n```bibtex\n{entry.strip()}\n```"
    yield text
    cited = Citation(1, paper.id, paper.title, "", paper.title_derived, paper.arxiv_id,
                     paper.openreview_id, entry)
    yield Answer(question=question, text=text, citations=(cited,), sources=(),
                 abstained=False, timings=Timings(retrieve=round(seconds, 3),
                                                  total=round(seconds, 3)))
