#!/usr/bin/env bash
# Downloads a source package from another Debian suite (e.g. trixie's build of a PostgreSQL
# extension on a Debian 12 machine) without touching the system's apt state: a private sources file, lists and cache
# under WORKDIR, so no trixie binary can ever be installed by it. apt checks every file's
# sha256 against the suite's signed index. Prints the directory holding the downloaded files.
#
# usage: debian-source.sh PACKAGE SUITE WORKDIR [--tar-only]
#   --tar-only: only the upstream (orig) tarball, for packages whose current .dsc the archive
#               no longer serves (the index names it, the pool answers 404, while the orig
#               tarball it names is there; a participant's README names the case seen).
set -euo pipefail
pkg=$1 suite=$2 work=$3
only=()
[ "${4:-}" = --tar-only ] && only=(--tar-only)

# The archive this machine already uses (its first Debian, non-security entry).
mirror=$(grep -hsE '^(URIs:|deb )' /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list /etc/apt/sources.list 2>/dev/null \
  | grep -v -e debian-security -e '^#' | grep -oE 'https?://[^ ]+/debian/?' | head -n1 || true)
mirror=${mirror:-http://deb.debian.org/debian}

mkdir -p "$work/apt/lists/partial" "$work/apt/cache/archives/partial" "$work/dl"
list="$work/apt/sources.list"
echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] ${mirror%/} $suite main" >"$list"
opts=(-o "Dir::Etc::sourcelist=$list" -o Dir::Etc::sourceparts=- -o "Dir::State::Lists=$work/apt/lists"
  -o "Dir::Cache=$work/apt/cache" -o APT::Sandbox::User=root -qq)
apt-get "${opts[@]}" update >&2
(cd "$work/dl" && apt-get "${opts[@]}" source --download-only "${only[@]}" "$pkg" >&2)
echo "$work/dl"
