#!/usr/bin/env bash
# Provisions the `redis` participants: a Redis 8 server (vector sets: VADD / VSIM are built into
# the server) compiled from the upstream tarball of Debian trixie's `redis` source package, into
# a cache directory that later runs reuse:
#   ${VECBENCH_CACHE:-/var/cache/vecbench}/redis/current/bin/redis-server
# Idempotent: with a built server in the cache it only checks it (well under a second).
# Needs root only for apt (gcc and make, normally present). Build: `make -j2`, ~140 s on 2 cores.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${VECBENCH_CACHE:-/var/cache/vecbench}/redis
start=$(date +%s)

installed() {
  [ -x "$cache/current/bin/redis-server" ] && "$cache/current/bin/redis-server" --version | grep -q 'v=8\.'
}
if installed; then
  echo "redis: $("$cache/current/bin/redis-server" --version | grep -oE 'v=[0-9.]+') already built in $cache/current"
  exit 0
fi

for tool in gcc make; do
  if ! command -v $tool >/dev/null; then
    [ "$(id -u)" = 0 ] || { echo "redis: $tool is missing; run this script as root to install it" >&2; exit 1; }
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 --no-install-recommends build-essential >/dev/null
  fi
done

mkdir -p "$cache"
# Debian's packaging patches only switch Redis to system libraries; the upstream tarball with
# its bundled deps builds as is, and apt verifies it against trixie's signed index.
dl=$("$here/../../src/runner/provision/debian-source.sh" redis trixie "$cache/src" --tar-only)
tarball=$(ls -1 "$dl"/redis_*.orig.tar.gz | sort -V | tail -n1)
version=$(basename "$tarball" | sed -E 's/^redis_([0-9.]+)\.orig\.tar\.gz$/\1/')
case "$version" in 8.*) ;; *) echo "redis: trixie's redis is $version, not 8.x; vector sets need Redis 8" >&2; exit 1 ;; esac

build="$cache/build-$version"
rm -rf "$build" && mkdir -p "$build"
tar xzf "$tarball" -C "$build" --strip-components=1
echo "redis: building $version in $build (make -j2, ~140 s)"
# BUILD_TLS=no: loopback only, and it spares the OpenSSL headers.
make -C "$build" -j2 BUILD_TLS=no >"$build.log" 2>&1 || { tail -n 30 "$build.log" >&2; echo "redis: build failed, full log in $build.log" >&2; exit 1; }

dest="$cache/redis-$version"
rm -rf "$dest" && mkdir -p "$dest/bin"
cp "$build/src/redis-server" "$build/src/redis-cli" "$dest/bin/"
ln -sfn "redis-$version" "$cache/current"
rm -rf "$build" "$build.log"
installed || { echo "redis: the built server does not report version 8" >&2; exit 1; }
echo "redis: $version built into $dest in $(( $(date +%s) - start ))s"
