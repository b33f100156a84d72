"""Know your accuracy: word-level F1 of parsed documents against reference
transcriptions, two runs head to head, and the DPI study (docs/eval.md).

Example::

    from ovisocr_loader.eval import evaluate, load_references, load_run, summarise

    references, _ = load_references(["refs/"])
    summary = summarise(evaluate(load_run(["out/"]), references))
    print(summary.mean, summary.median, summary.p10)
"""

from .plots import write_plots
from .report import comparison_report, evaluation_report
from .runs import (
    EvalInputError,
    Reference,
    Run,
    RunDocument,
    RunPage,
    from_document,
    load_references,
    load_run,
    match_reference,
    read_output,
)
from .scores import (
    DEFAULT_TIE_MARGIN,
    Comparison,
    DocumentScore,
    Evaluation,
    Pair,
    Summary,
    compare,
    evaluate,
    percentile,
    summarise,
)
from .sweep import DpiResult, dpi_sweep, sweep_report
from .words import Score, score, word_f1, words

__all__ = [
    "DEFAULT_TIE_MARGIN",
    "Comparison",
    "DocumentScore",
    "DpiResult",
    "EvalInputError",
    "Evaluation",
    "Pair",
    "Reference",
    "Run",
    "RunDocument",
    "RunPage",
    "Score",
    "Summary",
    "compare",
    "comparison_report",
    "dpi_sweep",
    "evaluate",
    "evaluation_report",
    "from_document",
    "load_references",
    "load_run",
    "match_reference",
    "percentile",
    "read_output",
    "score",
    "summarise",
    "sweep_report",
    "word_f1",
    "words",
    "write_plots",
]
