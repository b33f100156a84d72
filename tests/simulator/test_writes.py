"""Writes that never lose data: full disks, size limits, read-only targets, odd names,
links, and the client's secrets kept out of everything written (issue #53).

The command runs in a subprocess where a limit or a permission must hold for it
alone: ``RLIMIT_FSIZE`` for a file-size limit, ``capsh`` dropping root's bypass of
file permissions for a read-only folder.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ovisocr_loader import OvisParser, PageError
from ovisocr_loader.cli import main
from ovisocr_loader.testing import HttpError, PageScript, Simulator, marked_pdf

CLI = [sys.executable, "-m", "ovisocr_loader.cli"]
KEY = "sk-test-0123456789abcdef"


def run_cli(args: list[str], *, file_limit: int | None = None, unprivileged: bool = False,
            stdout: int | None = subprocess.PIPE) -> subprocess.CompletedProcess[str]:
    """The command in a child process, optionally under a file-size limit (bytes) or
    without root's bypass of file permissions."""
    command = without_bypass([*CLI, *args]) if unprivileged else [*CLI, *args]

    def limit() -> None:
        if file_limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_limit, file_limit))

    return subprocess.run(command, stdout=stdout, stderr=subprocess.PIPE, text=True,
                          errors="replace", preexec_fn=limit, timeout=120, check=False)


def without_bypass(command: list[str]) -> list[str]:
    """``command`` as root runs it without root's bypass of file permissions."""
    if os.geteuid() != 0:
        return command
    capsh = shutil.which("capsh")
    if capsh is None:
        pytest.skip("running as root without capsh: cannot drop the permission bypass")
    return [capsh, "--drop=cap_dac_override,cap_dac_read_search", "--", "-c",
            " ".join(_quoted(a) for a in command)]


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def no_traceback(stderr: str) -> bool:
    return "Traceback" not in stderr and "Exception ignored" not in stderr


def two_inputs(folder: Path, big_pages: int = 30) -> tuple[Path, Path]:
    """A long PDF whose Markdown outgrows a small size limit, and a short one."""
    folder.mkdir(parents=True, exist_ok=True)
    big, small = folder / "a_big.pdf", folder / "b_small.pdf"
    big.write_bytes(marked_pdf(big_pages)[0])
    small.write_bytes(marked_pdf(1)[0])
    return big, small


def test_a_size_limit_fails_one_document_and_keeps_its_previous_file(
        ovis_simulator: Simulator, tmp_path: Path):
    two_inputs(tmp_path / "in")
    out = tmp_path / "out"
    out.mkdir()
    (out / "a_big.md").write_text("the previous run's output\n")
    done = run_cli(["parse", str(tmp_path / "in"), "-o", str(out), "--base-url",
                    ovis_simulator.base_url, "--no-progress"], file_limit=30_000)
    assert done.returncode == 1 and no_traceback(done.stderr), done.stderr
    assert (out / "a_big.md").read_text() == "the previous run's output\n"
    assert (out / "b_small.md").read_text().startswith("<!-- source:")
    assert f"cannot write {out / 'a_big.md'}: File too large" in done.stderr
    assert "not written:" in done.stderr and "1/2 files" in done.stderr
    assert sorted(p.name for p in out.iterdir()) == ["a_big.md", "b_small.md"]  # no temp


def test_the_review_site_under_a_size_limit_still_has_its_index(ovis_simulator: Simulator,
                                                                tmp_path: Path):
    two_inputs(tmp_path / "in", big_pages=12)
    site = tmp_path / "site"
    done = run_cli(["review", str(tmp_path / "in"), "-o", str(site), "--base-url",
                    ovis_simulator.base_url, "--no-progress"], file_limit=30_000)
    assert done.returncode == 1 and no_traceback(done.stderr), done.stderr
    index = (site / "index.html").read_text()
    assert index.endswith("</html>\n") and "b_small.pdf" in index
    assert "a_big.pdf" not in index               # its page images did not fit: left out
    assert "a_big.pdf: cannot write its review page" in done.stderr
    assert not [p for p in site.rglob("*") if p.name.endswith(".tmp")]


def test_a_full_stdout_is_one_line_and_a_non_zero_exit(ovis_simulator: Simulator,
                                                       tmp_path: Path):
    _, small = two_inputs(tmp_path / "in", big_pages=1)
    with open("/dev/full", "w") as full:
        done = run_cli(["parse", str(small), "-o", "-", "--format", "json", "--base-url",
                        ovis_simulator.base_url, "--no-progress"], stdout=full.fileno())
    assert done.returncode == 1 and no_traceback(done.stderr), done.stderr
    assert "cannot write stdout: No space left on device" in done.stderr


@pytest.mark.parametrize("command", ["parse", "review"])
def test_a_read_only_output_folder_fails_before_any_page_is_sent(
        command: str, ovis_simulator: Simulator, tmp_path: Path):
    _, small = two_inputs(tmp_path / "in", big_pages=1)
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    done = run_cli([command, str(small), "-o", str(locked / "out"), "--base-url",
                    ovis_simulator.base_url, "--no-progress"], unprivileged=True)
    assert done.returncode == 2 and no_traceback(done.stderr), done.stderr
    assert done.stderr.strip().splitlines() == [
        f"ovisocr: cannot write to {locked / 'out'}: Permission denied"]
    assert ovis_simulator.completions() == []


def test_a_read_only_output_file_is_kept(ovis_simulator: Simulator, tmp_path: Path):
    _, small = two_inputs(tmp_path / "in", big_pages=1)
    result = tmp_path / "result.md"
    result.write_text("keep me\n")
    result.chmod(0o444)
    done = run_cli(["parse", str(small), "-o", str(result), "--base-url",
                    ovis_simulator.base_url, "--no-progress"], unprivileged=True)
    assert done.returncode == 2 and no_traceback(done.stderr), done.stderr
    assert f"cannot write to {result}: Permission denied" in done.stderr
    assert result.read_text() == "keep me\n" and ovis_simulator.completions() == []


def test_a_name_that_is_not_utf8_is_written_back_safely(ovis_simulator: Simulator,
                                                        tmp_path: Path):
    folder = tmp_path / "in"
    folder.mkdir()
    pdf = marked_pdf(1)[0]
    odd = os.fsdecode(os.fsencode(folder) + b"/bad\xffbyte.pdf")
    Path(odd).write_bytes(pdf)
    (folder / "good.pdf").write_bytes(pdf)
    out = tmp_path / "out"
    done = run_cli(["parse", str(folder), "-o", str(out), "--format", "md", "--format",
                    "json", "--base-url", ovis_simulator.base_url, "--no-progress"])
    assert done.returncode == 0 and no_traceback(done.stderr), done.stderr
    written = {os.fsencode(p.name) for p in out.iterdir()}
    assert written == {b"bad\xffbyte.md", b"bad\xffbyte.json", b"good.md", b"good.json"}
    md = Path(os.fsdecode(os.fsencode(out) + b"/bad\xffbyte.md")).read_text(encoding="utf-8")
    assert md.startswith(f"<!-- source: {folder}/bad\\xffbyte.pdf; 1 of 1 pages -->")
    saved = os.fsdecode(os.fsencode(out) + b"/bad\xffbyte.json")
    assert json.loads(Path(saved).read_text(encoding="utf-8"))["source"] == odd  # exact
    site = tmp_path / "site"
    assert main(["review", saved, str(folder / "good.pdf"), "-o", str(site), "--base-url",
                 ovis_simulator.base_url, "--no-progress"]) == 0
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "bad\\xffbyte.pdf" in index and "good.pdf" in index
    page = next(site.glob("001-*.html")).read_text(encoding="utf-8")
    assert 'src="001-bad_byte.pdf/page-1.jpg"' in page   # its image found from the JSON


def test_a_name_cannot_close_the_source_comment(ovis_simulator: Simulator, tmp_path: Path):
    source = tmp_path / "x--><script>alert(1)<script><!-- y.pdf"
    source.write_bytes(marked_pdf(1)[0])
    out = tmp_path / "out.md"
    assert main(["parse", str(source), "-o", str(out), "--base-url",
                 ovis_simulator.base_url, "--no-progress"]) == 0
    header = out.read_text().splitlines()[0]
    assert header.startswith("<!-- source: ") and header.endswith(" -->")
    assert header.count("-->") == 1 and header.count("<!--") == 1


def test_links_out_of_a_folder_are_not_followed_by_default(ovis_simulator: Simulator,
                                                           tmp_path: Path,
                                                           caplog: pytest.LogCaptureFixture):
    folder, elsewhere = tmp_path / "in", tmp_path / "elsewhere" / "deep"
    (folder / "sub").mkdir(parents=True)
    elsewhere.mkdir(parents=True)
    pdf = marked_pdf(1)[0]
    (folder / "x.pdf").write_bytes(pdf)
    (elsewhere / "target.pdf").write_bytes(pdf)
    (folder / "sub" / "outside.pdf").symlink_to(elsewhere / "target.pdf")
    (folder / "sub" / "samefile.pdf").symlink_to(folder / "x.pdf")   # inside: read
    out = tmp_path / "out"
    assert main(["parse", str(folder), "-o", str(out), "--base-url",
                 ovis_simulator.base_url, "--no-progress"]) == 0
    written = sorted(str(p.relative_to(out)) for p in out.rglob("*.md"))
    assert written == ["sub/samefile.md", "x.md"]     # the link named as the link
    assert "outside.pdf: a link to a file outside" in caplog.text
    assert main(["parse", str(folder), "-o", str(out), "--follow-links", "--base-url",
                 ovis_simulator.base_url, "--no-progress"]) == 0
    assert (out / "sub" / "outside.md").exists() and not (out / "elsewhere").exists()


def test_two_inputs_that_would_share_an_output_get_their_own(ovis_simulator: Simulator,
                                                             tmp_path: Path):
    import io

    from ovisocr_loader.testing import make_pdf, page_image

    png = io.BytesIO()
    page_image(1).save(png, format="PNG")
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.pdf").write_bytes(marked_pdf(1)[0])
    (folder / "a.png").write_bytes(png.getvalue())
    (folder / "A.PDF").write_bytes(make_pdf([page_image(2)]))
    out = tmp_path / "out"
    assert main(["parse", str(folder), "-o", str(out), "--base-url",
                 ovis_simulator.base_url, "--no-progress"]) == 0
    sources = {p.name: p.read_text().split(";")[0] for p in out.iterdir()}
    assert sources == {"A.md": f"<!-- source: {folder / 'A.PDF'}",
                       "a.pdf.md": f"<!-- source: {folder / 'a.pdf'}",
                       "a.png.md": f"<!-- source: {folder / 'a.png'}"}


def test_a_server_that_echoes_the_key_has_it_stored_nowhere(ovis_simulator: Simulator,
                                                            tmp_path: Path):
    pdf, ids = marked_pdf(2)
    echo = f"Incorrect API key provided: Bearer {KEY}. You passed {KEY}"
    ovis_simulator.register(ids[1], PageScript("x", faults={
        n: HttpError(401, message=echo) for n in range(1, 6)}))
    source = tmp_path / "scan.pdf"
    source.write_bytes(pdf)
    out = tmp_path / "out"
    done = run_cli(["parse", str(source), "-o", str(out), "--format", "md", "--format",
                    "json", "--api-key", KEY, "--base-url", ovis_simulator.base_url,
                    "--no-progress"])
    assert done.returncode == 1 and no_traceback(done.stderr)
    stored = (out / "scan.md").read_text() + (out / "scan.json").read_text()
    assert "Incorrect API key provided: Bearer [redacted]" in stored
    assert KEY not in stored + done.stderr + done.stdout
    with pytest.raises(PageError) as caught:
        OvisParser(base_url=ovis_simulator.base_url, api_key=KEY, errors="raise").parse(pdf)
    chain: list[BaseException] = []
    error: BaseException | None = caught.value
    while error is not None:
        chain.append(error)
        error = error.__cause__ or error.__context__
    assert len(chain) >= 2 and not any(KEY in str(e) for e in chain)


@pytest.mark.parametrize("url", ["http://user:hunter2@127.0.0.1:9/v1",
                                 "http://127.0.0.1:9/v1?api_key=hunter2"])
def test_a_url_holding_a_key_is_a_usage_error(url: str, tmp_path: Path):
    source = tmp_path / "scan.pdf"
    source.write_bytes(marked_pdf(1)[0])
    done = run_cli(["parse", str(source), "-o", str(tmp_path / "out"), "--base-url", url])
    assert done.returncode == 2 and no_traceback(done.stderr)
    assert len(done.stderr.strip().splitlines()) == 1 and "hunter2" not in done.stderr
    assert "127.0.0.1:9/v1" in done.stderr


def test_a_cache_this_user_may_not_read_is_left_as_it_is(ovis_simulator: Simulator,
                                                         tmp_path: Path):
    from ovisocr_loader._engine.cache import CACHE_FILE

    source = tmp_path / "scan.pdf"
    source.write_bytes(marked_pdf(1)[0])
    cache = tmp_path / "cache"
    OvisParser(base_url=ovis_simulator.base_url, cache_dir=cache).parse(source)
    database = cache / CACHE_FILE
    before = database.read_bytes()
    database.chmod(0o000)
    done = run_cli(["parse", str(source), "-o", str(tmp_path / "out"), "--cache", str(cache),
                    "--base-url", ovis_simulator.base_url, "--no-progress"], unprivileged=True)
    assert done.returncode == 0 and no_traceback(done.stderr), done.stderr
    assert "PermissionError" in done.stderr and "left as it is" in done.stderr
    assert sorted(p.name for p in cache.iterdir() if "corrupt" in p.name) == []
    database.chmod(0o644)
    assert database.read_bytes() == before


def test_kill_9_at_random_moments_then_a_rerun_gives_a_clean_runs_outputs(tmp_path: Path):
    import random
    import time

    from ovisocr_loader.testing import LatencyModel

    folder = tmp_path / "in"
    folder.mkdir()
    for name, pages in (("a", 6), ("b", 9), ("c", 3)):
        (folder / f"{name}.pdf").write_bytes(marked_pdf(pages)[0])
    with Simulator(latency=LatencyModel(speed=10.0)) as sim:
        def parse(out: Path, cache: Path) -> subprocess.Popen[bytes]:
            return subprocess.Popen(
                [*CLI, "parse", str(folder), "-o", str(out), "--format", "md", "--format",
                 "json", "--cache", str(cache), "--concurrency", "2", "--base-url",
                 sim.base_url, "--no-progress"], stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL)

        assert parse(tmp_path / "clean", tmp_path / "clean-cache").wait(120) == 0
        clean = _tree(tmp_path / "clean")
        chance = random.Random(53)
        for trial in range(4):
            out, cache = tmp_path / f"out{trial}", tmp_path / f"cache{trial}"
            child = parse(out, cache)
            time.sleep(chance.uniform(0.2, 2.5))   # a random moment, not a condition
            child.kill()
            child.wait(30)
            for path, text in _tree(out).items():   # what is there is whole
                assert text == clean[path], (trial, path)
            assert parse(out, cache).wait(120) == 0
            assert _tree(out) == clean, trial


def _tree(folder: Path) -> dict[str, object]:
    """Every visible file under ``folder`` (hidden temporary files left by a kill aside),
    JSON without what differs between any two runs (timings, whether from the cache)."""
    return {str(p.relative_to(folder)): _stable(p) for p in sorted(folder.rglob("*"))
            if p.is_file() and not p.name.startswith(".")}


def _stable(path: Path) -> object:
    if path.suffix != ".json":
        return path.read_text()
    doc = json.loads(path.read_text())
    for page in doc["pages"]:
        page.pop("cached")
        page["attempts"] = [{k: v for k, v in a.items() if not k.endswith("_s")}
                            for a in page["attempts"]]
    return doc


def test_a_page_that_echoes_the_key_is_stored_without_it(ovis_simulator: Simulator):
    pdf, (page_id,) = marked_pdf(1)
    ovis_simulator.register(page_id, f"Bearer bonds matured. Your key is {KEY}.")
    page = OvisParser(base_url=ovis_simulator.base_url, api_key=KEY).parse(pdf).pages[0]
    assert page.markdown == "Bearer bonds matured. Your key is [redacted]."


def test_a_folder_that_cannot_be_listed_is_named(tmp_path: Path):
    (tmp_path / "in" / "locked").mkdir(parents=True)
    (tmp_path / "in" / "a.pdf").write_bytes(marked_pdf(1)[0])
    (tmp_path / "in" / "locked").chmod(0o000)
    probe = ("import logging, sys; logging.basicConfig(); "
             "from ovisocr_loader.sources import expand_paths; "
             "print([p.name for p in expand_paths([sys.argv[1]])])")
    done = subprocess.run(without_bypass([sys.executable, "-c", probe, str(tmp_path / "in")]),
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.stdout.strip() == "['a.pdf']"
    assert f"{tmp_path / 'in' / 'locked'}: cannot list this folder (Permission denied)" \
        in done.stderr


def test_a_figures_dir_that_cannot_be_written_costs_the_files_not_the_pages(
        ovis_simulator: Simulator, tmp_path: Path, caplog: pytest.LogCaptureFixture):
    pdf, (page_id,) = marked_pdf(1)
    ovis_simulator.register(page_id, '<img src="images/bbox_100_100_500_500.jpg" />\n\nText.')
    (tmp_path / "crops").write_text("a file where the folder should be")
    doc = OvisParser(base_url=ovis_simulator.base_url, figures="crop",
                     figures_dir=tmp_path / "crops").parse(pdf)
    (figure,) = [e for e in doc.pages[0].elements if e.kind == "figure"]
    assert doc.pages[0].ok and figure.image_png and figure.image_path is None
    assert "cannot write figure crops to" in caplog.text
