"""The tokenizer-free token estimate against MiniLM's word pieces, on real pages.

Every page is parsed and chunked at ``--budget`` with the default estimate, and
again with the rule of thumb it replaced (four characters a token); each chunk is
then counted by all-MiniLM-L6-v2's tokenizer. Printed per source of pages and rule:
chunks, how many run past the budget in MiniLM word pieces, the largest, and the
rule's count over the word pieces (median and 5th percentile). Then the chunker's
time per page with the estimate.

    python benchmarks/bench_token_estimate.py [--budget 256]

Pages: the TAT-QA pages of the retrieval benchmark and the other models' pages in
``../shared/reference/model_outputs`` (Chinese, German, Spanish, Persian, formulas);
a source that is absent is left out.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from pathlib import Path

from embedding import count_tokens
from retrieval_set import DEFAULT_DATA, load_pages

from ovisocr_loader import PageResult, ParsedDocument, chunk_document
from ovisocr_loader.elements import approx_tokens, parse_page

MODEL_OUTPUTS = Path(__file__).resolve().parents[2] / "shared" / "reference" / "model_outputs"


def sources() -> dict[str, list[str]]:
    """Page Markdown by source."""
    pages: dict[str, list[str]] = {}
    if DEFAULT_DATA.is_file():
        pages["TAT-QA"] = [page.markdown for page in load_pages(DEFAULT_DATA, None)]
    for path in sorted(MODEL_OUTPUTS.glob("*/*.md")):
        pages.setdefault(path.parent.name, []).append(path.read_text())
    return pages


def as_document(markdown: str) -> ParsedDocument:
    return ParsedDocument(source="page", pages=[
        PageResult(page_number=1, elements=parse_page(markdown, 1))])


def four_characters(text: str) -> int:
    """The rule of thumb the estimate replaced."""
    return math.ceil(len(text) / 4)


def report(name: str, documents: list[ParsedDocument], budget: int) -> str:
    """A table row: each rule's chunks, those past the budget in MiniLM word pieces,
    the largest, and the rule's count over the word pieces (median / 5th percentile)."""
    cells = [name]
    for rule in (approx_tokens, four_characters):
        texts = [c.text for document in documents
                 for c in chunk_document(document, budget, count_tokens=rule)]
        pieces = [count_tokens(t) for t in texts]
        ratio = sorted(rule(t) / n for t, n in zip(texts, pieces, strict=True) if n >= 5)
        cells += [f"{len(texts)} / {sum(n > budget for n in pieces)} / {max(pieces)}",
                  f"{statistics.median(ratio):.2f} / {ratio[len(ratio) // 20]:.2f}"]
    return "| " + " | ".join(cells) + " |"


def chunking_ms(documents: list[ParsedDocument], budget: int) -> float:
    """Best of three: milliseconds per page to chunk parsed pages."""
    best = math.inf
    for _ in range(3):
        started = time.perf_counter()
        for document in documents:
            chunk_document(document, budget)
        best = min(best, time.perf_counter() - started)
    return 1000 * best / len(documents)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--budget", type=int, default=256)
    args = ap.parse_args()
    pages = sources()
    if not pages:
        print("no pages: ../shared is absent")
        return 0
    print(f"| pages | estimate: chunks / over {args.budget} word pieces / largest | estimate "
          "/ word pieces, median / 5th pct | 4 characters a token: chunks / over / largest "
          "| 4 characters / word pieces |")
    print("| --- | --- | --- | --- | --- |")
    documents = {name: [as_document(md) for md in markdowns]
                 for name, markdowns in pages.items()}   # parsed once, chunked per rule
    for name, parsed in documents.items():
        print(report(name, parsed, args.budget))
    every = [document for parsed in documents.values() for document in parsed]
    print(f"\nchunking: {chunking_ms(every, args.budget):.2f} ms per page "
          f"({len(every)} pages, best of 3)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
