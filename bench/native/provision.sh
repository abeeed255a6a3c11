#!/usr/bin/env bash
# Provisions the Python environments of bench:overhead's native loops: for each
# bench/native/<engine>.requirements.txt a virtual environment with exactly its pinned,
# hash-checked wheels, at ${VECBENCH_CACHE:-/var/cache/vecbench}/venv/bench-<engine>, checked
# by importing the module its "# import: MODULE" line names. Run by scripts/setup.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
venv_sh="$here/../../src/runner/provision/python-venv.sh"
shopt -s nullglob
for requirements in "$here"/*.requirements.txt; do
  engine=$(basename "$requirements" .requirements.txt)
  module=$(sed -n 's/^# import: *\([A-Za-z0-9_.]*\).*/\1/p' "$requirements" | head -1)
  [ -n "$module" ] || { echo "bench-$engine: $requirements has no '# import: MODULE' line" >&2; exit 1; }
  "$venv_sh" "bench-$engine" "$requirements" "$module"
done
