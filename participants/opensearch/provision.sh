#!/usr/bin/env bash
# Provisions the `opensearch` participant: OpenSearch 2.19.1 and the k-NN plugin 2.19.1.0 as the
# Maven Central artifacts listed in artifacts.sha256 (each checked against its pinned sha256), the
# plugin's zip unpacked, and the node launcher (OpenSearchNode.java) compiled with
# javac --release 17, at
#   ${VECBENCH_CACHE:-/var/cache/vecbench}/opensearch/{lib/,knn/,classes/,home/}
# with a stamp holding the sha256 of the artifact list and of the launcher's source. Idempotent:
# when the stamp matches, a second run only checks every jar's hash and installs nothing.
# Needs a JDK 17+ (javac): installed with apt-get when run as root (openjdk-17-jdk-headless).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../../src/sdk/java/jdk.sh
. "$here/../../src/sdk/java/jdk.sh"
start=$(date +%s%N)
elapsed() { awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }'; }

REPO=https://repo1.maven.org/maven2
dest=${VECBENCH_CACHE:-/var/cache/vecbench}/opensearch
lib=$dest/lib
stamp=$dest/.vecbench-stamp
list=$here/artifacts.sha256
source_file=$here/OpenSearchNode.java
# The pinned artifacts, as "sha256 path" (comments dropped).
artifacts=$(grep -v '^#' "$list" | awk 'NF == 2')

# Every artifact in lib/ under its file name, checked against the list.
check_all() { (cd "$lib" && awk '{ n = split($2, p, "/"); print $1 "  " p[n] }' <<<"$artifacts" | sha256sum -c --quiet - >/dev/null 2>&1); }
want_stamp() {
  echo "artifacts $(sha256sum "$list" | cut -d' ' -f1)"
  echo "OpenSearchNode.java $(sha256sum "$source_file" | cut -d' ' -f1)"
}

want=$(want_stamp)
if [ -f "$dest/classes/OpenSearchNode.class" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  if check_all; then
    echo "opensearch: OpenSearch 2.19.1 + k-NN 2.19.1.0 ($(wc -l <<<"$artifacts") artifacts, sha256 ok) and the launcher are ready in $dest; nothing installed; checked in $(elapsed)s"
    exit 0
  fi
  echo "opensearch: an artifact in $lib no longer matches its pinned sha256; installing again"
fi

need_javac opensearch

mkdir -p "$lib"
rm -f "$stamp"
fetched=0
while read -r sha path; do
  file=$lib/${path##*/}
  if [ -f "$file" ] && echo "$sha  $file" | sha256sum -c --quiet - >/dev/null 2>&1; then continue; fi
  rm -f "$file"
  if ! curl -fsS --retry 2 --connect-timeout 20 -o "$file.part" "$REPO/$path"; then
    rm -f "$file.part"
    command -v mvn >/dev/null 2>&1 || { echo "opensearch: cannot download $REPO/$path and mvn is not installed" >&2; exit 1; }
    # <group dirs>/<artifact>/<version>/<artifact>-<version>.<ext> back to a Maven coordinate.
    version_dir=${path%/*}
    version=${version_dir##*/}
    artifact_dir=${version_dir%/*}
    artifact=${artifact_dir##*/}
    group=${artifact_dir%/*}
    echo "opensearch: curl failed for $path; trying mvn dependency:copy"
    mvn -q -B -Dstyle.color=never dependency:copy -Dartifact="${group//\//.}:$artifact:$version:${path##*.}" -DoutputDirectory="$lib" -Dmdep.overWriteReleases=true
    [ -f "$file" ] || { echo "opensearch: mvn did not produce $file" >&2; exit 1; }
  else
    mv "$file.part" "$file"
  fi
  echo "$sha  $file" | sha256sum -c --quiet - >/dev/null 2>&1 || { rm -f "$file"; echo "opensearch: $REPO/$path does not match the pinned sha256 $sha; removed it" >&2; exit 1; }
  fetched=$((fetched + 1))
done <<<"$artifacts"
echo "opensearch: $fetched artifacts downloaded from $REPO, $(wc -l <<<"$artifacts") checked (sha256 ok)"

# The plugin's jars, from its zip (the zip holds no native library: only the Lucene engine runs).
rm -rf "$dest/knn.new"
mkdir -p "$dest/knn.new"
# With the JDK's jar tool: unzip is not among the packages setup installs.
(cd "$dest/knn.new" && jar xf "$lib/opensearch-knn-2.19.1.0.zip" && find . -maxdepth 1 -type f ! -name '*.jar' -delete)
rm -rf "$dest/knn"
mv "$dest/knn.new" "$dest/knn"

# The node's home: it reads config/ (empty: every setting comes from the launcher) and looks for
# modules/ and plugins/ (empty: the modules and the plugin are on the classpath).
mkdir -p "$dest/home/config" "$dest/home/modules" "$dest/home/plugins"

rm -rf "$dest/classes.new"
mkdir -p "$dest/classes.new"
javac --release 17 -nowarn -cp "$lib/*:$dest/knn/*" -d "$dest/classes.new" "$source_file"
rm -rf "$dest/classes"
mv "$dest/classes.new" "$dest/classes"
echo "$want" >"$stamp"
echo "opensearch: $(javac -version 2>&1), launcher compiled into $dest/classes"
echo "opensearch: installed in $(elapsed)s"
