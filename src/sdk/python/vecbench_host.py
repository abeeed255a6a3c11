"""The reference host of vecbench's participant protocol, in Python.

A participant whose engine is a Python library writes one class with the engine's operations and
calls serve() with it; this module speaks the protocol (docs/protocol.md, "The participant
protocol") over stdin and stdout. Standard library only; when numpy is importable, vectors and
id columns arrive as numpy arrays (no copy), otherwise as memoryviews.

    import vecbench_host

    class MyEngine(vecbench_host.Engine):
        name = "my-engine"
        def version(self): ...
        def open(self, dataset, settings, work_dir, max_concurrency, reopen): ...
        def ingest(self, rows): ...          # rows: Rows (ids, vectors, attrs, text)
        def build(self): ...
        def knobs(self, knobs): ...          # apply: names and values arrive checked (adapter.ts knobs)
        def search(self, vector, k, filter): ...   # -> sequence of int ids, best first

    vecbench_host.serve(MyEngine)

Optional operations are served when the class defines them: explain, disk_bytes, insert,
upsert, delete, compact. close() is called once before the process exits.

A participant whose engine is a server the runner starts finds its connection in self.server,
set before open() is called: a dict with host, port, params and data_dir (None without a
server). An engine whose version is known only once it is open (a server's) returns it from
opened_version(); the harness then reports it instead of hello's.
"""

import os
import struct
import sys
import traceback

try:  # numpy is optional: arrays without copies when present
    import numpy as _np
except ImportError:  # pragma: no cover - exercised where numpy is absent
    _np = None

PROTOCOL_VERSION = 1
MAX_FRAME = 1 << 30
ATTRIBUTES = ("cat10", "cat100", "cat1000", "num", "cluster", "lang", "region", "tenant", "label", "measure")
OPTIONAL_OPS = ("explain", "disk_bytes", "insert", "upsert", "delete", "compact")


class UserError(Exception):
    """An error the user fixes (a bad setting or knob): shown as one line, exit code 2."""


class Rows:
    """A batch of rows: ids (int32), vectors (n x d float32, row-major), attrs (name -> int32
    column), text (list of str or None)."""

    __slots__ = ("n", "d", "ids", "vectors", "attrs", "text")

    def __init__(self, n, d, ids, vectors, attrs, text):
        self.n, self.d, self.ids, self.vectors, self.attrs, self.text = n, d, ids, vectors, attrs, text

    def vector(self, i):
        """Row i's vector (a numpy view, or a list of floats without numpy)."""
        if _np is not None:
            return self.vectors[i]
        return list(self.vectors[i * self.d:(i + 1) * self.d])


class Engine:
    """Subclass it; every method may raise UserError (the user's to fix) or any exception."""

    name = "engine"
    server = None  # the server's connection, set before open() (participants with a server)

    def version(self):
        raise NotImplementedError

    def open(self, dataset, settings, work_dir, max_concurrency, reopen):
        raise NotImplementedError

    def ingest(self, rows):
        raise NotImplementedError

    def build(self):
        pass

    def knobs(self, knobs):
        raise NotImplementedError

    def search(self, vector, k, filter):
        raise NotImplementedError

    def opened_version(self):
        """The version of what open() reached (a server's), or None: hello's stands."""
        return None

    def close(self):
        pass


def _int32s(buf):
    if _np is not None:
        return _np.frombuffer(buf, dtype="<i4")
    return memoryview(buf).cast("i")


def _floats(buf, n, d):
    if _np is not None:
        return _np.frombuffer(buf, dtype="<f4").reshape(n, d) if n is not None else _np.frombuffer(buf, dtype="<f4")
    return memoryview(buf).cast("f")


class _Wire:
    def __init__(self):
        # The protocol owns the real stdout; anything else printed (by the engine, by a native
        # library writing to fd 1) goes to stderr, where the harness logs it.
        out_fd = os.dup(1)
        os.dup2(2, 1)
        sys.stdout = sys.stderr
        self.out = os.fdopen(out_fd, "wb", buffering=0)
        self.inp = sys.stdin.buffer

    def read_exact(self, n):
        chunks, got = [], 0
        while got < n:
            chunk = self.inp.read(n - got)
            if not chunk:
                return None
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)

    def read(self):
        head = self.read_exact(4)
        if head is None:
            return None
        (size,) = struct.unpack("<I", head)
        if size < 8 or size > MAX_FRAME:
            raise SystemExit("vecbench host: a frame of %d bytes: not the participant protocol" % size)
        frame = self.read_exact(size)
        if frame is None:
            return None
        rid, hlen = struct.unpack_from("<II", frame, 0)
        import json

        header = json.loads(frame[8:8 + hlen].decode("utf-8"))
        return rid, header, memoryview(frame)[8 + hlen:]

    def write(self, rid, header, payload=b""):
        import json

        h = json.dumps(header, separators=(",", ":")).encode("utf-8")
        body = bytes(payload)
        self.out.write(struct.pack("<III", 8 + len(h) + len(body), rid, len(h)) + h + body)


def _rows(header, payload, d):
    n = int(header["n"])
    names = header.get("attrs", ATTRIBUTES)
    need = 4 * n + 4 * n * d + 4 * n * len(names)
    if len(payload) != need:
        raise ValueError("a batch of %d rows needs %d bytes, got %d" % (n, need, len(payload)))
    off = 0
    ids = _int32s(payload[off:off + 4 * n])
    off += 4 * n
    vectors = _floats(payload[off:off + 4 * n * d], n, d)
    off += 4 * n * d
    attrs = {}
    for a in names:
        attrs[a] = _int32s(payload[off:off + 4 * n])
        off += 4 * n
    return Rows(n, d, ids, vectors, attrs, header.get("text"))


def _ids_payload(ids):
    if _np is not None:
        return _np.asarray(ids, dtype="<i4").tobytes()
    return struct.pack("<%di" % len(ids), *ids)


def _timed_pass(search, header, payload, d):
    """Runs the pass's searches one after another, each timed around the engine's call alone."""
    import array
    import time

    n, k = int(header["n"]), int(header["k"])
    filters = header.get("filters") or [None] * n
    if len(payload) != 4 * n * d or len(filters) != n:
        raise ValueError("a pass of %d queries needs %d bytes of vectors and %d filters" % (n, 4 * n * d, n))
    vectors = _floats(payload, n, d) if _np is not None else memoryview(payload).cast("f")
    latencies = array.array("d", bytes(8 * n))
    counts = array.array("i", bytes(4 * n))
    ids = array.array("i")
    errors = []
    clock = time.perf_counter_ns
    start = clock()
    for i in range(n):
        v = vectors[i] if _np is not None else vectors[i * d:(i + 1) * d]
        t0 = clock()
        try:
            got = search(v, k, filters[i])
            latencies[i] = (clock() - t0) / 1e6
        except Exception as e:  # one query's failure is that query's error, as in the harness's own loop
            latencies[i] = (clock() - t0) / 1e6
            errors.append([i, "%s: %s" % (type(e).__name__, str(e).strip().splitlines()[0] if str(e).strip() else "")])
            got = ()
        got = [int(x) for x in got]
        counts[i] = len(got)
        ids.extend(got)
    wall = (clock() - start) / 1e9
    return {"wall_s": wall, "errors": errors}, latencies.tobytes() + counts.tobytes() + ids.tobytes()


_WIRE = None  # the protocol's stream, once serve() runs (tests write broken frames through it)


def exit_with_parent():
    """Has the kernel end this host when the process that started it dies. Closing stdin is not
    enough: a host inside a long engine call (a build of an hour) reads it only when the call
    returns, and went on building after a stopped run. Linux only (prctl PR_SET_PDEATHSIG)."""
    try:
        import ctypes
        import signal

        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        return
    # A parent gone before the call closed stdin too: the first read ends the host. (No check for
    # ppid 1: in a container the harness may be pid 1.)


def serve(engine_class):
    """Answers the harness until it closes stdin or sends close. Never returns normally."""
    global _WIRE
    exit_with_parent()
    wire = _WIRE = _Wire()
    engine = engine_class()
    served = [op for op in OPTIONAL_OPS if callable(getattr(engine, op, None))]
    d = None
    while True:
        msg = wire.read()
        if msg is None:
            break
        rid, header, payload = msg
        op = header.get("op")
        try:
            if op == "hello":
                wire.write(rid, {"protocol": PROTOCOL_VERSION, "engine": engine.name, "version": str(engine.version()), "ops": served})
            elif op == "open":
                ds = header["dataset"]
                d = int(ds["d"])
                server = header.get("server")
                engine.server = None if server is None else {
                    "host": server.get("host"), "port": server.get("port"), "params": server.get("params") or {}, "data_dir": server.get("dataDir")}
                engine.open(ds, header.get("settings"), header["work_dir"], int(header.get("max_concurrency", 1)), bool(header.get("reopen")))
                opened = engine.opened_version() if callable(getattr(engine, "opened_version", None)) else None
                wire.write(rid, {} if opened is None else {"version": str(opened)})
            elif op in ("ingest", "insert", "upsert"):
                getattr(engine, op)(_rows(header, payload, d))
                wire.write(rid, {})
            elif op == "build":
                engine.build()
                wire.write(rid, {})
            elif op == "knobs":
                engine.knobs(header.get("knobs") or {})
                wire.write(rid, {})
            elif op == "search":
                ids = engine.search(_floats(payload, None, d), int(header["k"]), header.get("filter"))
                wire.write(rid, {}, _ids_payload(ids))
            elif op in ("pass", "null_pass"):
                # The timed loop next to the engine: the crossing is paid once per pass.
                k = int(header["k"])
                if op == "pass":
                    search = engine.search
                else:
                    nothing = list(range(k))

                    def search(vector, k, filter, _ids=nothing):
                        return _ids

                header_out, body = _timed_pass(search, header, payload, d)
                wire.write(rid, header_out, body)
            elif op == "null_search":
                # The protocol's own cost: the same frames, no engine (the harness-overhead pass).
                wire.write(rid, {}, _ids_payload(range(int(header["k"]))))
            elif op == "explain" and "explain" in served:
                wire.write(rid, {"plan": str(engine.explain(_floats(payload, None, d), int(header["k"]), header.get("filter")))})
            elif op == "disk_bytes" and "disk_bytes" in served:
                wire.write(rid, {"bytes": int(engine.disk_bytes())})
            elif op == "delete" and "delete" in served:
                engine.delete(_int32s(payload))
                wire.write(rid, {})
            elif op == "compact" and "compact" in served:
                engine.compact()
                wire.write(rid, {})
            elif op == "close":
                engine.close()
                wire.write(rid, {})
                break
            else:
                wire.write(rid, {"error": "unknown operation %r" % (op,)})
        except UserError as e:
            wire.write(rid, {"error": str(e), "user": True})
        except Exception as e:  # the engine's own failure: one line to the harness, the trace to stderr
            traceback.print_exc(file=sys.stderr)
            wire.write(rid, {"error": "%s: %s" % (type(e).__name__, str(e).strip().splitlines()[0] if str(e).strip() else "")})
    sys.stderr.flush()
    os._exit(0)
