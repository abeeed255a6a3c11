"""Qdrant Edge (PyPI qdrant-edge-py): Qdrant's own segment and shard code in-process, driven
over vecbench's participant protocol by the reference host (src/sdk/python/vecbench_host.py).

One shard per work directory: points carry their row id and the attribute columns as an integer
payload with a payload index on each (built before the HNSW graph, so the graph gets Qdrant's
payload-aware links), optimize() builds the graph, reopen is EdgeShard.load. Settings are checked
by the TypeScript adapter (adapter.ts); knobs here.
"""

import importlib.metadata
import os
import sys

sys.path.insert(0, os.environ["VECBENCH_PYTHON_SDK"])
import vecbench_host  # noqa: E402
from vecbench_host import UserError  # noqa: E402

import qdrant_edge as q  # noqa: E402

SHARD = "shard"
VECTOR = ""  # the unnamed vector
UPSERT_BATCH = 1000
DISTANCE = {"ip": q.Distance.Dot, "cosine": q.Distance.Dot, "l2": q.Distance.Euclid}
BINARY_BITS = {1: q.BinaryQuantizationEncoding.OneBit, 1.5: q.BinaryQuantizationEncoding.OneAndHalfBits, 2: q.BinaryQuantizationEncoding.TwoBits}
TURBO_BITS = {1: q.TurboQuantBitSize.Bits1, 1.5: q.TurboQuantBitSize.Bits1_5, 2: q.TurboQuantBitSize.Bits2, 4: q.TurboQuantBitSize.Bits4, 8: q.TurboQuantBitSize.Bits8}


def translate(f):
    """vecbench's filter (eq, range with gte <= v < lt, and) as Qdrant's conditions (a must list)."""
    op = f.get("op")
    if op == "eq":
        return [q.FieldCondition(f["field"], match=q.MatchValue(int(f["value"])))]
    if op == "range":
        return [q.FieldCondition(f["field"], range=q.RangeFloat(gte=float(f["gte"]), lt=float(f["lt"])))]
    if op == "and":
        out = []
        for a in f["args"]:
            out.extend(translate(a))
        return out
    raise UserError("filter op %r is not one vecbench sends" % (op,))


class QdrantEdge(vecbench_host.Engine):
    name = "Qdrant Edge"

    def __init__(self):
        self.shard = None
        self.knob_state = {"hnsw_ef": 64, "exact": 0, "oversampling": 1.0, "rescore": 1}
        self.params = None

    def version(self):
        return "qdrant-edge-py %s" % importlib.metadata.version("qdrant-edge-py")

    def config(self):
        s = self.settings
        quant = None
        # Codes pinned in RAM (the graph walk reads them), originals where `vectors` says.
        if s["quantization"] == "int8":
            quant = q.ScalarQuantizationConfig(type=q.ScalarType.Int8, quantile=0.99, memory=q.Memory.Pinned)
        elif s["quantization"] == "binary":
            # Asymmetric: the stored codes are binary_bits a dimension, the query is encoded in
            # 8 bits against them, which ranks closer to the originals than binary queries do.
            if s["code_bits"] not in BINARY_BITS:
                raise UserError("code_bits %s: binary codes have 1, 1.5 or 2 bits a dimension" % (s["code_bits"],))
            quant = q.BinaryQuantizationConfig(
                encoding=BINARY_BITS[s["code_bits"]],
                query_encoding=q.BinaryQuantizationQueryEncoding.Scalar8Bits,
                memory=q.Memory.Pinned,
            )
        elif s["quantization"] == "turbo":
            quant = q.TurboQuantQuantizationConfig(bits=TURBO_BITS[s["code_bits"]], memory=q.Memory.Pinned)
        vectors = q.EdgeVectorParams(
            size=self.d,
            distance=DISTANCE[self.metric],
            memory=q.Memory.Cold if s["vectors"] == "disk" else q.Memory.Pinned,
            quantization_config=quant,
        )
        return q.EdgeConfig(
            vectors=vectors,
            hnsw_config=q.HnswIndexConfig(
                m=s["m"],
                ef_construct=s["ef_construct"],
                full_scan_threshold=s["full_scan_threshold_kb"],
                max_indexing_threads=s["max_indexing_threads"],
            ),
            # 1 KB: optimize() always builds the graph (the default waits for ~10 MB of vectors).
            optimizers=q.EdgeOptimizersConfig(indexing_threshold=1, default_segment_number=s["segments"]),
            max_search_threads=s["search_threads"] or None,
            payload_memory=q.Memory.Cold if s["payload"] == "disk" else None,
        )

    def open(self, dataset, settings, work_dir, max_concurrency, reopen):
        self.settings = settings
        self.d = int(dataset["d"])
        self.metric = dataset["metric"]
        self.path = os.path.join(work_dir, SHARD)
        self.fields = list(settings["payload_indexes"])
        if reopen:
            if not os.path.isdir(self.path):
                raise UserError("no Qdrant Edge shard in %s to reopen" % self.path)
            self.shard = q.EdgeShard.load(self.path, self.config())
            return
        if os.path.exists(self.path):
            import shutil

            shutil.rmtree(self.path)
        os.makedirs(self.path)
        self.shard = q.EdgeShard.create(self.path, self.config())
        # Payload indexes first: the graph built by optimize() then links within each value.
        for field in self.fields:
            self.shard.update(q.UpdateOperation.create_field_index(field, q.PayloadSchemaType.Integer))

    def upsert(self, rows):
        names = list(rows.attrs)
        cols = [rows.attrs[a].tolist() for a in names]
        ids = rows.ids.tolist()
        for start in range(0, rows.n, UPSERT_BATCH):
            end = min(rows.n, start + UPSERT_BATCH)
            points = [q.Point(ids[i], rows.vectors[i], {a: cols[j][i] for j, a in enumerate(names)}) for i in range(start, end)]
            self.shard.update(q.UpdateOperation.upsert_points(points))

    ingest = upsert
    insert = upsert

    def build(self):
        self.shard.optimize()
        self.shard.flush()

    def compact(self):
        self.shard.optimize()
        self.shard.flush()

    def delete(self, ids):
        self.shard.update(q.UpdateOperation.delete_points([int(i) for i in ids]))

    def knobs(self, knobs):
        state = dict(self.knob_state)
        # Names and values arrive checked against adapter.ts's knobs.
        state.update(knobs)
        self.knob_state = state
        quant = None
        if self.settings["quantization"] != "none":
            quant = q.QuantizationSearchParams(rescore=bool(state["rescore"]), oversampling=float(state["oversampling"]))
        self.params = q.SearchParams(hnsw_ef=int(state["hnsw_ef"]), exact=bool(state["exact"]), quantization=quant)

    def filter_of(self, f):
        return None if f is None else q.Filter(must=translate(f))

    def search(self, vector, k, filter):
        if self.params is None:
            self.knobs({})
        hits = self.shard.query(q.QueryRequest(query=q.Query.Nearest(vector), limit=k, filter=self.filter_of(filter), params=self.params, with_payload=False))
        return [h.id for h in hits]

    def explain(self, vector, k, filter):
        """Qdrant shows no plan: the strategy follows its documented planner rule, fed with the
        shard's own cardinality estimate. Per segment, a filter whose estimated matches take less
        than full_scan_threshold (KB of vectors) is answered by reading the matches through the
        payload index and scoring them exactly; otherwise the HNSW graph is walked with the filter
        checked at each node (the payload-aware links keep it connected)."""
        s = self.settings
        info = self.shard.info()
        total = info.points_count
        lines = []
        if self.knob_state["exact"]:
            label = "exact scan"
        elif filter is None:
            label = "graph walk"
        else:
            est = self.shard.count(q.CountRequest(exact=False, filter=self.filter_of(filter)))
            kb = est * self.d * 4 / 1024
            label = "payload index + exact scan of matches" if kb < s["full_scan_threshold_kb"] else "graph walk with filter"
            lines.append("estimated matches: %d of %d points (%.0f KB of vectors; full_scan_threshold %d KB)" % (est, total, kb, s["full_scan_threshold_kb"]))
        lines.append("segments: %d, indexed vectors: %d" % (info.segments_count, info.indexed_vectors_count))
        lines.append("knobs: " + " ".join("%s=%s" % kv for kv in sorted(self.knob_state.items())))
        return "strategy: %s\n%s" % (label, "\n".join(lines))

    def disk_bytes(self):
        # Allocated blocks, not apparent sizes: the write-ahead log preallocates 32 MiB files.
        total = 0
        for root, _dirs, files in os.walk(self.path):
            for f in files:
                try:
                    total += os.lstat(os.path.join(root, f)).st_blocks * 512
                except FileNotFoundError:
                    pass
        return total

    def close(self):
        if self.shard is not None:
            self.shard.flush()
            self.shard.close()
            self.shard = None


vecbench_host.serve(QdrantEdge)
