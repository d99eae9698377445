"""``python -m longitudinal.cli``: the ``longitudinal`` command."""

import sys

from longitudinal.cli import main

sys.exit(main())
