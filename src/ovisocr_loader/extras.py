"""A missing optional framework, said in words a user can act on."""

from __future__ import annotations

import importlib.util


def require(module: str, distribution: str, extra: str, feature: str) -> None:
    """Raise an ImportError naming the extra to install when ``module`` is absent."""
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):   # the parent package is missing (or a stub)
        found = False
    if not found:
        raise ImportError(
            f"{feature} needs {distribution}, which is not installed: install the "
            f"{extra!r} extra, e.g. pip install -e '.[{extra}]' in your ovisocr-loader "
            "checkout", name=module)
