"""User-given paths, as a shell would read them."""

from __future__ import annotations

import os


def user_path(path: str | os.PathLike[str]) -> str:
    """``~`` and ``$VARS`` expanded: ``"~/.cache/ovisocr"`` means the home folder, as
    it does on a command line, not a folder literally named ``~``."""
    return os.path.expandvars(os.path.expanduser(os.fspath(path)))
