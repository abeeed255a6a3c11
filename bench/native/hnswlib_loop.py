#!/usr/bin/env python3
# A plain Python loop over Debian's python3-hnswlib, the reference for vecbench's hnswlib
# participant (bench/harness-overhead.ts): the same index (vectors, M, ef_construction, seed,
# space), one thread, knn_query one query at a time timed with time.perf_counter.
#
#   hnswlib_loop.py DIR N D NQ K M EF_CONSTRUCTION SEED SPACE
#
# DIR holds base.f32 (N x D), queries.f32 (NQ x D) and gt.i32 (NQ x K, the exact ids), raw
# little-endian. The index is built once; then each stdin line "EF PASSES" runs PASSES timed
# passes over the queries and prints one JSON line (per-pass QPS by wall time and by this
# thread's CPU time, mean latency, recall@K).
import json
import sys
import time

import hnswlib
import numpy as np

from loop_common import serve


def main() -> None:
    d_dir = sys.argv[1]
    n, d, nq, k, m, efc, seed = (int(x) for x in sys.argv[2:9])
    space = sys.argv[9]
    base = np.fromfile(f"{d_dir}/base.f32", dtype=np.float32).reshape(n, d)
    queries = np.fromfile(f"{d_dir}/queries.f32", dtype=np.float32).reshape(nq, d)
    gt = np.fromfile(f"{d_dir}/gt.i32", dtype=np.int32).reshape(nq, k)

    index = hnswlib.Index(space=space, dim=d)
    index.init_index(max_elements=n, M=m, ef_construction=efc, random_seed=seed)
    index.set_num_threads(1)
    t0 = time.perf_counter()
    # One thread adds in label order, as the participant's addPoint loop does.
    index.add_items(base, np.arange(n), num_threads=1)
    print(json.dumps({"ready": True, "build_s": time.perf_counter() - t0, "version": getattr(hnswlib, "__version__", "unknown")}), flush=True)

    def search(i: int) -> np.ndarray:
        labels, _ = index.knn_query(queries[i], k=k, num_threads=1)
        return labels[0]

    serve(nq, k, gt, index.set_ef, search)


if __name__ == "__main__":
    main()
