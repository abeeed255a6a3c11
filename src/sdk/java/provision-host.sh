# Sourced by the provision scripts of participants in Java (participants/_template-java shows
# how): `provision_java_host NAME MAIN [JAR...]`, each JAR one "FILE SHA256 URL", downloads the
# jars into ${VECBENCH_CACHE:-/var/cache/vecbench}/java/NAME, checks each against its pinned
# sha256, and compiles the reference host (src/sdk/java/VecbenchHost.java) with NAME's MAIN.java
# (javac --release 17) into classes/ there. A stamp holds the sha256 of every jar and source, so
# a second run only checks and installs nothing. Where curl cannot reach a Maven Central URL and
# mvn is installed, mvn dependency:copy fetches the same artifact (the hash still decides).
sdk_java_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=jdk.sh
. "$sdk_java_dir/jdk.sh"

provision_java_host() {
  local name=$1 main=$2
  shift 2
  local jars=("$@")
  local start dest classes stamp want file sha url
  start=$(date +%s%N)
  dest=${VECBENCH_CACHE:-/var/cache/vecbench}/java/$name
  classes=$dest/classes
  stamp=$dest/.vecbench-stamp
  local sources=("$sdk_java_dir/VecbenchHost.java" "$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)/$main.java")
  elapsed() { awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }'; }
  jar_ok() { [ -f "$dest/$1" ] && [ "$(sha256sum "$dest/$1" | cut -d' ' -f1)" = "$2" ]; }

  want=$(
    for j in "${jars[@]}"; do
      read -r file sha url <<<"$j"
      echo "$file $sha"
    done
    for s in "${sources[@]}"; do echo "$(basename "$s") $(sha256sum "$s" | cut -d' ' -f1)"; done
  )
  local ready=1
  for j in "${jars[@]}"; do
    read -r file sha url <<<"$j"
    jar_ok "$file" "$sha" || ready=0
  done
  if [ "$ready" = 1 ] && [ -f "$classes/$main.class" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
    echo "$name: the compiled host and its ${#jars[@]} pinned jars (sha256 ok) are ready in $dest; checked in $(elapsed)s"
    return 0
  fi

  need_javac "$name"
  mkdir -p "$dest"
  rm -f "$stamp"
  local cp=()
  for j in "${jars[@]}"; do
    read -r file sha url <<<"$j"
    cp+=("$dest/$file")
    jar_ok "$file" "$sha" && continue
    rm -f "$dest/$file"
    if curl -fsS --retry 2 --connect-timeout 20 -o "$dest/$file.part" "$url"; then
      mv "$dest/$file.part" "$dest/$file"
      echo "$name: downloaded $url"
    else
      rm -f "$dest/$file.part"
      maven_copy "$name" "$url" "$dest" || { echo "$name: cannot download $url; check the network or the URL" >&2; exit 1; }
    fi
    jar_ok "$file" "$sha" || { rm -f "$dest/$file"; echo "$name: $url does not match the pinned sha256 $sha; removed it" >&2; exit 1; }
  done

  rm -rf "$classes.new"
  mkdir -p "$classes.new"
  javac --release 17 -nowarn -cp "$(IFS=:; echo "${cp[*]}")" -d "$classes.new" "${sources[@]}"
  rm -rf "$classes"
  mv "$classes.new" "$classes"
  echo "$want" >"$stamp"
  echo "$name: $(javac -version 2>&1), host compiled into $classes; installed in $(elapsed)s"
}

# maven_copy NAME URL DEST: a Maven Central URL's artifact (.../maven2/GROUP/PATH/ARTIFACT/VERSION/FILE)
# fetched by mvn into DEST, when mvn is installed.
maven_copy() {
  local path=${2#*/maven2/}
  [ "$path" != "$2" ] && command -v mvn >/dev/null 2>&1 || return 1
  local version artifact group
  version=$(basename "$(dirname "$path")")
  artifact=$(basename "$(dirname "$(dirname "$path")")")
  group=$(dirname "$(dirname "$(dirname "$path")")" | tr / .)
  echo "$1: curl failed; trying mvn dependency:copy of $group:$artifact:$version"
  mvn -q -B -Dstyle.color=never dependency:copy -Dartifact="$group:$artifact:$version:jar" -DoutputDirectory="$3" -Dmdep.overWriteReleases=true
}
