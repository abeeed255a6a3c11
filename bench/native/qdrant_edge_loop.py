#!/usr/bin/env python3
# A plain Python loop over qdrant-edge-py (Qdrant Edge's own Python package, the engine's native
# interface), the reference for vecbench's qdrant-edge participant (bench/harness-overhead.ts):
# it loads a copy of the very shard the participant built (the same segments, graph and
# payload indexes, its saved config), and queries it one request at a time on one thread with
# the participant's request shape (Query.Nearest, limit k, no filter, hnsw_ef, no payload),
# timed with time.perf_counter. Run it with the participant's provisioned interpreter, so both
# sides use the same qdrant-edge-py.
#
#   qdrant_edge_loop.py SHARD_DIR DIR NQ D K
#
# DIR holds queries.f32 (NQ x D) and gt.i32 (NQ x K, the exact ids), raw little-endian. Each
# stdin line "EF PASSES" runs PASSES timed passes over the queries and prints one JSON line
# (per-pass QPS by wall time and by this thread's CPU time, mean latency, recall@K), as
# hnswlib_loop.py does.
import importlib.metadata
import json
import sys
import time

import numpy as np
import qdrant_edge as q

from loop_common import serve


def main() -> None:
    shard_dir, d_dir = sys.argv[1], sys.argv[2]
    nq, d, k = (int(x) for x in sys.argv[3:6])
    queries = np.fromfile(f"{d_dir}/queries.f32", dtype=np.float32).reshape(nq, d)
    gt = np.fromfile(f"{d_dir}/gt.i32", dtype=np.int32).reshape(nq, k)
    t0 = time.perf_counter()
    shard = q.EdgeShard.load(shard_dir)
    print(json.dumps({"ready": True, "build_s": time.perf_counter() - t0, "version": importlib.metadata.version("qdrant-edge-py")}), flush=True)

    params = {}

    def set_knob(ef: int) -> None:
        params["ef"] = q.SearchParams(hnsw_ef=ef, exact=False)

    def search(i: int) -> list[int]:
        request = q.QueryRequest(query=q.Query.Nearest(queries[i]), limit=k, filter=None, params=params["ef"], with_payload=False)
        return [h.id for h in shard.query(request)]

    serve(nq, k, gt, set_knob, search)
    shard.close()


if __name__ == "__main__":
    main()
