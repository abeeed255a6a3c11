#!/usr/bin/env python3
# A plain Python loop over SQLite with the sqlite-vec extension, the reference for vecbench's
# sqlite-vec participant (bench/harness-overhead.ts). The extension is the same binary the
# participant loads (the vec0.so of npm's sqlite-vec-linux-x64, passed as VEC0_SO), loaded with
# enable_load_extension; the SQLite library is not the same: this is Python's sqlite3 over
# Debian's libsqlite3, while better-sqlite3 bundles its own SQLite (the ready line and
# bench/overhead/sqlite-vec.ts name both versions). It opens a copy of the database file the
# participant wrote, sets the page cache the adapter sets, and runs the adapter's unfiltered
# k-NN statement (vec0's exact scan; there is no knob, so EF is only echoed), one query at a
# time on one thread, timed with time.perf_counter. Standard library only.
#
#   sqlite_vec_loop.py VEC0_SO DB_FILE CACHE_MIB DIR NQ D K
#
# DIR holds queries.f32 (NQ x D) and gt.i32 (NQ x K, the exact ids), raw little-endian. Each
# stdin line "EF PASSES" runs PASSES timed passes over the queries and prints one JSON line
# (per-pass QPS by wall time and by this thread's CPU time, mean latency, recall@K).
import array
import json
import sqlite3
import sys
import time

# The adapter's statement for a query without a filter (its table "vectors", column "embedding").
KNN_SQL = "SELECT rowid FROM vectors WHERE embedding MATCH ? AND k = ? ORDER BY distance"

from loop_common import serve


def main() -> None:
    vec0_so, db_file, cache_mib, d_dir = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    nq, d, k = (int(x) for x in sys.argv[5:8])
    with open(f"{d_dir}/queries.f32", "rb") as f:
        raw = f.read()
    if len(raw) != nq * d * 4:
        sys.exit(f"sqlite_vec_loop: queries.f32 has {len(raw)} bytes, not {nq} x {d} float32")
    # Each query as the float32 blob vec0 reads, as the adapter binds it.
    queries = [raw[i * d * 4 : (i + 1) * d * 4] for i in range(nq)]
    gt = array.array("i")
    with open(f"{d_dir}/gt.i32", "rb") as f:
        gt.frombytes(f.read())
    if sys.byteorder != "little":
        gt.byteswap()
    truth = [set(gt[i * k : (i + 1) * k]) for i in range(nq)]

    t0 = time.perf_counter()
    db = sqlite3.connect(db_file)
    db.enable_load_extension(True)
    db.load_extension(vec0_so)
    db.enable_load_extension(False)
    db.execute(f"PRAGMA cache_size = -{cache_mib * 1024}")
    sqlite_version, vec_version = db.execute("SELECT sqlite_version(), vec_version()").fetchone()
    version = f"sqlite-vec {vec_version} ({vec0_so}), SQLite {sqlite_version} (Python sqlite3)"
    print(json.dumps({"ready": True, "build_s": time.perf_counter() - t0, "version": version}), flush=True)

    execute = db.execute
    # sqlite3 keeps the prepared statement in its cache: each call binds and steps it.
    serve(nq, k, truth, lambda _knob: None, lambda i: [row[0] for row in execute(KNN_SQL, (queries[i], k))])
    db.close()


if __name__ == "__main__":
    main()
