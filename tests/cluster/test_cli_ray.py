"""``ovisocr parse --engine ray``: a folder of Parquet or JSON rows, and its usage errors."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from ovisocr_loader.cli import main
from ovisocr_loader.testing import BROKEN_FILES, LatencyModel, Simulator, scan_folder


@pytest.mark.usefixtures("local_ray")
def test_engine_ray_writes_parquet_and_counts_what_reached_the_disk(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with Simulator(latency=LatencyModel(speed=20.0)) as sim:
        folder = scan_folder(tmp_path / "scans", sim, files=6, pages=20, long_file=8)
        out = tmp_path / "rows"
        args = ["parse", str(folder.root), "--engine", "ray", "-o", str(out), "--workers", "2",
                "--base-url", sim.base_url, "--concurrency", "8", "--no-progress"]
        assert main(args) == 1                      # the broken files failed
        rows = pq.read_table(out).to_pylist()
        assert main([*args, "--format", "json"]) == 2   # parquet files there: not json's folder
        assert main([*args, "--format", "parquet"]) == 1    # a rerun replaces, never appends
        assert len(pq.read_table(out)) == len(rows)
        json_out = tmp_path / "json-rows"
        args[args.index(str(out))] = str(json_out)
        assert main([*args, "--format", "json", "--pages", "1"]) == 1
    assert len(rows) == folder.page_count + len(BROKEN_FILES)
    summary = capsys.readouterr().err
    assert (f"3/6 files, {folder.page_count} pages" in summary
            and f"3 files failed; {len(rows)} rows in {out}" in summary)
    assert "holds other files" in summary
    assert f"{folder.root / 'truncated.pdf'}: CorruptFileError" in summary
    lines = [json.loads(line) for f in json_out.glob("*.json")
             for line in f.read_text().splitlines() if line]
    assert {r["page_number"] for r in lines} == {1}     # --pages 1: broken files per page too
    assert sorted(r["source"] for r in lines if r["error"] is None) == sorted(
        str(p) for p in folder.pages)


@pytest.mark.parametrize("extra, message", [
    (["-o", "-"], "give -o DIR"),
    (["-o", "out", "--format", "md"], "parquet or json"),
])
def test_engine_ray_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                 extra: list[str], message: str) -> None:
    (tmp_path / "a.pdf").write_bytes(b"%PDF-1.7")
    assert main(["parse", str(tmp_path / "a.pdf"), "--engine", "ray", *extra]) == 2
    assert message in capsys.readouterr().err


def test_ray_only_options_need_the_ray_engine(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.pdf").write_bytes(b"%PDF-1.7")
    assert main(["parse", str(tmp_path / "a.pdf"), "--format", "parquet"]) == 2
    assert "need --engine ray" in capsys.readouterr().err
