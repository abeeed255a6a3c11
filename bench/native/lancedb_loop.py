#!/usr/bin/env python3
# A plain Python loop over LanceDB's Python package (lancedb 0.34.0: the release of the npm
# @lancedb/lancedb 0.31.0, the same Rust code and lance 8.0.0), the reference for vecbench's
# lancedb participant (bench/harness-overhead.ts). It opens a copy of the very dataset directory
# the participant wrote (its table, IVF index and scalar indexes) and asks the participant's
# unfiltered query through the async API, the one that mirrors the Node binding's calls:
# nearest_to(vector), the index's distance type, limit K, nprobes, no refine, selecting id and
# _distance (the participant names _distance too, which LanceDB computes either way). One
# query at a time, awaited on one event loop, timed with time.perf_counter.
#
#   lancedb_loop.py DB_DIR DIR NQ D K
#
# DIR holds queries.f32 (NQ x D) and gt.i32 (NQ x K, the exact ids), raw little-endian. Each
# stdin line "NPROBES PASSES" runs PASSES timed passes over the queries and prints one JSON line
# (per-pass QPS by wall time and by CPU time, mean latency, recall@K). LanceDB runs a query on
# its runtime's threads while the caller's thread waits, so the CPU time here is the whole
# process's (time.process_time), not this thread's.
import asyncio
import importlib.metadata
import json
import os
import sys
import time

# index_stats (read once, for the index's distance type) otherwise warns that its figures will
# leave out the centroids in a later release.
os.environ.setdefault("LANCE_INCLUDE_VECTOR_CENTROIDS", "false")
import lancedb  # noqa: E402
import numpy as np

TABLE = "vectors"
VECTOR_COLUMN = "vector"


async def open_table(db_dir: str):
    db = await lancedb.connect_async(db_dir)
    table = await db.open_table(TABLE)
    indexes = [i for i in await table.list_indices() if VECTOR_COLUMN in i.columns]
    if not indexes:
        sys.exit(f"lancedb_loop: table {TABLE} in {db_dir} has no vector index; pass the directory the lancedb participant built")
    stats = await table.index_stats(indexes[0].name)
    return table, indexes[0].index_type, stats.distance_type


async def one_pass(table, queries: np.ndarray, k: int, nprobes: int, distance: str, lat: np.ndarray) -> list[list[int]]:
    perf = time.perf_counter
    found = []
    for i in range(len(queries)):
        t = perf()
        q = table.query().nearest_to(queries[i]).distance_type(distance).limit(k).nprobes(nprobes).select(["id", "_distance"])
        result = await q.to_arrow()
        found.append(result.column("id").to_pylist()[:k])
        lat[i] = perf() - t
    return found


def main() -> None:
    db_dir, d_dir = sys.argv[1], sys.argv[2]
    nq, d, k = (int(x) for x in sys.argv[3:6])
    queries = np.fromfile(f"{d_dir}/queries.f32", dtype=np.float32).reshape(nq, d)
    gt = np.fromfile(f"{d_dir}/gt.i32", dtype=np.int32).reshape(nq, k)
    loop = asyncio.new_event_loop()
    t0 = time.perf_counter()
    table, index_type, distance = loop.run_until_complete(open_table(db_dir))
    version = f"lancedb {importlib.metadata.version('lancedb')} ({index_type}, {distance})"
    print(json.dumps({"ready": True, "build_s": time.perf_counter() - t0, "version": version}), flush=True)

    lat = np.empty(nq, dtype=np.float64)
    found: list[list[int]] = []
    for line in sys.stdin:
        parts = line.split()
        if not parts:
            continue
        nprobes, passes = int(parts[0]), int(parts[1])
        qps, cpu_qps, mean_ms = [], [], []
        for _ in range(passes):
            cpu0 = time.process_time()
            start = time.perf_counter()
            found = loop.run_until_complete(one_pass(table, queries, k, nprobes, distance, lat))
            wall = time.perf_counter() - start
            cpu_qps.append(nq / max(time.process_time() - cpu0, 1e-9))
            qps.append(nq / wall)
            mean_ms.append(float(lat.mean()) * 1000)
        hits = sum(len(set(found[i]) & set(gt[i].tolist())) for i in range(nq))
        print(json.dumps({"ef": nprobes, "qps": qps, "cpu_qps": cpu_qps, "mean_ms": mean_ms, "recall": hits / (nq * k)}), flush=True)
    table.close()
    loop.close()


if __name__ == "__main__":
    main()
