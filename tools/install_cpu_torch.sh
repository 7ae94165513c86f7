#!/usr/bin/env bash
# Install PyTorch's CPU build into the environment of the Python given ($1), if it has no
# torch yet. PyPI's Linux wheel of torch is the CUDA build (several GB), so torch goes in
# before the rest of the stack: from a local wheel where pip's find-links has one (offline),
# else from PyTorch's CPU index (tools/sync_environment.py's TORCH_CPU_INDEX).
set -euo pipefail
python="$1"
here="$(cd "$(dirname "$0")" && pwd)"
constraints="$here/../constraints.txt"
if "$python" -m pip show torch >/dev/null 2>&1; then
  exit 0
fi
echo "Installing PyTorch's CPU build ..."
pip=("$python" -m pip install --progress-bar off --no-deps -c "$constraints")
"${pip[@]}" --no-index torch 2>/dev/null \
  || "${pip[@]}" --index-url "$("$python" "$here/sync_environment.py" --torch-index)" torch
