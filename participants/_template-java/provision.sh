#!/usr/bin/env bash
# Provisions the Java template participant: the host (src/sdk/java/VecbenchHost.java +
# participants/_template-java/TemplateHost.java) compiled with javac --release 17 into
#   ${VECBENCH_CACHE:-/var/cache/vecbench}/java/_template-java/classes
# with a stamp holding the sha256 of every jar and source. Idempotent: when the stamp matches, a
# second run only checks and installs nothing. The toy needs no jars; a participant made from
# this template lists its engine's jars in JARS, each pinned with its sha256, and this script
# downloads and checks them (as participants/lucene/provision.sh does).
# Needs a JDK 17+ (javac): installed with apt-get when run as root (openjdk-17-jdk-headless).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=../../src/sdk/java/jdk.sh
. "$root/src/sdk/java/jdk.sh"
start=$(date +%s%N)
elapsed() { awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }'; }

NAME=_template-java # REPLACE: the directory name, also in adapter.ts
MAIN=TemplateHost   # REPLACE: the host's class, also in adapter.ts (MAIN)
# REPLACE: the engine's jars, one "FILE SHA256 URL" a line (the sha256 the repository publishes
# beside the jar, or sha256sum of a copy you checked); adapter.ts lists the same FILEs.
JARS=()
dest=${VECBENCH_CACHE:-/var/cache/vecbench}/java/$NAME
classes=$dest/classes
stamp=$dest/.vecbench-stamp
sources=("$root/src/sdk/java/VecbenchHost.java" "$here/$MAIN.java")

jar_ok() { [ -f "$dest/$1" ] && [ "$(sha256sum "$dest/$1" | cut -d' ' -f1)" = "$2" ]; }
jars_ok() {
  local file sha url
  for j in "${JARS[@]}"; do
    read -r file sha url <<<"$j"
    jar_ok "$file" "$sha" || return 1
  done
}
want_stamp() {
  local file sha url
  for j in "${JARS[@]}"; do
    read -r file sha url <<<"$j"
    echo "$file $sha"
  done
  for s in "${sources[@]}"; do echo "$(basename "$s") $(sha256sum "$s" | cut -d' ' -f1)"; done
}

want=$(want_stamp)
if [ -f "$classes/$MAIN.class" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ] && jars_ok; then
  echo "$NAME: the compiled host (and its ${#JARS[@]} pinned jars) are ready in $dest; checked in $(elapsed)s"
  exit 0
fi

need_javac "$NAME"

mkdir -p "$dest"
rm -f "$stamp"
cp=()
for j in "${JARS[@]}"; do
  read -r file sha url <<<"$j"
  cp+=("$dest/$file")
  if jar_ok "$file" "$sha"; then continue; fi
  rm -f "$dest/$file"
  curl -fsS --retry 2 --connect-timeout 20 -o "$dest/$file.part" "$url" || { rm -f "$dest/$file.part"; echo "$NAME: cannot download $url" >&2; exit 1; }
  mv "$dest/$file.part" "$dest/$file"
  jar_ok "$file" "$sha" || { rm -f "$dest/$file"; echo "$NAME: $url does not match the pinned sha256 $sha; removed it" >&2; exit 1; }
  echo "$NAME: downloaded $file (sha256 ok)"
done

rm -rf "$classes.new"
mkdir -p "$classes.new"
javac --release 17 -nowarn -cp "$(IFS=:; echo "${cp[*]}")" -d "$classes.new" "${sources[@]}"
rm -rf "$classes"
mv "$classes.new" "$classes"
echo "$want" >"$stamp"
echo "$NAME: $(javac -version 2>&1), host compiled into $classes in $(elapsed)s"
