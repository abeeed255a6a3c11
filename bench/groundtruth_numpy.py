"""Reference exact top-k with numpy: blocked sgemm (q @ block.T) over row blocks, argpartition
top-k per block, merged into a running top-k. Called by bench/groundtruth.ts.

usage: groundtruth_numpy.py DIR N D NQ K
Reads DIR/base.f32 and DIR/queries.f32 (raw little-endian float32, row-major), metric ip.
Writes DIR/numpy_ids.i32 (NQ x K int32, best first) and prints {"seconds": ...} as JSON; the
time excludes loading the files.
"""
import json
import os
import sys
import time

import numpy as np

BLOCK = int(os.environ.get("VECBENCH_NUMPY_BLOCK", "8192"))


def topk_ip(base: np.ndarray, q: np.ndarray, k: int) -> np.ndarray:
    nq = q.shape[0]
    best_s = np.empty((nq, 0), dtype=np.float32)
    best_i = np.empty((nq, 0), dtype=np.int64)
    for start in range(0, base.shape[0], BLOCK):
        s = q @ base[start:start + BLOCK].T  # nq x block scores, higher is closer
        kk = min(k, s.shape[1])
        idx = np.argpartition(s, s.shape[1] - kk, axis=1)[:, -kk:]
        cand_s = np.concatenate([best_s, np.take_along_axis(s, idx, axis=1)], axis=1)
        cand_i = np.concatenate([best_i, idx + start], axis=1)
        if cand_s.shape[1] > k:
            keep = np.argpartition(cand_s, cand_s.shape[1] - k, axis=1)[:, -k:]
            cand_s = np.take_along_axis(cand_s, keep, axis=1)
            cand_i = np.take_along_axis(cand_i, keep, axis=1)
        best_s, best_i = cand_s, cand_i
    order = np.argsort(-best_s, axis=1, kind="stable")
    return np.take_along_axis(best_i, order, axis=1)


def main() -> None:
    folder, n, d, nq, k = sys.argv[1], *map(int, sys.argv[2:6])
    base = np.fromfile(os.path.join(folder, "base.f32"), dtype="<f4").reshape(n, d)
    q = np.fromfile(os.path.join(folder, "queries.f32"), dtype="<f4").reshape(nq, d)
    t0 = time.perf_counter()
    ids = topk_ip(base, q, k)
    seconds = time.perf_counter() - t0
    out = np.full((nq, k), -1, dtype=np.int32)
    out[:, : ids.shape[1]] = ids
    out.astype("<i4").tofile(os.path.join(folder, "numpy_ids.i32"))
    print(json.dumps({"seconds": seconds, "numpy": np.__version__}))


if __name__ == "__main__":
    main()
