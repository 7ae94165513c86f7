"""Strip execution timings, widget state and stray metadata from notebooks.

See autograder.authoring.hygiene; `python tools/clean_notebooks.py --help`.
"""

import sys

from autograder.authoring.hygiene import main

if __name__ == "__main__":
    sys.exit(main())
