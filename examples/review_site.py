"""Write a review site for two generated scans, one of them turned sideways.

    python examples/review_site.py [OUT_DIR]

Open OUT_DIR/index.html in a browser: each page image beside its elements, figure
boxes drawn on the image, flagged pages marked. Needs the orientation extra.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from ovisocr_loader import OvisParser
from ovisocr_loader.review import write_site
from ovisocr_loader.testing import Simulator, make_pdf, next_page_id, text_page, turned


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp()) / "review"
    folder = Path(tempfile.mkdtemp())
    ids = [next_page_id() for _ in range(2)]
    (folder / "report.pdf").write_bytes(make_pdf([text_page(ids[0], seed=1)]))
    (folder / "fax.pdf").write_bytes(make_pdf([turned(text_page(ids[1], seed=2), 90)]))
    with Simulator() as sim:
        sim.register(ids[0], "# Report\n\n<table><tr><th>Item</th><th>State</th></tr>"
                             "<tr><td>Bollards</td><td>worn</td></tr></table>")
        sim.register(ids[1], "Fax cover sheet.\n\n"
                             '<img src="images/bbox_100_600_500_900.jpg" />')
        parser = OvisParser(base_url=sim.base_url, orientation="auto")
        docs = list(parser.parse_many([folder / "report.pdf", folder / "fax.pdf"]))
    docs.sort(key=lambda doc: doc.source)
    index = write_site(docs, out)
    turns = {Path(doc.source).name: doc.pages[0].rotation for doc in docs}
    print(f"wrote {index.name}; turned upright: {turns}")


if __name__ == "__main__":
    main()
