"""pytest fixtures for the simulator (registered as the ``ovisocr_simulator`` plugin).

``ovis_simulator`` gives a running :class:`Simulator` per test, fast enough for
unit-speed tests (latency model at 50x the field speed).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .latency import LatencyModel
from .server import Simulator


@pytest.fixture
def ovis_simulator() -> Iterator[Simulator]:
    """A simulated OvisOCR2 server on 127.0.0.1, stopped after the test."""
    with Simulator(latency=LatencyModel(speed=50.0)) as simulator:
        yield simulator
