"""``python -m pairbench.worker [--root DIR] [--list] FILE_OR_DIR...``: the Python worker."""

import sys

from pairbench.worker.serve import main

if __name__ == "__main__":
    sys.exit(main())
