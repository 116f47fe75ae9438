"""``python -m pi_tui`` runs the ``pi-tui`` command."""

import sys

from .cli import main

sys.exit(main())
