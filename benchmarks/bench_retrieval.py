"""Retrieval over scanned report pages: the package's chunks against common splitters.

Method (docs/benchmarks.md, "Retrieval"):
1. Every TAT-QA context becomes one scanned page (a one-page PDF) whose OCR answer is
   the page Markdown of ``retrieval_set.page_markdown``; the simulator serves it, and
   the pages are read as users read them: ``SimpleDirectoryReader`` with ``OvisReader``
   (LlamaIndex Documents, one per page) and ``OvisLoader`` (LangChain).
2. Each chunker gets those same Documents and a budget in MiniLM word pieces.
3. Chunks are embedded as each framework embeds them (LlamaIndex: text plus the
   metadata not excluded from embedding; LangChain: ``page_content``) with
   all-MiniLM-L6-v2 and ranked by cosine, and separately by BM25 (bm25s, English stop
   words) over the whole corpus.
4. A question is a hit at k when the top k chunks, counting only chunks of its own
   page, hold every target (``retrieval_set.targets``). MRR is 1/the first such k (0
   past 20).
5. ``--table-style`` writes the same tables as other models do (``<th>`` in a
   ``<thead>``, Markdown pipe tables), to check that the margins do not hang on one
   way of writing them.
6. Margins: the worse of the package's chunkers against the best other, and how often
   another set of as many reports (the pages resampled) would meet each target.

    python benchmarks/bench_retrieval.py [--budgets 256 512] [--limit N] [--data FILE]
        [--chunkers NAME ...] [--chart docs/retrieval_hit5.png] [--workdir DIR]
        [--table-style td|th|pipe|pipe-repeated]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, redirect_stdout
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from embedding import count_tokens, embed
from retrieval_chunkers import (
    CHUNKERS,
    OURS,
    PACKAGE,
    Chunker,
    Inputs,
    RetrievalChunk,
    docling_available,
)
from retrieval_set import DEFAULT_DATA, HALVES, TABLE_STYLES, Page, covers, load_pages

DEPTH = 20
SOURCES = ("table", "text", "table-text")


@dataclass(frozen=True)
class Target:
    """One of the issue's targets: the hit@5 margin of a ranking on an answer source
    must reach ``least`` (pass it, when ``strict``)."""

    label: str
    ranker: str
    source: str
    least: float
    strict: bool = False

    def met(self, margin: Any) -> Any:
        """For one margin or an array of them (then elementwise)."""
        margin = np.round(margin, 9)  # a difference of two fractions: no float dust
        return margin > self.least if self.strict else margin >= self.least


#: ahead by 0.05 on dense hit@5 and on table questions, not behind on text, ahead on BM25
TARGETS = (Target("dense hit@5", "dense", "all", 0.05), Target("table", "dense", "table", 0.05),
           Target("text", "dense", "text", 0.0), Target("BM25 hit@5", "bm25", "all", 0.0, True))


@dataclass
class Score:
    """Each question's first hit, with its page and answer source; hits at k and MRR
    per answer source are read from them."""

    #: per question, in order: its page, its answer source, the first k that hits
    answers: list[tuple[str, str, int | None]] = field(default_factory=list)

    def add(self, source: str, first: int | None, page: str) -> None:
        self.answers.append((page, source, first))

    def page_hits(self, source: str, k: int) -> dict[str, tuple[int, int]]:
        """Per page: hits at ``k`` and questions, of ``source`` ("all": every source)."""
        totals: dict[str, tuple[int, int]] = {}
        for page, kind, first in self.answers:
            if source in ("all", kind):
                hits, questions = totals.get(page, (0, 0))
                totals[page] = (hits + within(first, k), questions + 1)
        return totals

    def hit(self, k: int, source: str = "all") -> float:
        firsts = self._firsts(source)
        return sum(within(first, k) for first in firsts) / max(1, len(firsts))

    def mrr(self, source: str = "all") -> float:
        firsts = self._firsts(source)
        return sum(1 / first for first in firsts if first) / max(1, len(firsts))

    def _firsts(self, source: str) -> list[int | None]:
        return [first for _, kind, first in self.answers if source in ("all", kind)]


def within(first: int | None, k: int) -> bool:
    """Is a question whose first hit is at ``first`` (None: none) a hit at ``k``?"""
    return first is not None and first <= k


def read_inputs(files: Mapping[str, list[str]], folder: Path) -> Inputs:
    """Serve each file's pages of Markdown from the simulator and read the PDFs as users
    do."""
    from llama_index.core import SimpleDirectoryReader

    from ovisocr_loader.langchain import OvisLoader
    from ovisocr_loader.llama_index import OvisReader
    from ovisocr_loader.testing import LatencyModel, Simulator, marked_pdf

    sim = Simulator(latency=LatencyModel(speed=500)).start()
    for name, markdown in files.items():
        pdf, page_ids = marked_pdf(len(markdown))
        (folder / name).write_bytes(pdf)
        for page_id, text in zip(page_ids, markdown, strict=True):
            sim.register(page_id, text)
    options: dict[str, Any] = {"base_url": sim.base_url, "cache_dir": str(folder / "cache")}
    reader = OvisReader(**options)
    llama_docs = asyncio.run(SimpleDirectoryReader(
        str(folder), required_exts=[".pdf"], file_extractor={".pdf": reader}).aload_data())
    langchain_pages = list(OvisLoader(str(folder), **options).lazy_load())

    def langchain_chunks(budget: int, count: Any) -> list[Any]:
        loader = OvisLoader(str(folder), mode="elements", chunk_size=budget,
                            length_function=count, **options)
        return list(loader.lazy_load())

    return Inputs(llama_docs, langchain_pages, langchain_chunks)


class Index:
    """Dense and BM25 rankings over one chunker's chunks."""

    def __init__(self, chunks: list[RetrievalChunk], vectors: dict[str, Any]) -> None:
        import bm25s

        self.chunks = chunks
        self.matrix = np.stack([vectors[c.embed] for c in chunks])
        self.bm25 = bm25s.BM25()
        self.bm25.index(bm25s.tokenize([c.embed for c in chunks], stopwords="en",
                                       show_progress=False), show_progress=False)

    def dense(self, query_vectors: Any) -> Any:
        scores = query_vectors @ self.matrix.T
        return np.argsort(-scores, axis=1)[:, :DEPTH]

    def lexical(self, queries: list[str]) -> Any:
        import bm25s

        tokens = bm25s.tokenize(queries, stopwords="en", show_progress=False)
        depth = min(DEPTH, len(self.chunks))
        ranked, _ = self.bm25.retrieve(tokens, k=depth, show_progress=False)
        return ranked


def first_hit(ranking: Sequence[int], chunks: list[RetrievalChunk], page: str,
              wanted: list[str]) -> int | None:
    """The smallest k whose top-k chunks of ``page`` hold every target."""
    held: list[str] = []
    for rank, position in enumerate(ranking, 1):
        chunk = chunks[int(position)]
        if chunk.page != page:
            continue
        held.append(chunk.content)
        if covers("\n".join(held), wanted):
            return rank
    return None


def score(index: Index, rankings: Any, questions: list[tuple[Page, Any]]) -> Score:
    result = Score()
    for ranking, (page, question) in zip(rankings, questions, strict=True):
        result.add(question.source, first_hit(ranking, index.chunks, page.file_name,
                                              question.targets), page.file_name)
    return result


def vectors_for(texts: list[str], cache: dict[str, Any]) -> dict[str, Any]:
    missing = sorted({t for t in texts if t not in cache})
    if missing:
        for text, vector in zip(missing, embed(missing), strict=True):
            cache[text] = vector
    return cache


#: the same folder on every run: LlamaIndex embeds each chunk's ``file_path``, so a
#: random folder name would move the figures of the chunkers that keep that key
WORKDIR = Path(tempfile.gettempdir()) / "ovisocr-bench-retrieval"


@contextmanager
def emptied(folder: Path) -> Iterator[Path]:
    """``folder``, created empty and removed afterwards (one run at a time uses it)."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def run(pages: Sequence[Page], budgets: list[int], names: list[str], workdir: Path = WORKDIR,
        chunkers: Mapping[str, Chunker] = CHUNKERS) -> dict[str, Any]:
    """Every chunker at every budget over ``pages`` (anything with a ``file_name``, its
    ``questions`` and its ``markdown``, one page's or a list of pages')."""
    questions = [(page, q) for page in pages for q in page.questions]
    files = {page.file_name: page.markdown if isinstance(page.markdown, list)
             else [page.markdown] for page in pages}
    query_vectors = embed([q.text for _, q in questions])
    vectors: dict[str, Any] = {}
    results: dict[str, Any] = {}
    with emptied(workdir) as folder:
        started = time.perf_counter()
        inputs = read_inputs(files, folder)
        print(f"read {len(pages)} pages in {time.perf_counter() - started:.1f} s",
              file=sys.stderr)
        for budget in budgets:
            for name in names:
                chunks = chunkers[name](inputs, budget, count_tokens)
                index = Index(chunks, vectors_for([c.embed for c in chunks], vectors))
                dense = score(index, index.dense(query_vectors), questions)
                lexical = score(index, index.lexical([q.text for _, q in questions]),
                                questions)
                results[f"{name}@{budget}"] = {
                    "chunker": name, "budget": budget, "chunks": len(chunks),
                    "dense": dense, "bm25": lexical, "chunk_list": chunks}
                print(f"{name} @ {budget}: {len(chunks)} chunks, dense hit@5 "
                      f"{dense.hit(5):.3f}, bm25 hit@5 {lexical.hit(5):.3f}", file=sys.stderr)
    return results


def report(results: dict[str, Any], questions: int) -> str:
    """A Markdown table per budget: dense hit@1/3/5, MRR, hit@5 by source, BM25."""
    lines = [f"{questions} questions"]
    for budget in sorted({r["budget"] for r in results.values()}):
        lines += ["", f"Budget {budget} MiniLM word pieces:", "",
                  "| chunker | chunks | dense hit@1 | hit@3 | hit@5 | MRR | table | text "
                  "| table-text | BM25 hit@1 | BM25 hit@5 | BM25 MRR |",
                  "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
                  "| ---: | ---: |"]
        for result in (r for r in results.values() if r["budget"] == budget):
            dense, bm25 = result["dense"], result["bm25"]
            cells = [dense.hit(1), dense.hit(3), dense.hit(5), dense.mrr(),
                     *(dense.hit(5, s) for s in SOURCES), bm25.hit(1), bm25.hit(5),
                     bm25.mrr()]
            lines.append(f"| {result['chunker']} | {result['chunks']} | "
                         + " | ".join(f"{c:.3f}" for c in cells) + " |")
    return "\n".join(lines)


def margins(results: dict[str, Any]) -> str:
    """How far the worse of the package's two chunkers is ahead of the best other
    chunker, per budget."""
    lines = []
    for budget, ours, others in _contenders(results):
        for target in TARGETS:
            worst, best = _paired(ours, others, target.ranker, target.source)
            worst_ours, best_other = worst.hit(5, target.source), best.hit(5, target.source)
            lines.append(f"budget {budget} {target.label}: ours (worse of two) {worst_ours:.3f}, "
                         f"best other {best_other:.3f}, margin {worst_ours - best_other:+.3f}")
    return "\n".join(lines)


def _contenders(results: dict[str, Any]) -> Iterator[tuple[int, list[Any], list[Any]]]:
    """Per budget: the package's results (its approximate-token row aside) and the
    other chunkers' results, when there are both."""
    for budget in sorted({r["budget"] for r in results.values()}):
        at = [r for r in results.values() if r["budget"] == budget]
        ours = [r for r in at if r["chunker"] in OURS]
        others = [r for r in at if r["chunker"] not in PACKAGE]
        if ours and others:
            yield budget, ours, others


def _paired(ours: list[Any], others: list[Any], ranker: str, source: str
            ) -> tuple[Score, Score]:
    """The worse of ours and the best of the others on one measure (hit@5)."""
    def measure(result: Any) -> float:
        return float(result[ranker].hit(5, source))
    return min(ours, key=measure)[ranker], max(others, key=measure)[ranker]


def target_odds(results: dict[str, Any], draws: int = 2000, seed: int = 0) -> str:
    """How often another set of as many reports would meet each target, and all of them:
    the pages drawn again with replacement (a bootstrap over reports; the index keeps
    every page), the worse of ours and the best other chosen anew in each draw. A
    margin can be met on these questions by luck; this says how much of it is luck."""
    contenders = list(_contenders(results))
    if not contenders:
        return ""
    pages = sorted({page for _, ours, _ in contenders for r in ours
                    for page, _, _ in r["dense"].answers})
    counts = np.random.default_rng(seed).multinomial(
        len(pages), np.full(len(pages), 1 / len(pages)), size=draws)
    lines, every = [], np.ones(draws, dtype=bool)
    for budget, ours, others in contenders:
        for target in TARGETS:
            margins = _draw_margins(ours, others, target, pages, counts)
            met = target.met(margins)
            every &= met
            low, high = np.percentile(margins, [5, 95])
            lines.append(f"budget {budget} {target.label}: on resampled sets of reports "
                         f"margin {low:+.3f} to {high:+.3f} (5th-95th percentile), target "
                         f"met in {met.mean():.0%} of them")
    lines.append(f"every target at every budget met in {every.mean():.0%} of {draws} "
                 "resampled sets of reports")
    return "\n".join(lines)


def _draw_margins(ours: list[Any], others: list[Any], target: Target, pages: list[str],
                  counts: Any) -> Any:
    """Per draw, the worse of ours minus the best of the others on ``target``."""
    def rates(group: list[Any]) -> Any:
        return np.stack([_draw_rates(r[target.ranker], target.source, pages, counts)
                         for r in group])
    return rates(ours).min(axis=0) - rates(others).max(axis=0)


def _draw_rates(score: Score, source: str, pages: list[str], counts: Any) -> Any:
    """hit@5 on ``source`` questions in each draw (``counts``: draws x pages, how many
    times each page was drawn)."""
    per_page = score.page_hits(source, 5)
    hits = np.array([per_page.get(p, (0, 0))[0] for p in pages])
    questions = np.array([per_page.get(p, (0, 0))[1] for p in pages])
    return (counts @ hits) / np.maximum(1, counts @ questions)


def chart(results: dict[str, Any], path: Path) -> None:
    """Grouped bars: dense and BM25 hit@5 per chunker, one group per budget."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    budgets = sorted({r["budget"] for r in results.values()})
    names = list(dict.fromkeys(r["chunker"] for r in results.values()))
    fig, axes = plt.subplots(1, 2, figsize=(12, 5.6), sharey=True)
    width = 0.8 / len(names)
    for axis, measure in zip(axes, ("dense", "bm25"), strict=True):
        for offset, name in enumerate(names):
            values = [results[f"{name}@{b}"][measure].hit(5) if f"{name}@{b}" in results
                      else 0 for b in budgets]
            positions = [i + offset * width for i in range(len(budgets))]
            axis.bar(positions, values, width, label=name,
                     edgecolor="black" if name in OURS else None)
        axis.set_xticks([i + width * (len(names) - 1) / 2 for i in range(len(budgets))])
        axis.set_xticklabels([f"{b} word pieces" for b in budgets])
        axis.set_title("MiniLM dense hit@5" if measure == "dense" else "BM25 hit@5")
        axis.set_ylim(0, 1)
        axis.grid(axis="y", alpha=0.3)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=8, loc="lower center", ncol=4)
    fig.suptitle("TAT-QA test pages as OCR Markdown: answer in the top 5 chunks")
    fig.tight_layout(rect=(0, 0.1, 1, 1))  # room below the bars for the legend
    fig.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--limit", type=int, default=None, help="first N contexts only")
    ap.add_argument("--half", choices=HALVES, default=None,
                    help="one half of the set only (a: to tune on, b: reported apart)")
    ap.add_argument("--budgets", type=int, nargs="+", default=[256, 512])
    ap.add_argument("--chunkers", nargs="+", choices=list(CHUNKERS), default=list(CHUNKERS))
    ap.add_argument("--chart", type=Path, default=None, help="write a PNG of hit@5")
    ap.add_argument("--table-style", choices=list(TABLE_STYLES), default="td",
                    help="how the pages write their tables (default: %(default)s, plain "
                         "<td> header rows with colspans)")
    ap.add_argument("--workdir", type=Path, default=WORKDIR,
                    help="emptied and used for the page files (default: %(default)s)")
    args = ap.parse_args(argv)
    if not args.data.is_file():
        print(f"no retrieval data at {args.data}: skipped (give --data)")
        return 0
    names = [n for n in args.chunkers if n != "docling HybridChunker" or docling_available()]
    if len(names) < len(args.chunkers):
        print("docling is not installed: its HybridChunker is left out", file=sys.stderr)
    pages = load_pages(args.data, args.limit, args.table_style, args.half)
    with redirect_stdout(sys.stderr):  # LlamaIndex prints its warnings: keep the report clean
        results = run(pages, args.budgets, names, args.workdir)
    print(report(results, sum(len(p.questions) for p in pages)))
    print()
    print(margins(results))
    print()
    print(target_odds(results))
    if args.chart is not None:
        chart(results, args.chart)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
