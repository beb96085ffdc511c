"""``python -m services.cli``: the same command line as ``deepresearch``."""

import sys

from services.cli.main import main

sys.exit(main())
