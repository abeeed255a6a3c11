#!/usr/bin/env bash
# Provisions the `lucene` participant: lucene-core 9.12.3 from Maven Central (one jar, no
# dependencies), checked against its pinned sha256, and the host (src/sdk/java/VecbenchHost.java
# + participants/lucene/LuceneHost.java) compiled with javac --release 17, at
#   ${VECBENCH_CACHE:-/var/cache/vecbench}/java/lucene/{lucene-core-9.12.3.jar,classes/}
# by the SDK's provision_java_host (src/sdk/java/provision-host.sh): idempotent, a second run only
# checks the jar's hash and the stamp. Needs a JDK 17+ (javac): installed with apt-get when run
# as root (openjdk-17-jdk-headless).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../../src/sdk/java/provision-host.sh
. "$root/src/sdk/java/provision-host.sh"

VERSION=9.12.3
provision_java_host lucene LuceneHost \
  "lucene-core-$VERSION.jar b64a3f8098a7572034fb30085cdee01b34ec81fb0e5a31b471536af58dc6c01b https://repo1.maven.org/maven2/org/apache/lucene/lucene-core/$VERSION/lucene-core-$VERSION.jar"
