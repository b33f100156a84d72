"""Every example in examples/ runs against the simulator and prints what it promises."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
EXPECTED = {
    "parse_with_simulator.py": "page 2: blank=True",
    "llama_index_quickstart.py":
        "1,2 /Inspection report/ '# Inspection report\\n\\nThe north quay was inspected on 4 "
        "March.\\n\\nTable\\nItem | State\\nBollards State: worn.'",
    "vector_store_qdrant.py":
        "LangChain: page 2: Baltic was 8,310 in 2019. Baltic was 9,875 in 2018.",
    "langchain_quickstart.py": "['Title', 'NarrativeText', 'Table']",
    "ray_scans.py": "23 rows: 20 pages, 3 failed",
    "eval_dpi_study.py": "100 DPI: mean F1 0.75 over 3 documents, 3 pages",
    "long_lived_worker.py": "scan.pdf pages [4, 5, 6]: flags []",
    "review_site.py": "wrote index.html; turned upright: {'fax.pdf': 270, 'report.pdf': 0}",
}


def shown_in_docs(name: str) -> str:
    """What docs/sync.md shows ``python examples/NAME`` printing, every line."""
    text = (EXAMPLES.parent / "docs" / "sync.md").read_text()
    block = text.split(f"$ python examples/{name}\n", 1)[1]
    return block.split("\n\n", 1)[0].split("\n```", 1)[0] + "\n"


# the sync examples print every step's cost: all of it must be as docs/sync.md says
EXPECTED.update({name: shown_in_docs(name)
                 for name in ("sync_llama_index.py", "sync_langchain.py")})


def test_every_example_is_listed():
    assert sorted(p.name for p in EXAMPLES.glob("*.py")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_runs(name: str):
    # a bound against a hang, not a speed target: a Ray start on a loaded 2-core machine
    # took more than two minutes
    result = subprocess.run([sys.executable, str(EXAMPLES / name)], capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    assert EXPECTED[name] in result.stdout
