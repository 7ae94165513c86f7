#!/usr/bin/env bash
# Install axe-core (pinned in tools/axe/package.json and package-lock.json) into
# tools/axe/node_modules with npm, for the browser suite's accessibility checks.
# Never from a CDN: the tests inject this local file into each page.
set -euo pipefail
cd "$(dirname "$0")/axe"
if [ -f node_modules/axe-core/axe.min.js ]; then
  exit 0
fi
if ! command -v npm >/dev/null; then
  echo "npm is missing: install Debian's npm (apt-get install npm) to run the accessibility checks" >&2
  exit 1
fi
if [ -f package-lock.json ]; then
  npm ci --no-audit --no-fund --loglevel=error
else
  npm install --no-audit --no-fund --loglevel=error
fi
test -f node_modules/axe-core/axe.min.js
