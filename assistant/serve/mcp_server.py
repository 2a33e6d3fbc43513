"""`assistant mcp`: the assistant as a Model Context Protocol server (stdio), for Claude
Desktop, Cursor and other MCP clients.

``PaperTools`` holds the tools as plain methods over one ``Assistant`` (tests call them
directly); ``build_server`` registers them on an ``MCPServer``. Nothing is loaded when the
server starts: the store opens on the first call, the language model on the first ``ask``.
stdout is the protocol: logs go to stderr (the SDK points fd 1 at stderr while it serves).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field

from assistant import __version__
from assistant.config import K_MAX, K_MIN
from assistant.errors import AssistantError, InputError
from assistant.serve.openai_format import citation

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from assistant.api import Assistant
    from assistant.index.store import PaperInfo
    from assistant.types import Answer

log = logging.getLogger(__name__)

K = Annotated[int | None, Field(
    ge=K_MIN, le=K_MAX,
    description=f"how many papers to retrieve ({K_MIN} to {K_MAX}; default: the server's -k, 5)")]

INSTRUCTIONS = (
    "Answers questions about the indexed scientific paper abstracts. Prefer `ask` for a "
    "question: its answer is already checked, every sentence against the abstract passage it "
    "cites as [n]; quote it with its citations and do not add claims of your own. When "
    "`abstained` is true the indexed papers do not cover the question: say so. Use "
    "`search_papers` to find papers, `get_paper` or the paper://{paper_id} resource to read "
    "one abstract, `list_papers` to see them all."
)


# Results ---------------------------------------------------------------------------------
class PaperRef(BaseModel):
    """A paper as listed: its title and ids."""

    paper_id: str = Field(description="the index's id; use it with get_paper or paper://")
    title: str
    title_derived: bool = Field(description="true when the corpus gave no title and the "
                                "assistant derived one from the abstract")
    arxiv_id: str | None = None
    openreview_id: str | None = None
    url: str | None = None


class Paper(PaperRef):
    """A paper with its metadata and whole abstract."""

    collection: str | None = None
    abstract: str


class PaperList(BaseModel):
    count: int
    papers: list[PaperRef]


class Citation(BaseModel):
    """A paper the answer cites as [number], with the passage that supports it."""

    number: int
    title: str
    paper_id: str
    arxiv_id: str | None = None
    openreview_id: str | None = None
    passage: str = Field(description="the abstract passage that supports the sentences "
                         "citing [number]")


class AskResult(BaseModel):
    answer: str = Field(description="the checked answer; [n] cites citations[n-1]")
    citations: list[Citation]
    abstained: bool = Field(description="true when the indexed papers do not cover the question")
    references: str = Field(description="the cited papers as shown under the answer")
    warnings: list[str] = []


class Hit(PaperRef):
    """A retrieved paper: how well it matches the query and its best passages."""

    score: float = Field(description="fused rank score (dense and BM25), higher is better")
    support: float = Field(description="how well the paper supports the query, 0 to 1")
    passages: list[str] = Field(description="the paper's passages that match best")


class SearchResult(BaseModel):
    query: str
    papers: list[Hit]


# Tools ----------------------------------------------------------------------------------
def _ref(paper: PaperInfo) -> dict[str, Any]:
    return {"paper_id": paper.id, "title": paper.title, "title_derived": paper.title_derived,
            "arxiv_id": paper.arxiv_id, "openreview_id": paper.openreview_id, "url": paper.url}


def ask_result(answer: Answer) -> AskResult:
    citations = [Citation(**citation(c)) for c in answer.citations]
    return AskResult(answer=answer.text, citations=citations, abstained=answer.abstained,
                     references=answer.references, warnings=list(answer.warnings))


class PaperTools:
    """The server's tools over one ``Assistant``; each raises ``AssistantError`` subclasses
    with the CLI's messages (``tool_result`` turns them into tool errors)."""

    def __init__(self, assistant: Assistant) -> None:
        self.assistant = assistant

    def ask(self, question: str, k: int | None = None) -> AskResult:
        return ask_result(self.assistant.ask(question, k=k))

    def search_papers(self, query: str, k: int | None = None) -> SearchResult:
        sources = self.assistant.retrieve(query, k=k)
        hits = [Hit(paper_id=s.paper_id, title=s.title, title_derived=s.title_derived,
                    arxiv_id=s.arxiv_id, openreview_id=s.openreview_id,
                    score=round(s.score, 4), support=round(s.support, 3),
                    passages=list(s.passages) or [s.text])
                for s in sources]
        return SearchResult(query=query, papers=hits)

    def list_papers(self) -> PaperList:
        papers = self.assistant.papers(abstracts=False)
        return PaperList(count=len(papers), papers=[PaperRef(**_ref(p)) for p in papers])

    def get_paper(self, id_or_title: str) -> Paper:
        paper = self.find(id_or_title)
        abstract = self.assistant.store.abstract(paper.id)
        if abstract is None:
            raise InputError("this paper's chunks are not all in the index; run `assistant index`")
        return Paper(**_ref(paper), collection=paper.collection, abstract=abstract)

    def find(self, id_or_title: str) -> PaperInfo:
        """One paper by its id, arXiv or OpenReview id, its title or a part of its title."""
        wanted = " ".join(str(id_or_title).split())
        if not wanted:
            raise InputError("give a paper id or a title (list_papers lists them)")
        papers = self.assistant.papers(abstracts=False)
        word = wanted.lower()
        found = [p for p in papers if wanted in (p.id, p.arxiv_id, p.openreview_id)
                 or p.title.lower() == word]
        found = found or [p for p in papers if word in p.title.lower()]
        if not found:
            raise InputError(f"no indexed paper has the id {wanted!r} or {wanted!r} in its "
                             "title; list_papers lists them")
        if len(found) > 1:
            titles = "; ".join(f"{p.title} ({p.id})" for p in found[:10])
            raise InputError(f"{len(found)} papers match {wanted!r}: {titles}; give a paper_id")
        return found[0]

    def paper_text(self, paper_id: str) -> str:
        """The paper as Markdown: title, ids, abstract (the paper:// resource)."""
        paper = self.get_paper(paper_id)
        ids = [f"arXiv {paper.arxiv_id}" if paper.arxiv_id else "",
               f"OpenReview {paper.openreview_id}" if paper.openreview_id else "",
               paper.url or ""]
        title = f"{paper.title} (derived title)" if paper.title_derived else paper.title
        return f"# {title}\n\n{' · '.join(i for i in ids if i) or 'no id'}\n\n{paper.abstract}\n"


# The server ------------------------------------------------------------------------------
def tool_result(produce: Callable[[], BaseModel], mask: Callable[[str], str] = str,
                text: Callable[[Any], str] | None = None) -> CallToolResult:
    """``produce()`` as a tool result: its fields as structured content and ``text`` (or its
    JSON) as the text. The assistant's errors become tool errors with the CLI's one-line
    message; anything else is worded as the CLI words it, its traceback logged on stderr."""
    try:
        result = produce()
    except AssistantError as exc:
        return _error(mask(str(exc)))
    except Exception as exc:  # a failed call must not end the server
        log.exception("tool failed")
        return _error(mask(f"unexpected {type(exc).__name__}: {exc} (the server's log on "
                           "stderr has the details)"))
    shown = text(result) if text else result.model_dump_json(indent=2)
    return CallToolResult(content=[TextContent(type="text", text=shown)],
                          structured_content=result.model_dump(mode="json"))


def _error(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


def _answer_text(result: AskResult) -> str:
    return result.answer + (f"\n\n{result.references}" if result.references else "")


def build_server(assistant: Assistant, mask: Callable[[str], str] = str) -> MCPServer:
    """An ``MCPServer`` with the tools and the paper:// resources over ``assistant``."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ResourceError

    tools = PaperTools(assistant)
    server = MCPServer("assistant", instructions=INSTRUCTIONS, version=__version__)
    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)

    @server.tool(annotations=read_only)
    def ask(question: str, k: K = None) -> Annotated[CallToolResult, AskResult]:
        """Answer a question about the indexed paper abstracts. Every sentence of the answer
        cites a paper as [n] and was checked against the abstract passage in citations[n-1];
        when the papers do not cover the question, abstained is true and nothing is cited.
        Use it for what papers say (methods, results, datasets) and for "which paper ...?"
        questions. Takes a few seconds to a minute (the first call loads the model)."""
        return tool_result(lambda: tools.ask(question, k), mask, _answer_text)

    @server.tool(annotations=read_only)
    def search_papers(query: str, k: K = None) -> Annotated[CallToolResult, SearchResult]:
        """Find the indexed papers most relevant to a query (hybrid dense and BM25 search),
        best first, each with its scores and best-matching passages. Fast; no language model.
        Use it to find papers on a topic, then get_paper to read one."""
        return tool_result(lambda: tools.search_papers(query, k), mask)

    @server.tool(annotations=read_only)
    def get_paper(id_or_title: str) -> Annotated[CallToolResult, Paper]:
        """One indexed paper's metadata and whole abstract, by its paper_id, arXiv id,
        OpenReview id, title, or a unique part of its title."""
        return tool_result(lambda: tools.get_paper(id_or_title), mask)

    @server.tool(annotations=read_only)
    def list_papers() -> Annotated[CallToolResult, PaperList]:
        """Every indexed paper (title, paper_id, arXiv and OpenReview ids), in title order."""
        return tool_result(tools.list_papers, mask)

    @server.resource("paper://{paper_id}", name="paper", mime_type="text/markdown",
                     description="An indexed paper: title, ids and abstract, as Markdown.")
    def paper(paper_id: str) -> str:
        try:
            return tools.paper_text(paper_id)
        except AssistantError as exc:
            raise ResourceError(mask(str(exc))) from exc

    return server


def serve(assistant: Assistant, mask: Callable[[str], str] = str) -> None:
    """Serve over stdio until the client closes the connection."""
    build_server(assistant, mask).run("stdio")
