"""Strip execution timings, widget state and stray metadata from notebooks.

See autograder.hygiene; `python tools/clean_notebooks.py --help`.
"""

import sys

from autograder.hygiene import main

if __name__ == "__main__":
    sys.exit(main())
