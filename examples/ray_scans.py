"""Parse a folder of scans with Ray Data against the simulator: one row per page.

    python examples/ray_scans.py

Needs the ray extra. On a cluster: ray.init(address="auto") and a base_url every
node can reach; the input folder must be readable at the same path on every node.
"""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path

import ray

from ovisocr_loader.ray import ROWS_PER_FILE, read_scans
from ovisocr_loader.testing import Simulator, scan_folder


def main() -> None:
    ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.WARNING,
             log_to_driver=False)
    with tempfile.TemporaryDirectory() as tmp, Simulator() as sim:
        folder = scan_folder(Path(tmp) / "scans", sim, files=8, pages=20, long_file=8)
        rows = read_scans(folder.root, base_url=sim.base_url, concurrency=16, workers=1)
        rows.write_parquet(f"{tmp}/rows", min_rows_per_file=ROWS_PER_FILE)
        table = ray.data.read_parquet(f"{tmp}/rows").to_pandas()
    failed = table[table["error"].notna()]
    print(f"{len(table)} rows: {table['page_number'].notna().sum()} pages, "
          f"{len(failed)} failed")
    for row in failed.itertuples():
        print(f"  {Path(row.source).name}: {row.error.split(':')[0]}")
    ray.shutdown()


if __name__ == "__main__":
    main()
