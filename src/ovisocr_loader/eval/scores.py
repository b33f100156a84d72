"""Scoring runs against references, summaries, and two runs head to head.

Percentiles interpolate linearly between the closest ranks (numpy's default): the
10th percentile of ``n`` sorted scores sits at rank ``0.1 * (n - 1)``. Head to head,
A wins a document when its F1 exceeds B's by more than the tie margin (default
0.005), loses when it falls short by more, and ties otherwise.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from .runs import Reference, Run, RunDocument, match_reference
from .words import Score, score, words

DEFAULT_TIE_MARGIN = 0.005
DEFAULT_WORST = 5
FLAGS = ("failed", "loop_trimmed", "truncated", "blank")


@dataclass(frozen=True)
class DocumentScore:
    """One document against its reference (and page by page when the reference has
    pages and their count matches)."""

    name: str
    score: Score
    statuses: dict[str, int]
    page_scores: list[tuple[int, Score]] | None = None
    error: str | None = None


@dataclass
class Evaluation:
    """Every document of a run that has a reference, and what could not be scored."""

    documents: list[DocumentScore] = field(default_factory=list)
    without_reference: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def by_name(self) -> dict[str, DocumentScore]:
        return {d.name: d for d in self.documents}


@dataclass(frozen=True)
class Summary:
    documents: int
    mean: float
    median: float
    p10: float
    precision: float
    recall: float
    pages: int
    flagged: dict[str, int]
    worst: list[tuple[str, float]]


def evaluate(run: Run, references: dict[str, Reference]) -> Evaluation:
    """Score every document of ``run`` that has a reference."""
    result = Evaluation(problems=list(run.problems))
    for name, document in sorted(run.documents.items()):
        reference = match_reference(name, references)
        if reference is None:
            result.without_reference.append(name)
            continue
        scored, problem = score_document(document, reference)
        result.documents.append(scored)
        if problem:
            result.problems.append(problem)
    return result


def score_document(document: RunDocument, reference: Reference
                   ) -> tuple[DocumentScore, str | None]:
    """The document's scores, and a message when its pages cannot be matched."""
    statuses: Counter[str] = Counter(page.status for page in document.pages)
    if document.error:
        statuses["failed"] += 1
    whole = score(words(document.text), words(reference.text))
    pages, problem = None, None
    if reference.pages is not None:
        if len(reference.pages) == len(document.pages):
            pages = [(page.page_number, score(words(page.text), words(text)))
                     for page, text in zip(document.pages, reference.pages, strict=True)]
        else:
            problem = (f"{document.path}: the reference {reference.name} has "
                       f"{len(reference.pages)} pages (form feeds), the output "
                       f"{len(document.pages)}; scored as a whole document only")
    return DocumentScore(document.name, whole, dict(statuses), pages, document.error), problem


def percentile(values: list[float], fraction: float) -> float:
    """Linear interpolation between closest ranks (numpy's default method)."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = fraction * (len(ordered) - 1)
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def summarise(evaluation: Evaluation, worst: int = DEFAULT_WORST) -> Summary:
    """Mean, median, 10th percentile and the worst documents of one evaluation."""
    docs = evaluation.documents
    f1 = [d.score.f1 for d in docs]
    count = len(docs) or 1
    flagged = {flag: sum(d.statuses.get(flag, 0) for d in docs) for flag in FLAGS}
    lowest = sorted(docs, key=lambda d: (d.score.f1, d.name))[:worst]
    return Summary(
        documents=len(docs), mean=sum(f1) / count if docs else float("nan"),
        median=percentile(f1, 0.5), p10=percentile(f1, 0.1),
        precision=sum(d.score.precision for d in docs) / count if docs else float("nan"),
        recall=sum(d.score.recall for d in docs) / count if docs else float("nan"),
        pages=sum(sum(d.statuses.values()) for d in docs), flagged=flagged,
        worst=[(d.name, d.score.f1) for d in lowest])


@dataclass(frozen=True)
class Pair:
    """One document in both runs: each side's F1 against the reference, or (without
    references) how far the two outputs agree."""

    name: str
    a: float
    b: float

    @property
    def difference(self) -> float:
        return self.a - self.b


@dataclass
class Comparison:
    pairs: list[Pair]
    with_reference: bool
    margin: float
    evaluations: tuple[Evaluation, Evaluation] | None
    only_a: list[str]
    only_b: list[str]

    @property
    def wins(self) -> int:
        return sum(p.difference > self.margin for p in self.pairs)

    @property
    def losses(self) -> int:
        return sum(p.difference < -self.margin for p in self.pairs)

    @property
    def ties(self) -> int:
        return len(self.pairs) - self.wins - self.losses

    def most_different(self, count: int = DEFAULT_WORST) -> list[Pair]:
        """With references the largest F1 gaps; without, the least agreement."""
        if self.with_reference:
            return sorted(self.pairs, key=lambda p: (-abs(p.difference), p.name))[:count]
        return sorted(self.pairs, key=lambda p: (p.a, p.name))[:count]


def compare(run_a: Run, run_b: Run, references: dict[str, Reference] | None = None,
            margin: float = DEFAULT_TIE_MARGIN) -> Comparison:
    """Two runs of the same documents, against references or against each other."""
    common = sorted(set(run_a.documents) & set(run_b.documents))
    only_a = sorted(set(run_a.documents) - set(run_b.documents))
    only_b = sorted(set(run_b.documents) - set(run_a.documents))
    if references is None:
        pairs = []
        for name in common:
            agreement = score(words(run_a.documents[name].text),
                              words(run_b.documents[name].text)).f1
            pairs.append(Pair(name, agreement, agreement))
        return Comparison(pairs, False, margin, None, only_a, only_b)
    shared_a = Run({n: run_a.documents[n] for n in common}, run_a.problems)
    shared_b = Run({n: run_b.documents[n] for n in common}, run_b.problems)
    eval_a, eval_b = evaluate(shared_a, references), evaluate(shared_b, references)
    scores_b = eval_b.by_name()
    pairs = [Pair(d.name, d.score.f1, scores_b[d.name].score.f1) for d in eval_a.documents]
    return Comparison(pairs, True, margin, (eval_a, eval_b), only_a, only_b)
