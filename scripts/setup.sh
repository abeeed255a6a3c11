#!/usr/bin/env bash
# `npm run setup`: the one setup step of a fresh Debian 12 or 13 machine, run as root before
# `npm ci`. Installs the apt packages vecbench and its tests use, then runs every
# participants/*/provision.sh side by side (their logs are printed; any failure stops it).
# Idempotent: on a set-up machine it installs nothing and takes a few seconds.
# Needs no node_modules (npm ci comes after it and builds the native addons against OpenBLAS and
# libfaiss).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)

if [ "$(id -u)" != 0 ]; then
  echo "vecbench setup needs root (it installs apt packages and the servers of the server participants): run \`sudo npm run setup\`" >&2
  exit 1
fi

# Why each package:
#   build-essential    npm ci compiles native addons (node-gyp: g++, make); Redis 8's source build
#                      needs g++ too (deps/fast_float is C++). python3 is node-gyp's.
#   libopenblas-dev    the native exact ground truth links to it (without it, a slower fallback).
#   libfaiss-dev       faiss 1.7.3 (headers and libfaiss.a), linked into the faiss participant's
#                      addon (participants/faiss/native); without it that participant is unavailable.
#   python3-numpy      bench/groundtruth compares against it; test/engines/resources.test.ts runs python3.
#   chromium, fonts-dejavu-core
#                      test/e2e/browser.test.ts drives chromium headless (a font, or text is boxes).
#   dataset-fashion-mnist
#                      the fashion-mnist-784-euclidean source (test/e2e/sources.test.ts checks it).
#   vmtouch            evicts engines' data files from the page cache: without it a run prints
#                      "cold start not measured: vmtouch is not installed" and --cold refuses.
#   wrk                the reference HTTP client of npm run bench:fidelity.
#   util-linux         setpriv, which ties every engine server's life to its run's.
#   slurmctld, slurmd, slurm-client, munge
#                      test/e2e/groundtruth-slurm.test.ts starts a one-node Slurm cluster and runs the
#                      sharded ground truth as an array job (docs/cluster.md).
#   iproute2           ip netns: test/e2e/loadgen-client-hosts.test.ts puts its client hosts in
#                      network namespaces of its own.
#   python3-hnswlib    npm run bench:overhead's plain Python loop over the same HNSW library.
#   nftables           nft: a server that checks no credential (Chroma) has its 127.0.0.1 port
#                      closed to other local users while it runs (src/runner/port-guard.ts).
packages=(build-essential python3 libopenblas-dev libfaiss-dev python3-numpy chromium fonts-dejavu-core
  dataset-fashion-mnist vmtouch wrk util-linux slurmctld slurmd slurm-client munge iproute2 nftables python3-hnswlib)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
export DEBIAN_FRONTEND=noninteractive
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: apt-get install ${missing[*]}"
  apt-get update -qq
  apt-get install -y -qq -o DPkg::Lock::Timeout=600 --no-install-recommends "${missing[@]}" >/dev/null
  echo "setup: apt packages installed in $(( $(date +%s) - start ))s"
else
  echo "setup: apt packages already installed"
fi

# Server participants: each provision.sh installs its server (apt packages; source builds cached
# in ${VECBENCH_CACHE:-/var/cache/vecbench}). Side by side: Redis compiles for ~140 s.
logs=$(mktemp -d -t vecbench-setup-XXXXXX)
trap 'rm -rf "$logs"' EXIT
pids=()
names=()
for script in participants/*/provision.sh bench/native/provision.sh; do
  # A participant's name, or bench-native for the bench's loops (a name without a slash: it
  # names a log file and prefixes its lines).
  name=${script%/provision.sh}
  name=${name#participants/}
  name=${name//\//-}
  "$script" >"$logs/$name.log" 2>&1 &
  pids+=("$!")
  names+=("$name")
done
failed=()
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || failed+=("${names[$i]}")
  sed "s/^/  [${names[$i]}] /" "$logs/${names[$i]}.log"
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "setup: provisioning ${failed[*]} FAILED (log above); fix it and run \`sudo npm run setup\` again" >&2
  exit 1
fi
# npm test reads this stamp to know the machine is set up with these scripts (scripts/setup-stamp.mjs).
node scripts/setup-stamp.mjs write
echo "setup: done in $(( $(date +%s) - start ))s; next: npm ci && npm test (or npx vecbench run)"
