#!/usr/bin/env bash
# The Python environment of a participant whose host is in Python: a virtual environment at
#   ${VECBENCH_CACHE:-/var/cache/vecbench}/venv/<name>
# holding exactly the wheels of its requirements file, each checked against its sha256
# (pip --require-hashes; binary wheels only, nothing is built). Idempotent: an environment made
# from the same requirements file (its sha256 is kept inside) is only checked by importing
# <module>. Usage: python-venv.sh NAME REQUIREMENTS MODULE
# Needs python3 with venv and ensurepip (Debian: python3-venv, installed when run as root).
set -euo pipefail
name=$1 requirements=$2 module=$3
venv=${VECBENCH_CACHE:-/var/cache/vecbench}/venv/$name
want=$(sha256sum "$requirements" | cut -d' ' -f1)
start=$(date +%s)

check() {
  "$venv/bin/python" -c "import $module" && echo "$name: $("$venv/bin/python" -m pip --disable-pip-version-check freeze --all 2>/dev/null | grep -v -E '^(pip|setuptools)==' | tr '\n' ' ')ready in $venv"
}
if [ -x "$venv/bin/python" ] && [ "$(cat "$venv/.vecbench-requirements" 2>/dev/null)" = "$want" ]; then
  check
  exit 0
fi

if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
  [ "$(id -u)" = 0 ] || { echo "$name: python3's venv module is missing; run this as root to install python3-venv" >&2; exit 1; }
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 --no-install-recommends python3-venv >/dev/null
fi
rm -rf "$venv"
mkdir -p "$(dirname "$venv")"
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check --no-cache-dir --only-binary :all: --require-hashes -r "$requirements"
echo "$want" > "$venv/.vecbench-requirements"
check
echo "$name: installed in $(( $(date +%s) - start ))s"
