#!/usr/bin/env bash
# Provisions the `weaviate` participant: the Weaviate server v1.39.0 built from source with
#   go install github.com/weaviate/weaviate/cmd/weaviate-server@v1.39.0
# into ${VECBENCH_CACHE:-/var/cache/vecbench}/weaviate/bin/weaviate-server, then a stamp beside
# it with the version and the binary's sha256. Idempotent: when the stamp matches the binary, a
# second run only checks and installs nothing.
#
# The hash pins are Go's own: every module comes from the module proxy and is checked against
# the go.sum of weaviate v1.39.0 and, for the weaviate module itself and any module go.sum does
# not list, against the checksum database (sum.golang.org). GONOSUMDB, GOPRIVATE and GOINSECURE
# are unset so no module skips that check, and GOSUMDB=off is refused; -mod=readonly forbids
# any go.mod or go.sum update.
# A build from nothing takes about 4 minutes on 2 cores (README); Go's build cache makes a
# rebuild quick.
set -euo pipefail
start=$(date +%s%N)
elapsed() { awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }'; }

VERSION=v1.39.0
PACKAGE=github.com/weaviate/weaviate/cmd/weaviate-server
dest=${VECBENCH_CACHE:-/var/cache/vecbench}/weaviate
bin=$dest/bin/weaviate-server
stamp=$dest/.vecbench-stamp

stamp_for() { echo "weaviate-server $VERSION sha256 $(sha256sum "$1" | cut -d' ' -f1)"; }

if [ -x "$bin" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$(stamp_for "$bin")" ]; then
  echo "weaviate: weaviate-server $VERSION ready in $dest/bin (stamp and sha256 match); installed nothing; checked in $(elapsed)s"
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  echo "weaviate: the Go toolchain (go, 1.26 or later) is missing; install it (https://go.dev/dl/) and run $0 again" >&2
  exit 1
fi

mkdir -p "$dest/bin"
rm -f "$stamp"
echo "weaviate: building $PACKAGE@$VERSION with $(go version | cut -d' ' -f3) (a few minutes on 2 cores)"
unset GONOSUMDB GOPRIVATE GOINSECURE
if [ "$(go env GOSUMDB)" = off ]; then
  echo "weaviate: GOSUMDB is off (go env); the build needs the checksum database to verify the modules" >&2
  exit 1
fi
# GOTOOLCHAIN=local: weaviate's go.mod asks for go 1.26; an older go fails here instead of
# fetching another toolchain.
GOBIN=$dest/bin GOFLAGS=-mod=readonly GOTOOLCHAIN=local go install "$PACKAGE@$VERSION"
stamp_for "$bin" >"$stamp"
echo "weaviate: weaviate-server $VERSION installed in $dest/bin ($(cut -d' ' -f4 "$stamp" | cut -c1-16)...)"
echo "weaviate: installed in $(elapsed)s"
