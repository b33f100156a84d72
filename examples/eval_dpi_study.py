"""The field report's DPI study with the Python API, against the simulator.

    python examples/eval_dpi_study.py

Three one-page scans are parsed at 100, 150 and 200 DPI and scored against their
reference transcriptions. The simulator reads images narrower than 1000 pixels with
a quarter of the words wrong (a Letter page is 850 px wide at 100 DPI), as a low DPI
fuses small print; the figures are the simulator's, not the model's. With a real
server, drop the simulator and pass base_url=.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from ovisocr_loader.eval import Reference, dpi_sweep
from ovisocr_loader.testing import PageScript, Simulator, marked_pdf

REFERENCE = ("The committee reviewed the annual account and the invoice balance "
             "before the meeting ended with a summary of every record")


def main() -> None:
    folder = Path(tempfile.mkdtemp())
    references = {}
    with Simulator() as sim:
        for name in ("letter", "invoice", "memo"):
            pdf, (page_id,) = marked_pdf(1)
            (folder / f"{name}.pdf").write_bytes(pdf)
            references[name] = Reference(name, REFERENCE)
            sim.register(page_id, PageScript(REFERENCE, low_resolution=(1000, 0.25)))
        results = dpi_sweep(sorted(folder.glob("*.pdf")), references, [100, 150, 200],
                            base_url=sim.base_url)
    for result in results:
        print(f"{result.dpi:g} DPI: mean F1 {result.summary.mean:.2f} over "
              f"{result.summary.documents} documents, {result.pages} pages")


if __name__ == "__main__":
    main()
