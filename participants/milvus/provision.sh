#!/usr/bin/env bash
# Provisions the `milvus` participant: a Python virtual environment with the pinned, hash-checked
# wheels of requirements.txt (Embedded Milvus 2.3.5, pymilvus 2.3.8), at
#   ${VECBENCH_CACHE:-/var/cache/vecbench}/venv/milvus
# then unpacks the server's binaries from the `milvus` wheel (xz-compressed inside it) once, into
#   ${VECBENCH_CACHE:-/var/cache/vecbench}/venv/milvus/milvus-server/bin
# with the wheel's own unpacker, which skips every file already unpacked from the same archive.
# Idempotent: a second run checks that pymilvus imports and that the binaries match, and installs
# nothing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
venv=${VECBENCH_CACHE:-/var/cache/vecbench}/venv/milvus
"$here/../../src/runner/provision/python-venv.sh" milvus "$here/requirements.txt" pymilvus
"$venv/bin/python" -c 'import sys, milvus; milvus._initialize_data_files(sys.argv[1])' "$venv/milvus-server"
echo "milvus: server $("$venv/bin/python" -c 'import milvus; print(milvus.__version__)') unpacked in $venv/milvus-server/bin"
