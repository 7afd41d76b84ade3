"""``python -m benchmarks``: see :mod:`benchmarks.harness.cli`."""

import sys

from benchmarks.harness.cli import main

if __name__ == "__main__":
    sys.exit(main())
