"""TEMPLATE PARTICIPANT IN PYTHON: copy this directory to participants/<name>/ and replace the
engine. Its engine is a toy written with numpy so the template runs as it is: an inverted file
(build picks `lists` rows as centroids and files every row under its nearest; a search scores
the rows of the `probes` nearest lists that pass the filter). A real participant keeps this shape
and calls its engine instead: look for REPLACE below.

The protocol (framing, errors, which operations exist) is the SDK's reference host,
vecbench_host.py; this file only holds the engine. adapter.ts declares the settings and how the
host starts.
"""

import os
import sys

sys.path.insert(0, os.environ["VECBENCH_PYTHON_SDK"])
import vecbench_host  # noqa: E402
from vecbench_host import UserError  # noqa: E402

import numpy as np  # noqa: E402

FILE = "template-index.npz"  # REPLACE: the engine's own files (an engine that persists needs none)


def mask_of(f, attrs):
    """vecbench's filter (eq; range gte <= v < lt; and) as a boolean mask over the rows."""
    op = f["op"]
    if op == "eq":
        return attrs[f["field"]] == int(f["value"])
    if op == "range":
        col = attrs[f["field"]]
        return (col >= int(f["gte"])) & (col < int(f["lt"]))
    if op == "and":
        m = np.ones(len(next(iter(attrs.values()))), dtype=bool)
        for a in f["args"]:
            m &= mask_of(a, attrs)
        return m
    raise UserError("filter op %r is not one vecbench sends" % (op,))


class TemplateEngine(vecbench_host.Engine):
    name = "template (Python inverted file)"  # REPLACE: the engine's name

    def version(self):
        return "numpy %s" % np.__version__  # REPLACE: read the engine's version from the engine

    def open(self, dataset, settings, work_dir, max_concurrency, reopen):
        self.d = int(dataset["d"])
        self.l2 = dataset["metric"] == "l2"
        self.lists = int(settings["lists"])
        self.path = os.path.join(work_dir, FILE)
        self.probes = self.lists
        if reopen:
            if not os.path.exists(self.path):
                raise UserError("no index in %s to reopen" % self.path)
            z = np.load(self.path)
            self.ids, self.vectors, self.live = z["ids"], z["vectors"], z["live"]
            self.attrs = {k[5:]: z[k] for k in z.files if k.startswith("attr_")}
            self.centroids, self.assign = z["centroids"], z["assign"]
            return
        self.ids = np.zeros(0, dtype=np.int32)
        self.vectors = np.zeros((0, self.d), dtype=np.float32)
        self.live = np.zeros(0, dtype=bool)
        self.attrs = {}
        self.centroids = None
        self.assign = np.zeros(0, dtype=np.int32)

    def _append(self, rows):
        self.ids = np.concatenate([self.ids, rows.ids.astype(np.int32)])
        self.vectors = np.concatenate([self.vectors, np.asarray(rows.vectors, dtype=np.float32)])
        self.live = np.concatenate([self.live, np.ones(rows.n, dtype=bool)])
        for a, col in rows.attrs.items():
            self.attrs[a] = np.concatenate([self.attrs.get(a, np.zeros(0, dtype=np.int32)), col.astype(np.int32)])
        if self.centroids is not None:
            self.assign = np.concatenate([self.assign, self._nearest_list(np.asarray(rows.vectors))])

    def _scores(self, x, q):
        """Higher is closer: -squared distance for l2, the inner product otherwise."""
        if self.l2:
            return -((x - q) ** 2).sum(axis=1)
        return x @ q

    def _nearest_list(self, x):
        if self.l2:
            d = ((x[:, None, :] - self.centroids[None, :, :]) ** 2).sum(axis=2)
            return d.argmin(axis=1).astype(np.int32)
        return (x @ self.centroids.T).argmax(axis=1).astype(np.int32)

    def ingest(self, rows):  # REPLACE: add the rows to the engine
        self._append(rows)

    def build(self):  # REPLACE: build the engine's index
        n = len(self.ids)
        stride = max(1, n // self.lists)
        self.centroids = self.vectors[::stride][: self.lists].copy()
        self.assign = self._nearest_list(self.vectors)
        self._save()

    def _save(self):
        np.savez(self.path, ids=self.ids, vectors=self.vectors, live=self.live, centroids=self.centroids, assign=self.assign, **{"attr_" + a: c for a, c in self.attrs.items()})

    def knobs(self, knobs):
        # REPLACE: apply the knobs; names and values arrive checked against adapter.ts's knobs.
        self.probes = int(knobs.get("probes", self.lists))

    def search(self, vector, k, filter):  # REPLACE: the engine's search, ids best first
        q = np.asarray(vector, dtype=np.float32)
        probe = np.argsort(-self._scores(self.centroids, q))[: self.probes]
        mask = self.live & np.isin(self.assign, probe)
        if filter is not None:
            mask &= mask_of(filter, self.attrs)
        rows = np.nonzero(mask)[0]
        if len(rows) == 0:
            return []
        s = self._scores(self.vectors[rows], q)
        top = rows[np.argsort(-s, kind="stable")[:k]]
        return self.ids[top]

    def explain(self, vector, k, filter):
        label = "exact scan" if self.probes == self.lists else "scan of the %d nearest lists" % self.probes
        return "strategy: %s%s (observed)\nprobes=%d of %d lists" % (label, "" if filter is None else " + filter", self.probes, self.lists)

    def insert(self, rows):
        self._append(rows)
        self._save()

    def upsert(self, rows):
        self.delete(rows.ids)
        self.insert(rows)

    def delete(self, ids):
        self.live &= ~np.isin(self.ids, np.asarray(ids))
        self._save()

    def disk_bytes(self):
        return os.path.getsize(self.path) if os.path.exists(self.path) else 0


vecbench_host.serve(TemplateEngine)
