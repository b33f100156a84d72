"""The ovisocr command end to end against the simulator."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from ovisocr_loader.cli import main
from ovisocr_loader.testing import HttpError, PageScript, Simulator, marked_pdf


def test_parse_directory_to_markdown_and_json(ovis_simulator: Simulator, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]):
    inputs = tmp_path / "in"
    (inputs / "sub").mkdir(parents=True)
    pdf_a, ids_a = marked_pdf(2)
    pdf_b, _ = marked_pdf(1)
    (inputs / "a.pdf").write_bytes(pdf_a)
    (inputs / "sub" / "a.pdf").write_bytes(pdf_b)      # same name: its own folder
    (inputs / "notes.txt").write_text("ignored: not a supported type")
    ovis_simulator.register(ids_a[0], "First page.")
    ovis_simulator.register(ids_a[1], "Second page.")
    out = tmp_path / "out"
    code = main(["parse", str(inputs), "-o", str(out), "--base-url", ovis_simulator.base_url])
    assert code == 0
    md = (out / "a.md").read_text()
    assert md.startswith(f"<!-- source: {inputs / 'a.pdf'}; 2 of 2 pages -->")
    assert md.index("<!-- page 1 -->") < md.index("First page.") < md.index("<!-- page 2 -->")
    assert md.index("<!-- page 2 -->") < md.index("Second page.")
    assert (out / "sub" / "a.md").read_text().startswith(
        f"<!-- source: {inputs / 'sub' / 'a.pdf'};")
    summary = capsys.readouterr().err
    assert "2/2 files, 3 pages (0 from cache)" in summary and "0 page errors" in summary

    code = main(["parse", str(inputs / "a.pdf"), "-o", str(out), "--format", "json",
                 "--base-url", ovis_simulator.base_url])
    assert code == 0
    data = json.loads((out / "a.json").read_text())
    assert [p["markdown"] for p in data["pages"]] == ["First page.", "Second page."]


def test_failures_give_a_non_zero_exit_and_a_summary(ovis_simulator: Simulator, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str],
                                                     caplog: pytest.LogCaptureFixture):
    pdf, ids = marked_pdf(2)
    ovis_simulator.register(ids[1], PageScript("x", faults={1: HttpError(400, message="bad")}))
    (tmp_path / "good.pdf").write_bytes(pdf)
    (tmp_path / "corrupt.pdf").write_bytes(b"%PDF-1.4 garbage")
    code = main(["parse", str(tmp_path), "-o", str(tmp_path / "out"),
                 "--base-url", ovis_simulator.base_url])
    assert code == 1
    err = capsys.readouterr().err
    # the parser's warning names the file (the command prints it through logging)
    assert "corrupt.pdf: CorruptFileError: cannot open PDF" in caplog.text
    assert "1/2 files" in err and "1 page errors" in err and "1 files failed" in err
    assert "ServerStatusError" in (tmp_path / "out" / "good.md").read_text()


def test_unreachable_server_exits_2_with_a_hint(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    pdf, _ = marked_pdf(1)
    (tmp_path / "a.pdf").write_bytes(pdf)
    code = main(["parse", str(tmp_path / "a.pdf"), "-o", str(tmp_path),
                 "--base-url", f"http://127.0.0.1:{port}/v1"])
    assert code == 2
    assert "vllm serve" in capsys.readouterr().err


def test_repeated_base_url_spreads_pages(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    with Simulator() as a, Simulator() as b:
        pdf, _ = marked_pdf(12)
        (tmp_path / "a.pdf").write_bytes(pdf)
        code = main(["parse", str(tmp_path / "a.pdf"), "-o", str(tmp_path / "out"),
                     "--base-url", a.base_url, "--base-url", b.base_url, "--concurrency", "4"])
        assert code == 0
        assert len(a.completions()) >= 3 and len(b.completions()) >= 3
        assert len(a.completions()) + len(b.completions()) == 12


def test_bench_measures_levels_on_never_repeated_pages(capsys: pytest.CaptureFixture[str]):
    with Simulator() as sim:
        code = main(["bench", "--base-url", sim.base_url, "--levels", "4,2",
                     "--pages-per-level", "6", "--warmup", "2"])
        ids = [r.page_id for r in sim.completions()]
    assert code == 0
    assert len(ids) == 2 + 6 + 6 and None not in ids and len(set(ids)) == len(ids)
    out = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in out[1:3]] == ["2", "4"]
    assert all(line.split()[1] == "6" for line in out[1:3])
    assert out[3].startswith("elbow: concurrency ")
    assert "client CPU ms/page" in out[0] and "lag p99 ms" in out[0]
    for line in out[1:3]:   # what the client spent: CPU of the process, of its loop thread
        cpu, loop_cpu, lag = (float(v) for v in line.split()[-3:])
        assert cpu > 0 and 0 < loop_cpu <= cpu + 1 and lag >= 0


def test_bench_rejects_bad_levels(capsys: pytest.CaptureFixture[str]):
    assert main(["bench", "--levels", "eight"]) == 2
    assert "--levels" in capsys.readouterr().err
