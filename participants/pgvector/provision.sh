#!/usr/bin/env bash
# Provisions the `pgvector` participant: a PostgreSQL server with the pgvector extension.
#   Debian 13: the packaged postgresql-17 and postgresql-17-pgvector.
#   Debian 12: postgresql-15 from bookworm, and pgvector 0.8.0 compiled from Debian trixie's
#              `pgvector` source package (bookworm ships none), built in a cache directory that
#              later runs reuse: ${VECBENCH_CACHE:-/var/cache/vecbench}/pgvector.
# Installs no trixie binary on Debian 12. Idempotent: a provisioned machine takes ~1 s.
# The participant runs its own cluster (initdb into the run's directory, pg_ctl-free start on a
# free 127.0.0.1 port), so the packaged cluster service is neither needed nor touched.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${VECBENCH_CACHE:-/var/cache/vecbench}/pgvector
start=$(date +%s)
. /etc/os-release

apt_install() {
  local missing=()
  for p in "$@"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  [ "$(id -u)" = 0 ] || { echo "pgvector: ${missing[*]} missing; run this script as root" >&2; exit 1; }
  echo "pgvector: apt-get install ${missing[*]}"
  apt-get update -qq
  # policy-rc.d-free: the packaged cluster may start; the participant never uses it.
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 --no-install-recommends "${missing[@]}" >/dev/null
}

case "${VERSION_ID:-}" in
  13)
    pg=17
    apt_install postgresql-17 postgresql-17-pgvector
    ;;
  12)
    pg=15
    apt_install postgresql-15 postgresql-server-dev-15 make gcc
    ext=/usr/share/postgresql/$pg/extension
    if [ -f "$ext/vector.control" ] && [ -f "/usr/lib/postgresql/$pg/lib/vector.so" ]; then
      echo "pgvector: $(grep -oE "default_version = '[^']+'" "$ext/vector.control") already installed for PostgreSQL $pg"
    else
      srcdir=$(ls -d "$cache"/build/pgvector-*/ 2>/dev/null | sort -V | tail -n1 || true)
      if [ -z "$srcdir" ] || [ ! -f "$srcdir/vector.so" ]; then
        rm -rf "$cache/build" && mkdir -p "$cache/build"
        dl=$("$here/../../src/runner/provision/debian-source.sh" pgvector trixie "$cache/src")
        dsc=$(ls -1 "$dl"/pgvector_*.dsc | sort -V | tail -n1)
        # dpkg-source checks the tarballs against the .dsc (itself checked by apt).
        (cd "$cache/build" && dpkg-source -x "$dsc" >/dev/null)
        srcdir=$(ls -d "$cache"/build/pgvector-*/ | sort -V | tail -n1)
        echo "pgvector: building $(basename "$srcdir") against PostgreSQL $pg"
        # OPTFLAGS="": no -march=native, so the cached build runs on any x86-64 machine.
        make -C "$srcdir" PG_CONFIG=/usr/lib/postgresql/$pg/bin/pg_config OPTFLAGS="" >"$cache/build.log" 2>&1 \
          || { tail -n 30 "$cache/build.log" >&2; echo "pgvector: build failed, log in $cache/build.log" >&2; exit 1; }
      fi
      make -C "$srcdir" PG_CONFIG=/usr/lib/postgresql/$pg/bin/pg_config OPTFLAGS="" install >>"$cache/build.log" 2>&1
    fi
    ;;
  *)
    echo "pgvector: Debian ${VERSION_ID:-unknown} is not supported (12 or 13); install PostgreSQL with pgvector >= 0.8 by hand" >&2
    exit 1
    ;;
esac

[ -f "/usr/share/postgresql/$pg/extension/vector.control" ] || { echo "pgvector: vector.control missing after install" >&2; exit 1; }
echo "pgvector: PostgreSQL $pg with pgvector ready in $(( $(date +%s) - start ))s"
