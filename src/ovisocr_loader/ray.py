"""Ray Data integration (the ``ray`` extra: ``pip install '.[ray]'``).

``read_scans`` turns files, directories and globs into a Dataset with one row per
page; ``OvisBatchParser`` and ``plan_page_ranges`` are its two steps, for users
composing their own Ray pipelines.
"""

from .extras import require as _require

_require("ray.data", "ray[data]", "ray", "ovisocr_loader.ray")

from .integrations.ray_data import (  # noqa: E402
    ROW_SCHEMA,
    ROWS_PER_FILE,
    OvisBatchParser,
    document_rows,
    plan_page_ranges,
    read_scans,
)

__all__ = ["ROWS_PER_FILE", "ROW_SCHEMA", "OvisBatchParser", "document_rows",
           "plan_page_ranges", "read_scans"]
