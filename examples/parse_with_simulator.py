"""Parse a generated scan against the simulator: no GPU needed.

    python examples/parse_with_simulator.py

With a real server, drop the simulator and pass base_url= (or set OVISOCR_BASE_URL).
"""

from __future__ import annotations

from ovisocr_loader import OvisParser
from ovisocr_loader.testing import Simulator, make_pdf, next_page_id, page_image


def main() -> None:
    ids = [next_page_id() for _ in range(3)]
    pages = [page_image(ids[0], lines=["Discharge letter"]),
             page_image(None),  # a blank page: never sent to the model
             page_image(ids[2], lines=["Results"])]
    pdf = make_pdf(pages)
    with Simulator() as sim:
        sim.register(ids[0], "# Discharge letter\n\nThe patient was discharged on 3 May.")
        sim.register(ids[2], "## Results\n\nAll values within range.", loop="digits")
        doc = OvisParser(base_url=sim.base_url).parse(pdf, name="letter.pdf")
    for page in doc.pages:
        attempts = [(a.purpose, a.finish_reason) for a in page.attempts]
        print(f"page {page.page_number}: blank={page.blank} attempts={attempts}")
        print(page.markdown or "(no text)")
        print()


if __name__ == "__main__":
    main()
