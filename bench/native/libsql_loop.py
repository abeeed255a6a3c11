#!/usr/bin/env python3
# A plain Python loop over libSQL's Python package (libsql on PyPI, over the same Rust libsql
# crate and SQLite 3.45.1 core as the npm package), the reference for vecbench's libsql
# participant (bench/harness-overhead.ts). It opens a copy of the database file the participant
# built (its table, DiskANN index and stored parameters) and runs the participant's unfiltered
# query, SELECT id FROM vector_top_k('items_vec', vector32(?), ?) with the vector as text, one
# query at a time on one thread, timed with time.perf_counter. libSQL reads the beam width
# search_l from the index's stored parameters on every query, so each knob value is written
# there first, as the participant's setKnobs does (participants/libsql/README.md).
#
#   libsql_loop.py DB_FILE DIR NQ D K
#
# DIR holds queries.f32 (NQ x D) and gt.i32 (NQ x K, the exact ids), raw little-endian. Each
# stdin line "SEARCH_L PASSES" runs PASSES timed passes over the queries and prints one JSON line
# (per-pass QPS by wall time and by this thread's CPU time, mean latency, recall@K).
import importlib.metadata
import json
import struct
import sys
import time
from array import array

import libsql

INDEX = "items_vec"
META_TABLE = "libsql_vector_meta_shadow"
# The index parameter blob: 9-byte records of a tag byte and a little-endian u64; 9 is search_l.
SEARCH_L_TAG = 9
RECORD = 9
QUERY = f"SELECT id FROM vector_top_k('{INDEX}', vector32(?), ?)"

from loop_common import serve


def read_f32(path: str, rows: int, cols: int) -> list[list[float]]:
    a = array("f")
    with open(path, "rb") as f:
        a.fromfile(f, rows * cols)
    return [a[i * cols : (i + 1) * cols].tolist() for i in range(rows)]


def read_i32(path: str, rows: int, cols: int) -> list[set[int]]:
    a = array("i")
    with open(path, "rb") as f:
        a.fromfile(f, rows * cols)
    return [set(a[i * cols : (i + 1) * cols]) for i in range(rows)]


def search_l_offset(meta: bytes) -> int:
    """Offset of the one search_l record in the parameter blob, or -1."""
    if len(meta) % RECORD != 0:
        return -1
    found = [o for o in range(0, len(meta), RECORD) if meta[o] == SEARCH_L_TAG]
    return found[0] if len(found) == 1 else -1


def main() -> None:
    db_file, d_dir = sys.argv[1], sys.argv[2]
    nq, d, k = (int(x) for x in sys.argv[3:6])
    queries = read_f32(f"{d_dir}/queries.f32", nq, d)
    gt = read_i32(f"{d_dir}/gt.i32", nq, k)

    t0 = time.perf_counter()
    conn = libsql.connect(db_file)
    row = conn.execute(f"SELECT metadata FROM {META_TABLE} WHERE name = ?", (INDEX,)).fetchone()
    if row is None:
        sys.exit(f"libsql_loop: {db_file} has no index {INDEX}; pass the database the libsql participant built")
    meta = bytearray(row[0])
    at = search_l_offset(meta)
    if at < 0:
        sys.exit(f"libsql_loop: the parameters of {INDEX} are not 9-byte records with one search_l; this libsql {importlib.metadata.version('libsql')} stores them otherwise")
    sqlite_version = conn.execute("SELECT sqlite_version()").fetchone()[0]
    version = f"libsql {importlib.metadata.version('libsql')} (SQLite {sqlite_version})"
    print(json.dumps({"ready": True, "build_s": time.perf_counter() - t0, "version": version}), flush=True)

    cur = conn.cursor()

    def set_knob(search_l: int) -> None:
        # Between measurements, never inside a timed pass, as the participant does.
        struct.pack_into("<Q", meta, at + 1, search_l)
        conn.execute(f"UPDATE {META_TABLE} SET metadata = ? WHERE name = ?", (bytes(meta), INDEX))
        conn.commit()

    def search(i: int) -> list[int]:
        # The participant's text form of the vector, '[x,y,...]', made per query as it does.
        text = "[" + ",".join(map(repr, queries[i])) + "]"
        return [r[0] for r in cur.execute(QUERY, (text, k)).fetchall()]

    serve(nq, k, gt, set_knob, search)
    conn.close()


if __name__ == "__main__":
    main()
