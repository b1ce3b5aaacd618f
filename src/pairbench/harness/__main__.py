"""``python -m pairbench.harness [--root DIR] [--list] FILE_OR_DIR...``: the Python worker."""

import sys

from pairbench.harness.worker import main

if __name__ == "__main__":
    sys.exit(main())
