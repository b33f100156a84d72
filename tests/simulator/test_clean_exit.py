"""Nothing printed at interpreter exit after a good run (issue #52).

Each way a user runs the package, sync and async, in one fresh interpreter with
warnings on: leaving an ``async for`` over a loader early once made ``asyncio.run``
print "aclose(): asynchronous generator is already running" after the run.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from ovisocr_loader.testing import Simulator, next_page_id, write_scan

SCRIPT = """
import asyncio, sys
from ovisocr_loader import OvisParser
from ovisocr_loader.langchain import OvisLoader
from ovisocr_loader.llama_index import OvisReader

url, pdf = sys.argv[1], sys.argv[2]
opts = {"base_url": url, "cache_dir": False}
print(len(OvisParser(**opts).parse(pdf).pages))
print(len(list(OvisParser(**opts).parse_many([pdf, pdf]))))
print(len(OvisReader(**opts).load_data(pdf)))
print(len(OvisLoader(pdf, **opts).load()))
print(next(iter(OvisLoader(pdf, **opts).lazy_load())).metadata["page_label"])

async def both():
    docs = await OvisReader(**opts).aload_data(pdf)
    async for _ in OvisLoader(pdf, **opts).alazy_load():
        break
    async for _ in OvisParser(**opts).aparse_many([pdf, pdf]):
        break
    return len(docs)

print(asyncio.run(both()))
"""


def test_no_traceback_or_warning_at_exit_after_sync_and_async_runs(
        ovis_simulator: Simulator, tmp_path: Path):
    source = tmp_path / "scan.pdf"
    write_scan(ovis_simulator, source, [next_page_id() for _ in range(3)])
    run = subprocess.run([sys.executable, "-W", "default", "-c", SCRIPT,
                          ovis_simulator.base_url, str(source)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["3", "2", "3", "3", "1", "3"]
    assert run.stderr == ""
