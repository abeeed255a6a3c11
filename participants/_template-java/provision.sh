#!/usr/bin/env bash
# Provisions the Java template participant: the host (src/sdk/java/VecbenchHost.java +
# participants/_template-java/TemplateHost.java) compiled with javac --release 17 into
#   ${VECBENCH_CACHE:-/var/cache/vecbench}/java/_template-java/classes
# by the SDK's provision_java_host (src/sdk/java/provision-host.sh: pinned jars checked by sha256,
# a stamp, so a second run installs nothing). The toy needs no jars; a participant made from this
# template lists its engine's jars, each pinned with its sha256 (as participants/lucene/provision.sh
# does). Needs a JDK 17+ (javac): installed with apt-get when run as root (openjdk-17-jdk-headless).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../../src/sdk/java/provision-host.sh
. "$root/src/sdk/java/provision-host.sh"

# REPLACE: the directory name (also in adapter.ts), the host's class (adapter.ts's MAIN), and
# the engine's jars, one "FILE SHA256 URL" each (the sha256 the repository publishes beside the
# jar, or sha256sum of a copy you checked); adapter.ts lists the same FILEs.
provision_java_host _template-java TemplateHost
