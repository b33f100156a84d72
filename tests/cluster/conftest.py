"""One local Ray (2 CPUs, as in CI) for every test here; skipped without the extra."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

ray = pytest.importorskip("ray", reason="the ray extra is not installed")


@pytest.fixture(scope="package")
def local_ray() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.WARNING,
             log_to_driver=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    yield
    ray.shutdown()
