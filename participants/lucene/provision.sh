#!/usr/bin/env bash
# Provisions the `lucene` participant: lucene-core 9.12.3 from Maven Central (one jar, no
# dependencies), checked against its pinned sha256, and the host (src/sdk/java/VecbenchHost.java
# + participants/lucene/LuceneHost.java) compiled with javac --release 17, at
#   ${VECBENCH_CACHE:-/var/cache/vecbench}/java/lucene/{lucene-core-9.12.3.jar,classes/}
# with a stamp holding the sha256 of the jar and of both sources. Idempotent: when the stamp
# matches, a second run only checks (the jar's hash, the stamp) and installs nothing.
# Needs a JDK 17+ (javac): installed with apt-get when run as root (openjdk-17-jdk-headless).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=../../src/sdk/java/jdk.sh
. "$root/src/sdk/java/jdk.sh"
start=$(date +%s%N)
elapsed() { awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }'; }

VERSION=9.12.3
SHA256=b64a3f8098a7572034fb30085cdee01b34ec81fb0e5a31b471536af58dc6c01b
URL=https://repo1.maven.org/maven2/org/apache/lucene/lucene-core/$VERSION/lucene-core-$VERSION.jar
dest=${VECBENCH_CACHE:-/var/cache/vecbench}/java/lucene
jar=$dest/lucene-core-$VERSION.jar
classes=$dest/classes
stamp=$dest/.vecbench-stamp
sources=("$root/src/sdk/java/VecbenchHost.java" "$here/LuceneHost.java")

check_jar() { (cd "$dest" && echo "$SHA256  lucene-core-$VERSION.jar" | sha256sum -c --quiet - >/dev/null 2>&1); }
want_stamp() {
  echo "lucene-core-$VERSION.jar $SHA256"
  for s in "${sources[@]}"; do echo "$(basename "$s") $(sha256sum "$s" | cut -d' ' -f1)"; done
}

want=$(want_stamp)
if [ -f "$jar" ] && [ -f "$classes/LuceneHost.class" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  if check_jar; then
    echo "lucene: lucene-core $VERSION (sha256 ok) and the compiled host are ready in $dest; checked in $(elapsed)s"
    exit 0
  fi
  echo "lucene: $jar no longer matches the pinned sha256; installing again"
fi

need_javac lucene

mkdir -p "$dest"
rm -f "$stamp"
if [ -f "$jar" ] && check_jar; then
  echo "lucene: lucene-core $VERSION already downloaded (sha256 ok)"
else
  rm -f "$jar"
  if curl -fsS --retry 2 --connect-timeout 20 -o "$jar.part" "$URL"; then
    mv "$jar.part" "$jar"
    echo "lucene: downloaded $URL"
  else
    rm -f "$jar.part"
    command -v mvn >/dev/null 2>&1 || { echo "lucene: cannot download $URL and mvn is not installed" >&2; exit 1; }
    echo "lucene: curl failed; trying mvn dependency:copy"
    mvn -q -B -Dstyle.color=never dependency:copy -Dartifact="org.apache.lucene:lucene-core:$VERSION:jar" -DoutputDirectory="$dest" -Dmdep.overWriteReleases=true
  fi
  check_jar || { echo "lucene: $jar does not match the pinned sha256 $SHA256; removed it" >&2; rm -f "$jar"; exit 1; }
fi

rm -rf "$classes.new"
mkdir -p "$classes.new"
javac --release 17 -nowarn -cp "$jar" -d "$classes.new" "${sources[@]}"
rm -rf "$classes"
mv "$classes.new" "$classes"
echo "$want" > "$stamp"
echo "lucene: $(javac -version 2>&1), host compiled into $classes"
echo "lucene: installed in $(elapsed)s"
