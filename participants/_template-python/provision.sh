#!/usr/bin/env bash
# Provisions the Python template participant: a virtual environment with the pinned,
# hash-checked wheels of requirements.txt, at
#   ${VECBENCH_CACHE:-/var/cache/vecbench}/venv/_template-python
# Idempotent: a second run only checks that the module imports.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../../src/runner/provision/python-venv.sh" _template-python "$here/requirements.txt" numpy
