#!/usr/bin/env python3
# A plain Python loop over zvec's Python package (its primary interface), the reference for
# vecbench's zvec participant (bench/harness-overhead.ts). The package is zvec 0.7.0, the version
# of the participant's Node binding (@zvec/zvec 0.7.0), and both read the same on-disk format:
# the loop opens a copy of the very collection the participant built and optimized (the same
# segments, HNSW graph and inverted indexes), with the defaults the adapter's open takes
# (mmap on, read-write). It asks the adapter's query, one at a time on one thread: the vector
# field, topk K, HNSW ef, no filter, no scalar fields and no vectors back; timed with
# time.perf_counter.
#
#   zvec_loop.py COLLECTION_DIR DIR NQ D K
#
# DIR holds queries.f32 (NQ x D) and gt.i32 (NQ x K, the exact ids), raw little-endian. Each
# stdin line "EF PASSES" runs PASSES timed passes over the queries and prints one JSON line
# (per-pass QPS by wall time and by this thread's CPU time, mean latency, recall@K).
import importlib.metadata
import json
import sys
import time

import numpy as np
import zvec

# The adapter's names: its vector field.
VECTOR_FIELD = "v"

from loop_common import serve


def main() -> None:
    collection_dir, d_dir = sys.argv[1], sys.argv[2]
    nq, d, k = (int(x) for x in sys.argv[3:6])
    queries = np.fromfile(f"{d_dir}/queries.f32", dtype=np.float32).reshape(nq, d)
    gt = np.fromfile(f"{d_dir}/gt.i32", dtype=np.int32).reshape(nq, k)
    # As the adapter's ZVecInitialize: warnings and errors only, on stderr.
    zvec.init(log_level=zvec.LogLevel.WARN)
    t0 = time.perf_counter()
    collection = zvec.open(collection_dir)
    dim = collection.schema.vector(VECTOR_FIELD).dimension
    if dim != d:
        sys.exit(f"zvec_loop: the collection in {collection_dir} holds d={dim} vectors, the queries are d={d}")
    print(json.dumps({"ready": True, "build_s": time.perf_counter() - t0, "version": importlib.metadata.version("zvec")}), flush=True)

    params = {}

    def set_knob(ef: int) -> None:
        params["ef"] = zvec.HnswQueryParam(ef=ef)

    def search(i: int) -> list[int]:
        docs = collection.query(zvec.Query(field_name=VECTOR_FIELD, vector=queries[i], param=params["ef"]), topk=k, output_fields=[])
        # Ids are strings in zvec; the adapter wrote the row id in decimal.
        return [int(doc.id) for doc in docs]

    serve(nq, k, gt, set_knob, search)


if __name__ == "__main__":
    main()
