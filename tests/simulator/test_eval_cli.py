"""``ovisocr eval`` and ``ovisocr compare`` end to end: pages served with known word
error rates, so the true F1 of every document is known in advance."""

from __future__ import annotations

import csv
import io
import json
import re
import statistics
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from ovisocr_loader.cli import main
from ovisocr_loader.testing import PageScript, Simulator, marked_pdf, with_word_errors

#: plain words, so that a word error rate r gives F1 exactly 1 - r
REFERENCE = ("The committee reviewed the annual account and the invoice balance before "
             "the meeting ended with a short summary of every record in the office "
             "and a request for the signed letter from each department")
RATES = {"a": 0.0, "b": 0.1, "c": 0.25, "d": 0.5, "e": 0.05}


def _scans(sim: Simulator, folder: Path, rates: dict[str, float], seed: int = 0) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, rate in rates.items():
        pdf, (page_id,) = marked_pdf(1)
        (folder / f"{name}.pdf").write_bytes(pdf)
        sim.register(page_id, with_word_errors(REFERENCE, rate, seed))


def _references(folder: Path, names: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / f"{name}.txt").write_text(REFERENCE + "\n")
    return folder


def _true_f1(rate: float) -> float:
    plain = len(REFERENCE.split())
    return 1 - round(rate * plain) / plain


def _parse(sim: Simulator, scans: Path, out: Path, fmt: str = "md") -> None:
    assert main(["parse", str(scans), "-o", str(out), "--format", fmt, "--no-progress",
                 "--base-url", sim.base_url]) == 0


def test_eval_reports_the_true_f1_and_its_summary(ovis_simulator: Simulator, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]):
    _scans(ovis_simulator, tmp_path / "scans", RATES)
    _parse(ovis_simulator, tmp_path / "scans", tmp_path / "out")
    refs = _references(tmp_path / "refs", list(RATES))
    capsys.readouterr()
    assert main(["eval", str(tmp_path / "out"), "--reference", str(refs),
                 "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    expected = {name: _true_f1(rate) for name, rate in RATES.items()}
    assert {d["document"]: d["f1"] for d in report["documents"]} == {
        name: pytest.approx(f1, abs=1e-4) for name, f1 in expected.items()}
    values = list(expected.values())
    summary = report["summary"]
    assert summary["mean"] == pytest.approx(statistics.mean(values))
    assert summary["median"] == pytest.approx(statistics.median(values))
    assert summary["p10"] == pytest.approx(
        statistics.quantiles(values, n=10, method="inclusive")[0])
    assert summary["worst"][0] == ["d", pytest.approx(expected["d"])]

    assert main(["eval", str(tmp_path / "out"), "--reference", str(refs),
                 "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert {r["document"]: float(r["f1"]) for r in rows} == {
        name: pytest.approx(f1, abs=1e-4) for name, f1 in expected.items()}

    assert main(["eval", str(tmp_path / "out"), "--reference", str(refs)]) == 0
    table = capsys.readouterr().out
    assert f"median {statistics.median(values):.3f}" in table and "  0.500  d" in table


def test_compare_counts_wins_and_draws_plots(ovis_simulator: Simulator, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]):
    rates_b = {"a": 0.1, "b": 0.1, "c": 0.0, "d": 0.5, "e": 0.3}   # A: 1 tie-free win ...
    _scans(ovis_simulator, tmp_path / "scans_a", RATES)
    _scans(ovis_simulator, tmp_path / "scans_b", rates_b, seed=1)
    _parse(ovis_simulator, tmp_path / "scans_a", tmp_path / "a")
    _parse(ovis_simulator, tmp_path / "scans_b", tmp_path / "b", fmt="json")
    refs = _references(tmp_path / "refs", list(RATES))
    capsys.readouterr()
    code = main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--reference",
                 str(refs), "--format", "json", "--plot", str(tmp_path / "plots")])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    differences = [_true_f1(RATES[n]) - _true_f1(rates_b[n]) for n in RATES]
    assert report["wins"] == sum(d > 0.005 for d in differences) == 2      # a, e
    assert report["losses"] == sum(d < -0.005 for d in differences) == 1   # c
    assert report["ties"] == 2                                             # b, d
    for name in ("scatter.svg", "histogram.svg"):
        svg = ET.parse(tmp_path / "plots" / name).getroot()
        assert svg.tag.endswith("svg")
    circles = ET.parse(tmp_path / "plots" / "scatter.svg").getroot().findall(
        ".//{http://www.w3.org/2000/svg}circle")
    assert len(circles) == 5

    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    table = capsys.readouterr().out
    assert "agreement of A and B" in table and "least agreement" in table

    (tmp_path / "not-a-folder").write_text("")   # plots that cannot be written: one line
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--plot",
                 str(tmp_path / "not-a-folder")]) == 1
    assert capsys.readouterr().err.strip().endswith(
        f"cannot write {tmp_path / 'not-a-folder'}: File exists")


def test_dpi_sweep_reports_f1_and_speed_per_dpi(ovis_simulator: Simulator, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]):
    scans = tmp_path / "scans"
    scans.mkdir()
    for name in ("a", "b", "c"):
        pdf, (page_id,) = marked_pdf(1)   # Letter: 850 px wide at 100 DPI, 1275 at 150
        (scans / f"{name}.pdf").write_bytes(pdf)
        ovis_simulator.register(page_id, PageScript(REFERENCE, low_resolution=(1000, 0.25)))
    refs = _references(tmp_path / "refs", ["a", "b", "c"])
    code = main(["eval", str(scans), "--reference", str(refs), "--dpi", "100,150,200",
                 "--base-url", ovis_simulator.base_url])
    assert code == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()[1:]]
    by_dpi = {row[0]: row for row in rows}
    assert set(by_dpi) == {"100", "150", "200"}
    assert float(by_dpi["100"][2]) == pytest.approx(_true_f1(0.25), abs=1e-3)
    assert float(by_dpi["150"][2]) == float(by_dpi["200"][2]) == 1.0
    assert all(int(row[5]) == 3 and float(row[6]) > 0 for row in rows)   # pages, pages/min
    widths = {r.image_width for r in ovis_simulator.completions()}
    assert len(widths) == 3
    code = main(["eval", str(scans), "--reference", str(refs), "--dpi", "100",
                 "--format", "json", "--base-url", ovis_simulator.base_url])
    assert code == 0
    (row,) = json.loads(capsys.readouterr().out)["rows"]
    assert row["dpi"] == 100 and row["mean"] == pytest.approx(_true_f1(0.25))


def test_a_second_model_with_its_own_prompt(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]):
    with Simulator(model="zai-org/GLM-OCR") as glm:
        _scans(glm, tmp_path / "scans", {"a": 0.1})
        assert main(["parse", str(tmp_path / "scans"), "-o", str(tmp_path / "glm"),
                     "--base-url", glm.base_url, "--model", "zai-org/GLM-OCR",
                     "--prompt", "glm-ocr", "--no-progress"]) == 0
        assert {r.prompt for r in glm.completions()} == {"Text Recognition:"}
    refs = _references(tmp_path / "refs", ["a"])
    assert main(["eval", str(tmp_path / "glm"), "--reference", str(refs)]) == 0
    assert f"mean {_true_f1(0.1):.3f}" in capsys.readouterr().out


def test_bad_inputs_get_clear_messages_and_exit_codes(ovis_simulator: Simulator,
                                                      tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]):
    _scans(ovis_simulator, tmp_path / "scans", {"a": 0.0, "b": 0.0})
    _parse(ovis_simulator, tmp_path / "scans", tmp_path / "out")
    refs = _references(tmp_path / "refs", ["a"])
    (tmp_path / "out" / "broken.json").write_text("{not json")
    capsys.readouterr()
    assert main(["eval", str(tmp_path / "out"), "--reference", str(refs)]) == 1
    err = capsys.readouterr().err
    assert "b: no reference transcription matches it" in err
    assert "broken.json: not a ParsedDocument JSON file" in err

    (refs / "a.txt").write_text("one page\fanother page\f")   # 2 pages, the output has 1
    assert main(["eval", str(tmp_path / "out" / "a.md"), "--reference", str(refs)]) == 1
    assert "the reference a has 2 pages (form feeds), the output 1" in capsys.readouterr().err

    assert main(["eval", str(tmp_path / "out"), "--reference", str(tmp_path / "none")]) == 2
    assert "none: no such file or folder" in capsys.readouterr().err
    other = _references(tmp_path / "other", ["zzz"])
    assert main(["eval", str(tmp_path / "out"), "--reference", str(other)]) == 2
    assert "no output document has a reference" in capsys.readouterr().err
    assert main(["eval", str(tmp_path / "scans"), str(tmp_path / "out" / "a.md"),
                 "--reference", str(refs)]) == 2
    assert "not both" in capsys.readouterr().err
    assert main(["compare", str(tmp_path / "out"), str(tmp_path / "missing")]) == 2
    assert "missing: no such file or folder" in capsys.readouterr().err


def test_the_worked_example_in_the_docs_prints_what_the_docs_show(tmp_path: Path):
    text = (Path(__file__).resolve().parents[2] / "docs" / "eval.md").read_text()
    found = re.search(r"## Worked example.*?```python\n(.*?)```.*?```text\n(.*?)```", text,
                      re.DOTALL)
    assert found is not None
    script = tmp_path / "worked.py"
    script.write_text(found.group(1))
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            timeout=120, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == found.group(2)
