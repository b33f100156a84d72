"""``python -m ovisocr_loader.cli``: the same as the ``ovisocr`` command."""

import sys

from . import main

sys.exit(main())
