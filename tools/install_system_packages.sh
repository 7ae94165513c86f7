#!/usr/bin/env bash
# Install the system packages the tests need, from Debian's packages:
#   bubblewrap  the sandbox `autograder grade` runs submissions in
#   chromium    the browser the JupyterLab and JupyterHub tests drive (Playwright never
#               downloads one)
#   postgresql  the server the PostgreSQL-gradebook test starts (initdb, pg_ctl)
#   nodejs, npm configurable-http-proxy, JupyterHub's proxy (installed from npm by `make class`)
set -euo pipefail
# CI (CI=true) and `make test` (EVERY_TEST=1) run every test: a package that cannot be
# installed fails them here, not later as skipped tests.
strict() { [ "${CI:-}" = true ] || [ "${EVERY_TEST:-}" = 1 ]; }
missing=()
command -v bwrap >/dev/null || missing+=(bubblewrap)
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v useradd >/dev/null || missing+=(passwd)
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || missing+=(postgresql)
command -v npm >/dev/null || missing+=(nodejs npm)
[ ${#missing[@]} -eq 0 ] && exit 0

case "$0" in */*) source "${0%/*}/apt.sh" ;; *) source ./apt.sh ;; esac
if ! can_install; then
  echo "warning: cannot install ${missing[*]} (needs root or passwordless sudo)." >&2
  echo "         Install them with: sudo apt-get install ${missing[*]}" >&2
  if strict; then
    echo "error: make test runs every test, and these need them." >&2
    exit 1
  fi
  echo "         Until then the browser tests skip and grading refuses to run unsandboxed." >&2
  exit 0
fi
if ! command -v apt-get >/dev/null; then
  echo "warning: no apt-get here; install ${missing[*]} with your system's package manager." >&2
  strict && exit 1
  exit 0
fi
echo "Installing ${missing[*]} from Debian's packages ..."
apt_install "${missing[@]}"
echo "Installed ${missing[*]}."
