"""A new user's first mistakes with the real ``ovisocr`` entry point, in a subprocess:
clear one-line messages, true exit codes, nothing lost, never a traceback."""

from __future__ import annotations

import ctypes
import json
import os
import platform
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from ovisocr_loader import __version__
from ovisocr_loader.testing import Hang, LatencyModel, PageScript, Simulator, marked_pdf

OVISOCR = shutil.which("ovisocr") or "ovisocr"


def command_env(**extra: str) -> dict[str, str]:
    """The environment a first-time user has: no OVISOCR_ settings of this machine's, and
    an empty user cache folder (the default cache's home; never this machine's own)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OVISOCR_")}
    return {**env, "XDG_CACHE_HOME": tempfile.mkdtemp(prefix="first-hour-cache-"), **extra}


def ovisocr(*args: str, timeout: float = 120, **kw) -> subprocess.CompletedProcess[str]:
    run = subprocess.run([OVISOCR, *args], capture_output=True, text=True, timeout=timeout,
                         env=command_env(), **kw)
    assert "Traceback" not in run.stderr, run.stderr
    return run


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def pdfs(tmp_path: Path) -> Path:
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "x.pdf").write_bytes(marked_pdf(2)[0])
    return tmp_path


def test_version_and_help():
    assert ovisocr("--version").stdout.strip() == f"ovisocr {__version__}"
    helped = ovisocr("parse", "--help").stdout
    for text in ("OVISOCR_API_KEY", "OVISOCR_BASE_URL", "--api-key", "--pages", "default: 150",
                 "exit status", "130"):
        assert text in helped


@pytest.mark.parametrize("args", [["--concurrency", "0"], ["--dpi", "30"], ["--pages", "3-1"],
                                  ["--server-wait", "-1"], ["--page-timeout", "0"]])
def test_bad_values_are_usage_errors(args: list[str], tmp_path: Path):
    run = ovisocr("parse", str(tmp_path), *args)
    assert run.returncode == 2 and "error: argument" in run.stderr


def test_simulate_on_a_busy_port_is_a_usage_error():
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        run = ovisocr("simulate", "--port", str(busy.getsockname()[1]), timeout=30)
    assert run.returncode == 2 and "--port" in run.stderr


def test_missing_files_are_named_once_before_the_server_is_asked(pdfs: Path):
    dead = f"http://127.0.0.1:{free_port()}/v1"
    run = ovisocr("parse", str(pdfs / "a" / "x.pdf"), str(pdfs / "nope.pdf"), "-o",
                  str(pdfs / "out"), "--base-url", dead)
    assert run.stderr.count("nope.pdf: file not found") == 1
    assert run.returncode == 2 and "connection refused" in run.stderr
    assert "ovisocr simulate" in run.stderr
    with Simulator() as sim:
        run = ovisocr("parse", str(pdfs / "a" / "x.pdf"), str(pdfs / "nope.pdf"), "-o",
                      str(pdfs / "out"), "--base-url", sim.base_url)
    assert run.returncode == 1 and run.stderr.count("nope.pdf") == 1
    assert "1/2 files" in run.stderr


def test_endpoint_mistakes_say_what_to_do(pdfs: Path):
    with Simulator() as sim:
        root = sim.base_url.removesuffix("/v1")
        no_v1 = ovisocr("parse", str(pdfs / "a"), "-o", str(pdfs / "o"), "--base-url", root)
        wrong_model = ovisocr("parse", str(pdfs / "a"), "-o", str(pdfs / "o"), "--base-url",
                              sim.base_url, "--model", "foo")
        sent = sim.completions()
    assert no_v1.returncode == 2 and f"try {root}/v1" in no_v1.stderr
    assert wrong_model.returncode == 2 and "'foo' is not served" in wrong_model.stderr
    assert "ATH-MaaS/OvisOCR2" in wrong_model.stderr and sent == []


def test_a_broken_file_is_one_line(pdfs: Path, ovis_simulator: Simulator):
    (pdfs / "a" / "broken.pdf").write_bytes(b"%PDF-1.4 garbage")
    (pdfs / "a" / "empty.png").write_bytes(b"")
    run = ovisocr("parse", str(pdfs / "a"), "-o", str(pdfs / "out"), "--no-progress",
                  "--base-url", ovis_simulator.base_url)
    assert run.returncode == 1 and "1/3 files" in run.stderr
    lines = run.stderr.splitlines()
    (broken,) = [line for line in lines if "broken.pdf" in line]
    assert broken.startswith(f"ovisocr: {pdfs / 'a' / 'broken.pdf'}: CorruptFileError: ")
    assert len([line for line in lines if "empty.png" in line]) == 1


def test_encrypted_pdf_names_the_flag(tmp_path: Path, ovis_simulator: Simulator,
                                      corpus: Path):
    encrypted = corpus / "pypdfium2" / "encrypted.pdf"
    run = ovisocr("parse", str(encrypted), "-o", str(tmp_path), "--base-url",
                  ovis_simulator.base_url)
    assert run.returncode == 1 and "--password" in run.stderr


def test_same_names_in_two_folders_never_collide(pdfs: Path, ovis_simulator: Simulator):
    run = ovisocr("parse", str(pdfs / "a"), str(pdfs / "b"), "-o", str(pdfs / "out"),
                  "--base-url", ovis_simulator.base_url, "--format", "md", "--format", "json")
    assert run.returncode == 0
    for folder in ("a", "b"):
        md = (pdfs / "out" / folder / "x.md").read_text()
        assert md.startswith(f"<!-- source: {pdfs / folder / 'x.pdf'};")
        assert json.loads((pdfs / "out" / folder / "x.json").read_text())["source"].endswith(
            f"{folder}/x.pdf")


def test_output_to_one_file_to_stdout_and_selected_pages(pdfs: Path,
                                                        ovis_simulator: Simulator):
    url = ovis_simulator.base_url
    one = pdfs / "result.md"
    assert ovisocr("parse", str(pdfs / "a" / "x.pdf"), "-o", str(one), "--base-url",
                   url).returncode == 0
    assert one.is_file() and "<!-- page 2 -->" in one.read_text()
    streamed = ovisocr("parse", str(pdfs / "a"), str(pdfs / "b"), "-o", "-", "--base-url", url,
                       "--pages", "2")
    assert streamed.returncode == 0
    assert streamed.stdout.count("<!-- source:") == 2 and "<!-- page 1" not in streamed.stdout
    lines = ovisocr("parse", str(pdfs / "a"), "-o", "-", "--format", "json", "--base-url",
                    url).stdout.splitlines()
    assert [len(json.loads(line)["pages"]) for line in lines] == [2]
    clash = ovisocr("parse", str(pdfs / "a"), str(pdfs / "b"), "-o", str(pdfs / "r.md"),
                    "--base-url", url)
    assert clash.returncode == 2 and "single file" in clash.stderr


def test_progress_lines_without_a_terminal_and_cached_pages_counted(pdfs: Path,
                                                                   ovis_simulator: Simulator):
    (pdfs / "many.pdf").write_bytes(marked_pdf(20)[0])
    args = ["parse", str(pdfs / "many.pdf"), "-o", str(pdfs / "out"), "--base-url",
            ovis_simulator.base_url, "--cache", str(pdfs / "cache")]
    first = ovisocr(*args)
    progress = [line for line in first.stderr.splitlines() if "/20 pages" in line]
    assert len(progress) >= 5 and all("pages/min" in line for line in progress)
    assert progress[-1].startswith("ovisocr: 20/20 pages")
    assert "(0 from cache)" in first.stderr
    assert "(20 from cache)" in ovisocr(*args).stderr
    assert "/20 pages" not in ovisocr(*args, "--no-progress").stderr


#: tgkill's number: Ctrl-C as the kernel may deliver it, to a thread other than main
_TGKILL = {"x86_64": 234, "aarch64": 131}.get(platform.machine())


def interrupt(proc: subprocess.Popen[str], to: str) -> None:
    """SIGINT to the process (the kernel picks a thread, most often the main one) or
    to one of its worker threads, which the main thread must still notice."""
    if to == "process":
        proc.send_signal(signal.SIGINT)
        return
    if _TGKILL is None:
        pytest.skip(f"no tgkill number known for {platform.machine()}")
    workers = sorted(int(t) for t in os.listdir(f"/proc/{proc.pid}/task") if int(t) != proc.pid)
    assert workers, "the command runs no worker thread"
    assert ctypes.CDLL(None, use_errno=True).syscall(_TGKILL, proc.pid, workers[-1],
                                                     signal.SIGINT) == 0


@pytest.mark.usefixtures("ctrl_c_raises")
@pytest.mark.parametrize("to", ["process", "a worker thread"])
def test_ctrl_c_writes_what_is_done_and_says_how_to_resume(tmp_path: Path, to: str):
    (tmp_path / "in").mkdir()
    for n in range(3):
        pdf, ids = marked_pdf(3 if n < 2 else 40)
        (tmp_path / "in" / f"doc{n}.pdf").write_bytes(pdf)
    # SIGABRT prints every thread, should it ever hang
    env = command_env(PYTHONFAULTHANDLER="1")
    with Simulator(latency=LatencyModel(speed=2)) as sim:
        # doc2's last page never finishes on its own, so the run is still going when the
        # signal comes, however slowly this test's own process runs on a busy machine
        sim.register(ids[-1], PageScript("Last page.", faults={1: Hang(after_tokens=3)}))
        proc = subprocess.Popen([OVISOCR, "parse", str(tmp_path / "in"), "-o",
                                 str(tmp_path / "out"), "--base-url", sim.base_url,
                                 "--concurrency", "4"], stderr=subprocess.PIPE, text=True,
                                env=env)
        assert Simulator.wait_until(lambda: sum(r.finish_reason == "stop"
                                                for r in sim.completions()) >= 12, 60)
        interrupt(proc, to)
        err = exit_or_dump(proc, timeout=120)
    assert proc.returncode == 130 and "Traceback" not in err
    assert "interrupted:" in err and "run the same command again to resume" in err
    assert "first-hour-cache-" in err           # finished pages are in the default cache
    assert (tmp_path / "out" / "doc0.md").is_file() and (tmp_path / "out" / "doc1.md").is_file()
    partial = (tmp_path / "out" / "doc2.md").read_text()
    assert "incomplete: interrupted after" in partial.splitlines()[0]


@pytest.mark.usefixtures("ctrl_c_raises")
@pytest.mark.parametrize("to", ["process", "a worker thread"])
def test_ctrl_c_stops_the_simulator(to: str):
    env = command_env(PYTHONFAULTHANDLER="1")
    proc = subprocess.Popen([OVISOCR, "simulate", "--port", "0"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    assert select.select([proc.stdout], [], [], 60)[0], "no address printed within 60 s"
    served = json.loads(proc.stdout.readline())   # listening: its loop thread runs
    assert served["base_url"].startswith("http://127.0.0.1:")
    interrupt(proc, to)
    exit_or_dump(proc, timeout=60)
    assert proc.returncode == 130


def exit_or_dump(proc: subprocess.Popen[str], timeout: float) -> str:
    """The process's stderr once it exits; if it does not, a failure showing where each
    of its threads waits (faulthandler's dump on SIGABRT)."""
    try:
        return proc.communicate(timeout=timeout)[1]
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)
        dump = proc.communicate(timeout=60)[1]
        pytest.fail(f"still running {timeout:.0f} s after the signal:\n{dump[-8000:]}")


def test_a_python_module_run_is_the_same_command(pdfs: Path, ovis_simulator: Simulator):
    run = subprocess.run([sys.executable, "-m", "ovisocr_loader.cli", "--version"],
                         capture_output=True, text=True, timeout=60)
    assert run.stdout.strip() == f"ovisocr {__version__}"


@pytest.mark.parametrize("command", ["parse", "review", "eval", "compare", "bench", "simulate"])
def test_docs_cli_lists_every_option_of_help(command: str):
    helped = ovisocr(command, "--help").stdout
    documented = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text()
    synopsis = next(line for line in documented.splitlines()
                    if line.startswith(f"ovisocr {command}"))
    block = documented[documented.index(synopsis):documented.index("```", documented.index(
        synopsis))]
    options = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]+)", helped)) - {"--help"}
    assert options and all(option in block for option in options), options


def test_the_corpus_location_can_be_overridden(tmp_path: Path):
    tests = Path(__file__).resolve().parents[1]
    env = {**os.environ, "OVISOCR_TEST_CORPUS": str(tmp_path / "elsewhere")}
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          str(tests / "corpus")], capture_output=True, text=True, env=env,
                         timeout=300, cwd=tests.parent)
    assert "skipped" in run.stdout and "passed" not in run.stdout
    assert str(tmp_path / "elsewhere") in run.stdout or run.returncode == 0
