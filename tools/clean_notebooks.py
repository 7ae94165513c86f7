"""Strip execution timings, widget state and stray metadata from notebooks (see autograder.hygiene)."""

import sys

from autograder.hygiene import main

if __name__ == "__main__":
    sys.exit(main())
