"""Milvus (the real 2.3.5 standalone server of PyPI `milvus`, started by the runner: adapter.ts,
server.py) driven with pymilvus over vecbench's participant protocol, through the reference host
(src/sdk/python/vecbench_host.py).

One collection: the row id as an INT64 primary key (Milvus takes no INT32 key), the vector, and
each attribute as an INT32 scalar field. Rows are inserted in batches; build flushes them into
sealed segments, builds the HNSW index and loads the collection. Searches ask Session consistency:
a search sees this client's own writes (inserts, deletes) and waits for nothing else. Filters
become Milvus boolean expressions. Reopen connects to the restarted server and loads the
collection it finds.
"""

import importlib.metadata
import os
import sys
import time

sys.path.insert(0, os.environ["VECBENCH_PYTHON_SDK"])
import vecbench_host  # noqa: E402
from vecbench_host import ATTRIBUTES, UserError  # noqa: E402

from pymilvus import Collection, CollectionSchema, DataType, FieldSchema, connections, utility  # noqa: E402
from pymilvus.client import ts_utils  # noqa: E402

ALIAS = "vecbench"
COLLECTION = "vb_items"
ID, VECTOR = "id", "vector"
# Milvus's gRPC messages are capped (64 MB by default): inserts go in pieces well below that.
INSERT_BYTES = 16 << 20
CONSISTENCY = "Session"


def expression(f):
    """vecbench's filter (eq, range with gte <= v < lt, and) as a Milvus boolean expression."""
    op = f.get("op")
    if op in ("eq", "range") and f.get("field") not in ATTRIBUTES:
        raise UserError("unknown filter field %r; known fields: %s" % (f.get("field"), ", ".join(ATTRIBUTES)))
    if op == "eq":
        return "%s == %d" % (f["field"], int(f["value"]))
    if op == "range":
        return "(%s >= %d and %s < %d)" % (f["field"], int(f["gte"]), f["field"], int(f["lt"]))
    if op == "and":
        if not f["args"]:
            raise UserError("an empty AND filter has no Milvus expression")
        return "(%s)" % " and ".join(expression(a) for a in f["args"])
    raise UserError("filter op %r is not one vecbench sends" % (op,))


class Milvus(vecbench_host.Engine):
    name = "Milvus"

    def __init__(self):
        self.collection = None
        self.ef = None
        self.dirty = False
        self.opened = None

    def version(self):
        # Before open there is no server to ask: the wheel's version (the server's, read at open,
        # replaces it through opened_version).
        return "Milvus %s (embedded Milvus wheel; pymilvus %s)" % (importlib.metadata.version("milvus"), importlib.metadata.version("pymilvus"))

    def opened_version(self):
        return self.opened

    def open(self, dataset, settings, work_dir, max_concurrency, reopen):
        if self.server is None:
            raise UserError("milvus: no server connection in open (the runner starts the server)")
        self.settings = settings
        self.d = int(dataset["d"])
        # Unit-length vectors for cosine datasets (prepare normalises them): inner product ranks as cosine.
        self.metric = "L2" if dataset["metric"] == "l2" else "IP"
        params = self.server["params"]
        connections.connect(
            ALIAS, host=self.server["host"], port=str(self.server["port"]), user=str(params.get("user", "root")), password=str(params.get("password", "")), timeout=60
        )
        self.opened = "Milvus %s (server; pymilvus %s)" % (utility.get_server_version(using=ALIAS), importlib.metadata.version("pymilvus"))
        if reopen:
            if not utility.has_collection(COLLECTION, using=ALIAS):
                raise UserError("the Milvus server has no collection %s to reopen" % COLLECTION)
            self.collection = Collection(COLLECTION, using=ALIAS)
            self.collection.load()
            # The writes of the sessions before the restart are this client's own: searches wait
            # until the server has replayed them (without this, the first searches ran before
            # the deletes reached the segment's bitset and walked the graph another way).
            self._seen_now()
            return
        if utility.has_collection(COLLECTION, using=ALIAS):
            utility.drop_collection(COLLECTION, using=ALIAS)
        fields = [FieldSchema(ID, DataType.INT64, is_primary=True, auto_id=False), FieldSchema(VECTOR, DataType.FLOAT_VECTOR, dim=self.d)]
        fields += [FieldSchema(a, DataType.INT32) for a in ATTRIBUTES]
        schema = CollectionSchema(fields, description="vecbench rows")
        self.collection = Collection(COLLECTION, schema, using=ALIAS, shards_num=1, consistency_level=CONSISTENCY)

    def _columns(self, rows, start, end):
        cols = [rows.ids[start:end].astype("int64").tolist(), rows.vectors[start:end].tolist()]
        for a in ATTRIBUTES:
            cols.append(rows.attrs[a][start:end].tolist())
        return cols

    def _write(self, rows, verb):
        step = max(1, INSERT_BYTES // (4 * self.d + 8 + 4 * len(ATTRIBUTES)))
        for start in range(0, rows.n, step):
            getattr(self.collection, verb)(self._columns(rows, start, min(rows.n, start + step)))
        self.dirty = True

    def ingest(self, rows):
        self._write(rows, "insert")

    def insert(self, rows):
        self._write(rows, "insert")

    def upsert(self, rows):
        self._write(rows, "upsert")

    def delete(self, ids):
        if len(ids) > 0:
            self.collection.delete("%s in [%s]" % (ID, ",".join(str(int(i)) for i in ids)))
            # Milvus 2.3.5 answers a delete with timestamp 0, so pymilvus's Session consistency would
            # not wait for it.
            self._seen_now()
            self.dirty = True

    def _seen_now(self):
        """Session consistency from now on: searches see the server at least as of this moment
        (a hybrid timestamp from this machine's clock, which is the server's)."""
        ts_utils.update_collection_ts(COLLECTION, utility.mkts_from_unixtime(time.time()))

    def build(self):
        s = self.settings
        # Sealed segments are what Milvus indexes: flush seals what was inserted.
        self.collection.flush()
        index = {"index_type": "HNSW", "metric_type": self.metric, "params": {"M": s["M"], "efConstruction": s["efConstruction"]}}
        self.collection.create_index(VECTOR, index)
        utility.wait_for_index_building_complete(COLLECTION, using=ALIAS)
        self.collection.load()
        self.dirty = False

    def knobs(self, knobs):
        # Names and values arrive checked against adapter.ts's knobs.
        if "ef" in knobs:
            self.ef = knobs["ef"]

    def search(self, vector, k, filter):
        ef = self.ef if self.ef is not None else max(64, k)
        if ef < k:
            raise UserError("knob ef=%d is below k=%d: Milvus's HNSW searches need ef >= k" % (ef, k))
        param = {"metric_type": self.metric, "params": {"ef": ef}}
        expr = None if filter is None else expression(filter)
        res = self.collection.search([vector.tolist()], VECTOR, param, limit=k, expr=expr, consistency_level=CONSISTENCY)
        return [int(i) for i in res[0].ids]

    def close(self):
        if self.collection is not None and self.dirty:
            # Writes since the build go into sealed segments, so a restart finds them there.
            self.collection.flush()
        self.collection = None
        connections.disconnect(ALIAS)


vecbench_host.serve(Milvus)
