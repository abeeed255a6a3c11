#!/usr/bin/env bash
# Provisions the `chroma` participant: the chromadb npm package (its `chroma run` CLI starts a
# real Chroma server from the Rust code in chromadb-js-bindings-linux-x64-gnu). Both come from
# the project's package-lock.json: chromadb 3.5.0, with an npm `overrides` entry pinning the
# bindings to 1.0.5 (1.0.6 and later need glibc 2.38; Debian 12 has 2.36). Nothing to install as
# root: `npm ci` installs them. Idempotent: with the packages in node_modules it checks them and
# that the server's native code loads; before `npm ci` (npm run setup on a fresh clone) it says
# so and succeeds, since npm ci as root would leave a root-owned node_modules in a user's clone.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
start=$(date +%s)

check() {
  node -e '
    const fs = require("fs");
    const ver = (p) => JSON.parse(fs.readFileSync(`node_modules/${p}/package.json`, "utf8")).version;
    const c = ver("chromadb"), b = ver("chromadb-js-bindings-linux-x64-gnu");
    if (c !== "3.5.0" || b !== "1.0.5") { console.error(`chroma: node_modules has chromadb ${c} with bindings ${b}, not 3.5.0 / 1.0.5: run npm ci`); process.exit(1); }
    require(process.cwd() + "/node_modules/chromadb-js-bindings-linux-x64-gnu");
    console.log(`chroma: chromadb ${c} with chromadb-js-bindings-linux-x64-gnu ${b} ready`);
  '
}

if [ ! -d node_modules/chromadb ]; then
  echo "chroma: node_modules/chromadb not installed yet; npm ci installs it (nothing to do as root)"
  exit 0
fi
check
echo "chroma: ready in $(( $(date +%s) - start ))s"
