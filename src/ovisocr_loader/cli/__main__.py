"""``python -m ovisocr_loader.cli``: the same as the ``ovisocr`` command."""

import sys

from . import main

if __name__ == "__main__":   # render worker processes import this module again
    sys.exit(main())
