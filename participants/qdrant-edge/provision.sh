#!/usr/bin/env bash
# Provisions the `qdrant-edge` participants (qdrant-edge, qdrant-edge-disk): a Python virtual
# environment with the pinned, hash-checked wheels of requirements.txt, at
#   ${VECBENCH_CACHE:-/var/cache/vecbench}/venv/qdrant-edge
# Idempotent: a second run only checks that the engine imports.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../../src/runner/provision/python-venv.sh" qdrant-edge "$here/requirements.txt" qdrant_edge
