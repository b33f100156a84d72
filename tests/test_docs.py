"""Every code block in README.md and docs/ runs, against the simulator, so none can rot.

Python blocks run as scripts in a folder holding the files they name (scan.pdf,
report.pdf, a.pdf, b.tif, scans/); ``ovisocr`` lines of shell blocks run as
commands. Endpoint URLs in the text (``http://host:8000/v1``) are pointed at the
simulator. Shell lines that install or start things (pip, vllm, venv, the test
suite itself, ``ovisocr simulate``, which serves until stopped) are not run.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ovisocr_loader.testing import Simulator, make_pdf, marked_pdf, page_image

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```(python|bash)\n(.*?)^```", re.DOTALL | re.MULTILINE)
URL = re.compile(r"https?://[\w.-]+:\d+/v1")
NOT_RUN = ("pip ", "vllm ", "python -m pytest", "python3 -m venv", "source ", ". ",
           "ovisocr simulate", "git ", "cd ", "bash .ci/run")


def _blocks() -> list[tuple[str, str, str]]:
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in BLOCK.finditer(text):
            line = text[:match.start()].count("\n") + 1
            found.append((f"{page.relative_to(ROOT)}:{line}", match.group(1), match.group(2)))
    return found


BLOCKS = _blocks()


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("docs")
    for name in ("scan.pdf", "report.pdf", "a.pdf", "upload.pdf"):
        (folder / name).write_bytes(marked_pdf(2)[0])
    (folder / "b.tif").write_bytes(_tiff())
    (folder / "scans").mkdir()
    (folder / "scans" / "fax.pdf").write_bytes(make_pdf([page_image(None), page_image(7)]))
    (folder / "scans" / "memo.pdf").write_bytes(marked_pdf(1)[0])
    return folder


def _tiff() -> bytes:
    import io

    buf = io.BytesIO()
    frames = [page_image(n) for n in (1, 2)]
    frames[0].save(buf, format="TIFF", save_all=True, append_images=frames[1:])
    return buf.getvalue()


def test_the_docs_have_code_to_run():
    assert sum(lang == "python" for _, lang, _ in BLOCKS) >= 8


@pytest.mark.parametrize(("where", "lang", "code"), BLOCKS, ids=[b[0] for b in BLOCKS])
def test_code_block_runs(where: str, lang: str, code: str, workspace: Path,
                         ovis_simulator: Simulator):
    code = URL.sub(ovis_simulator.base_url, code)
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("OVISOCR_")},
           "OVISOCR_BASE_URL": ovis_simulator.base_url, "HF_HUB_OFFLINE": "1",
           "OVISOCR_CACHE_DIR": os.environ["OVISOCR_CACHE_DIR"]}   # this test's own
    if lang == "python":
        script = workspace / "block.py"
        script.write_text(code, encoding="utf-8")
        runs = [[sys.executable, str(script)]]
    else:
        runs = [line.split("#", 1)[0].strip() for line in code.splitlines()]
        runs = [["bash", "-c", line] for line in runs
                if line and not line.startswith(NOT_RUN) and line.startswith(("ovisocr",
                                                                              "python"))]
    for command in runs:
        if command[-1].startswith("python examples/"):
            command[-1] = command[-1].replace("python", sys.executable, 1)
        result = subprocess.run(command, cwd=ROOT if "examples/" in command[-1] else workspace,
                                capture_output=True, text=True, timeout=180, env=env)
        assert result.returncode == 0, f"{where}: {command}\n{result.stdout}\n{result.stderr}"
        assert "Traceback" not in result.stderr
