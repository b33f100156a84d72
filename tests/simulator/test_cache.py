"""The result cache: reruns send nothing, killed runs resume, bad entries are recomputed."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from ovisocr_loader import OvisParser
from ovisocr_loader._engine.cache import CACHE_FILE
from ovisocr_loader.testing import (
    HttpError,
    LatencyModel,
    PageScript,
    Simulator,
    make_pdf,
    marked_pdf,
    page_image,
)


def cached_rows(cache: Path) -> int:
    path = cache / CACHE_FILE
    if not path.exists():
        return 0
    with sqlite3.connect(path, timeout=30) as db:
        try:
            return int(db.execute("SELECT COUNT(*) FROM pages").fetchone()[0])
        except sqlite3.OperationalError:   # the table is not created yet
            return 0


def test_a_rerun_sends_no_requests(ovis_simulator: Simulator, tmp_path: Path):
    pdf, ids = marked_pdf(3)
    pdf_with_blank = make_pdf([page_image(ids[0]), page_image(None)])
    ovis_simulator.register(ids[0], "# One\n\nFirst page.")
    first = OvisParser(base_url=ovis_simulator.base_url, cache_dir=tmp_path).parse(pdf)
    OvisParser(base_url=ovis_simulator.base_url, cache_dir=tmp_path).parse(pdf_with_blank)
    assert len(ovis_simulator.completions()) == 4
    ovis_simulator.reset_records()

    again = OvisParser(base_url=ovis_simulator.base_url, cache_dir=tmp_path).parse(pdf)
    assert ovis_simulator.completions() == []           # only the model probe was sent
    assert [p.markdown for p in again.pages] == [p.markdown for p in first.pages]
    assert [p.elements for p in again.pages] == [p.elements for p in first.pages]
    assert all(p.cached for p in again.pages) and not any(p.cached for p in first.pages)

    ovis_simulator.reset_records()
    named = OvisParser(base_url=ovis_simulator.base_url, model=ovis_simulator.model,
                       cache_dir=tmp_path).parse(pdf_with_blank, name="renamed.pdf")
    assert ovis_simulator.requests == []                # with model= set: nothing at all
    assert [p.blank for p in named.pages] == [False, True]


def test_changed_settings_or_model_miss_the_cache(ovis_simulator: Simulator, tmp_path: Path):
    pdf, _ = marked_pdf(2)
    OvisParser(base_url=ovis_simulator.base_url, cache_dir=tmp_path).parse(pdf)
    OvisParser(base_url=ovis_simulator.base_url, cache_dir=tmp_path, dpi=200).parse(pdf)
    assert len(ovis_simulator.completions()) == 4


def test_failed_pages_are_not_cached(ovis_simulator: Simulator, tmp_path: Path):
    pdf, ids = marked_pdf(2)
    # the simulator counts tries per page across runs: the first fails, the second works
    ovis_simulator.register(ids[1], PageScript("Later fine.", faults={1: HttpError(400)}))
    doc = OvisParser(base_url=ovis_simulator.base_url, cache_dir=tmp_path).parse(pdf)
    assert doc.pages[1].error is not None
    again = OvisParser(base_url=ovis_simulator.base_url, cache_dir=tmp_path).parse(pdf)
    assert len(ovis_simulator.for_page(ids[0])) == 1 and len(ovis_simulator.for_page(ids[1])) == 2
    assert again.pages[1].markdown == "Later fine." and not again.pages[1].cached


def test_a_corrupt_entry_is_ignored_and_recomputed(ovis_simulator: Simulator, tmp_path: Path):
    pdf, ids = marked_pdf(2)
    ovis_simulator.register(ids[0], "Page one.")
    OvisParser(base_url=ovis_simulator.base_url, cache_dir=tmp_path).parse(pdf)
    with sqlite3.connect(tmp_path / CACHE_FILE) as db:
        db.execute("UPDATE pages SET result = '{not json' WHERE page_number = 1")
    ovis_simulator.reset_records()
    doc = OvisParser(base_url=ovis_simulator.base_url, cache_dir=tmp_path).parse(pdf)
    assert [r.page_id for r in ovis_simulator.completions()] == [ids[0]]
    assert doc.pages[0].markdown == "Page one." and not doc.pages[0].cached
    ovis_simulator.reset_records()
    OvisParser(base_url=ovis_simulator.base_url, cache_dir=tmp_path).parse(pdf)
    assert ovis_simulator.completions() == []           # the bad entry was replaced


def test_entries_hold_the_elements_and_older_ones_without_them_are_read_again(
        ovis_simulator: Simulator, tmp_path: Path):
    pdf, ids = marked_pdf(2)
    ovis_simulator.register(ids[0], "# Title\n\nPage one.")
    OvisParser(base_url=ovis_simulator.base_url, cache_dir=tmp_path).parse(pdf)
    with sqlite3.connect(tmp_path / CACHE_FILE) as db:
        stored = json.loads(db.execute("SELECT result FROM pages WHERE page_number = 1"
                                       ).fetchone()[0])
        assert [e["kind"] for e in stored["elements"]] == ["heading", "paragraph"]
        del stored["elements"]   # as entries were written before elements were stored
        db.execute("UPDATE pages SET result = ? WHERE page_number = 1", (json.dumps(stored),))
    ovis_simulator.reset_records()
    doc = OvisParser(base_url=ovis_simulator.base_url, cache_dir=tmp_path).parse(pdf)
    assert [r.page_id for r in ovis_simulator.completions()] == [ids[0]]
    assert [e.kind for e in doc.pages[0].elements] == ["heading", "paragraph"]
    assert not doc.pages[0].cached and doc.pages[1].cached


def test_a_cache_file_that_is_not_a_database_is_moved_aside(ovis_simulator: Simulator,
                                                            tmp_path: Path):
    (tmp_path / CACHE_FILE).write_bytes(b"this is not sqlite" * 100)
    pdf, _ = marked_pdf(1)
    doc = OvisParser(base_url=ovis_simulator.base_url, cache_dir=tmp_path).parse(pdf)
    assert doc.pages[0].ok
    assert len(list(tmp_path.glob(CACHE_FILE + ".corrupt-*"))) == 1
    assert cached_rows(tmp_path) == 1


def test_figure_crops_are_cut_again_on_a_cache_hit(ovis_simulator: Simulator, tmp_path: Path):
    pdf, ids = marked_pdf(1)
    ovis_simulator.register(ids[0], '<img src="images/bbox_100_200_600_500.jpg" />')
    options = {"base_url": ovis_simulator.base_url, "cache_dir": tmp_path / "cache",
               "figures": "crop"}
    first = OvisParser(**options).parse(pdf).pages[0].elements[0]
    ovis_simulator.reset_records()
    again = OvisParser(**options).parse(pdf).pages[0].elements[0]
    assert ovis_simulator.completions() == []
    assert again.image_png == first.image_png and again.image_png


def test_a_killed_run_resumes_without_redoing_finished_pages(tmp_path: Path):
    with Simulator(latency=LatencyModel(speed=2.0)) as sim:
        pdf, _ = marked_pdf(40)
        source = tmp_path / "big.pdf"
        source.write_bytes(pdf)
        cache = tmp_path / "cache"
        cmd = [sys.executable, "-m", "ovisocr_loader.cli", "parse", str(source), "-o",
               str(tmp_path / "out"), "--base-url", sim.base_url, "--cache", str(cache),
               "--concurrency", "4", "--no-progress"]
        child = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while cached_rows(cache) < 8 and time.monotonic() < deadline:
            time.sleep(0.05)
        child.kill()
        child.wait(10)
        # the killed run's last requests may still be read after the kill: let them in
        # before the records are reset, or the resumed run is charged with one of them
        assert Simulator.wait_until(lambda: sim.open_connections == 0, 30)
        done = cached_rows(cache)
        assert 8 <= done < 40 and not (tmp_path / "out" / "big.md").exists()
        sim.reset_records()
        doc = OvisParser(base_url=sim.base_url, cache_dir=cache).parse(source)
        assert len(sim.completions()) == 40 - done
        assert sum(p.cached for p in doc.pages) == done
    assert [p.page_number for p in doc.pages] == list(range(1, 41)) and all(
        p.ok for p in doc.pages)


def test_two_processes_share_one_cache(tmp_path: Path):
    with Simulator(latency=LatencyModel(speed=20.0)) as sim:
        cache = tmp_path / "cache"
        files = []
        for name in ("a", "b"):
            pdf, _ = marked_pdf(15)
            files.append(tmp_path / f"{name}.pdf")
            files[-1].write_bytes(pdf)
        children = [subprocess.Popen(
            [sys.executable, "-m", "ovisocr_loader.cli", "parse", str(f), "-o",
             str(tmp_path / "out"), "--base-url", sim.base_url, "--cache", str(cache),
             "--no-progress"], stderr=subprocess.PIPE, text=True) for f in files]
        errors = [c.communicate(timeout=60)[1] for c in children]
        assert [c.returncode for c in children] == [0, 0], errors
        assert cached_rows(cache) == 30
        sim.reset_records()
        list(OvisParser(base_url=sim.base_url, cache_dir=cache).parse_many(files))
        assert sim.completions() == []


def test_a_changed_guard_setting_misses_and_concurrency_hits(ovis_simulator: Simulator,
                                                            tmp_path: Path):
    from ovisocr_loader import GuardPolicy

    pdf, _ = marked_pdf(2)
    url = ovis_simulator.base_url
    OvisParser(base_url=url, cache_dir=tmp_path).parse(pdf)
    OvisParser(base_url=url, cache_dir=tmp_path, concurrency=3).parse(pdf)
    assert len(ovis_simulator.completions()) == 2            # concurrency: a hit
    OvisParser(base_url=url, cache_dir=tmp_path,
               guard=GuardPolicy(frequency_penalty=0.5)).parse(pdf)
    assert len(ovis_simulator.completions()) == 4            # the guard: a miss


def test_files_layout_one_entry_per_page_reruns_and_recovers(ovis_simulator: Simulator,
                                                             tmp_path: Path):
    pdf, ids = marked_pdf(3)
    ovis_simulator.register(ids[1], "Second page.")
    parser = OvisParser(base_url=ovis_simulator.base_url, cache_dir=tmp_path,
                        cache_layout="files")
    first = parser.parse(pdf)
    entries = sorted((tmp_path / "pages").glob("??/*.json"))
    assert len(entries) == 3 and not (tmp_path / CACHE_FILE).exists()
    assert all(e.parent.name == e.name[:2] for e in entries)   # pages/<2 hex>/<key>.json
    assert not list(tmp_path.rglob("*.tmp"))                    # written whole, by rename
    ovis_simulator.reset_records()
    entries[0].write_text("{ not json")                         # a damaged entry: a miss
    again = parser.parse(pdf)
    assert len(ovis_simulator.completions()) == 1
    assert [p.markdown for p in again.pages] == [p.markdown for p in first.pages]
    assert sum(p.cached for p in again.pages) == 2
    assert json.loads(entries[0].read_text())["markdown"]       # and it was written again
    # the sqlite layout does not see the files layout's pages (and vice versa)
    ovis_simulator.reset_records()
    OvisParser(base_url=ovis_simulator.base_url, cache_dir=tmp_path).parse(pdf)
    assert len(ovis_simulator.completions()) == 3
