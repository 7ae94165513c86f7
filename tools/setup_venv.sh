#!/usr/bin/env bash
# Create the virtual environment (if missing) and install the pinned course stack into it.
set -euo pipefail
python="${1:-python3}"
venv="${2:-.venv}"

if ! "$python" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then
  if command -v python3.11 >/dev/null; then
    python=python3.11
  else
    echo "error: the course needs Python 3.11 (torch 2.13.0 is pinned for it)." >&2
    echo "       found: $("$python" --version 2>&1 || echo none). Install Python 3.11, or run" >&2
    echo "       'make lab PYTHON=/path/to/python3.11'." >&2
    exit 1
  fi
fi
# Refuse a Python the pins cannot install on (pyproject.toml's requires-python), before
# pip backtracks into other versions or downloads the CUDA build of torch.
"$python" "$(dirname "$0")/check_python.py" || exit 1
# Debian's own Python keeps venv's pip (ensurepip) in a package of its own.
if ! "$python" -c 'import ensurepip' 2>/dev/null; then
  package="python$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')-venv"
  real="$("$python" -c 'import os, sys; print(os.path.realpath(sys.executable))')"
  if ! command -v dpkg >/dev/null || ! dpkg -S "$real" >/dev/null 2>&1; then
    echo "error: $python ($real) has no ensurepip, so it cannot create a virtual" >&2
    echo "       environment. Use a Python that has it: 'make lab PYTHON=/path/to/python3.11'." >&2
    exit 1
  fi
  case "$0" in */*) source "${0%/*}/apt.sh" ;; *) source ./apt.sh ;; esac
  if ! can_install; then
    echo "error: $python cannot create a virtual environment: Debian keeps that in the" >&2
    echo "       package $package. Install it with: sudo apt-get install $package" >&2
    exit 1
  fi
  echo "Installing $package from Debian's packages (venv's pip for $python) ..."
  apt_install "$package"
fi
cache="$(dirname "$0")/venv_cache.py"
restored= created=
if [ ! -e "$venv" ] && "$python" "$cache" restore "$venv"; then
  restored=1  # a kept copy of this very stack (same pins, scripts, interpreter)
elif [ ! -x "$venv/bin/python" ] || [ ! -x "$venv/bin/pip" ]; then
  created=1
  echo "Creating the virtual environment in $venv ..."
  if ! "$python" -m venv --clear "$venv"; then
    rm -rf "$venv"  # never leave a half-made venv that the next run would take as made
    echo "error: could not create the virtual environment $venv with $python" >&2
    exit 1
  fi
fi
if [ -z "$restored" ]; then
  # pip first, as pinned in constraints.txt: the pip a venv starts with (23.2 on Python
  # 3.11) spends about three times the CPU resolving the stack against PyPI's file lists.
  "$venv/bin/python" -m pip install --progress-bar off --quiet -c constraints.txt pip
  bash "$(dirname "$0")/install_cpu_torch.sh" "$venv/bin/python"
  echo "Installing the course stack (pinned in pyproject.toml and constraints.txt) ..."
fi
# restored: only the project is installed (quietly: the rest is there)
"$venv/bin/python" -m pip install --progress-bar off ${restored:+--quiet} -c constraints.txt \
  -e '.[dev]'
# made from nothing here: a copy kept for the next clone (tools/venv_cache.py)
if [ -n "$created" ]; then "$python" "$cache" save "$venv"; fi
touch "$venv/.installed"
echo "Ready: $venv"
