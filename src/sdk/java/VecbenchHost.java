// The reference host of vecbench's participant protocol, in Java (17 or later, standard library
// only). A participant whose engine is a Java library writes one subclass of Engine and calls
// serve() with it; this class speaks the protocol (docs/protocol.md, "The participant
// protocol"; src/adapters/foreign.ts is the harness's side) over stdin and stdout.
//
// In the unnamed package, like the hosts that use it: compile it beside the engine's host,
//   javac --release 17 -cp <engine jars> -d <classes> VecbenchHost.java MyHost.java
//
//   public final class MyHost extends VecbenchHost.Engine {
//     public String name() { return "my-engine"; }
//     public String version() { ... }                        // read from the engine
//     public void open(Dataset ds, Map<String, Object> settings, String workDir, int maxConcurrency, boolean reopen) { ... }
//     public void ingest(Rows rows) { ... }
//     public void knobs(Map<String, Object> knobs) { ... }   // refuse unknown names: throw UserError
//     public int[] search(float[] vector, int k, Map<String, Object> filter) { ... }  // ids, best first
//     public static void main(String[] a) { VecbenchHost.serve(new MyHost()); }
//   }
//
// Optional operations (explain, disk_bytes, insert, upsert, delete, compact) are served when
// the subclass overrides their methods (explain, diskBytes, insert, upsert, delete, compact), or
// exactly those its ops() names when it overrides ops(). close() is called once, on the close
// request, before the process exits.
//
// Searches run on a pool of max_concurrency threads (from open) and are answered in any order;
// search() must therefore be thread-safe. Every other request waits for the searches in flight,
// then runs alone on the reading thread, so an engine swaps its reader there without locks.
// System.out is pointed at stderr (the harness logs it): only this class writes to the real
// stdout, one whole frame at a time.
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

public final class VecbenchHost {
  private VecbenchHost() {}

  public static final int PROTOCOL_VERSION = 1;
  /** A frame larger than this is a broken peer. */
  public static final long MAX_FRAME = 1L << 30;
  public static final List<String> ATTRIBUTES =
      List.of("cat10", "cat100", "cat1000", "num", "cluster", "lang", "region", "tenant", "label", "measure");
  public static final List<String> OPTIONAL_OPS = List.of("explain", "disk_bytes", "insert", "upsert", "delete", "compact");

  /** An error the user fixes (a bad setting or knob): one line, marked user:true. */
  public static class UserError extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public UserError(String message) {
      super(message);
    }
  }

  /** The dataset as open describes it. */
  public static final class Dataset {
    public final String name;
    public final int n;
    public final int d;
    /** "ip", "cosine" (unit vectors: rank by inner product) or "l2". */
    public final String metric;
    public final boolean hasText;

    Dataset(Map<String, Object> m) {
      name = String.valueOf(m.get("name"));
      n = intOf(m.get("n"), "dataset.n");
      d = intOf(m.get("d"), "dataset.d");
      metric = String.valueOf(m.get("metric"));
      hasText = Boolean.TRUE.equals(m.get("has_text"));
    }
  }

  /** A batch of rows: ids, vectors (n x d, row-major), one int column per attribute, text or null. */
  public static final class Rows {
    public final int n;
    public final int d;
    public final int[] ids;
    public final float[] vectors;
    public final Map<String, int[]> attrs;
    public final List<String> text;

    Rows(int n, int d, int[] ids, float[] vectors, Map<String, int[]> attrs, List<String> text) {
      this.n = n;
      this.d = d;
      this.ids = ids;
      this.vectors = vectors;
      this.attrs = attrs;
      this.text = text;
    }

    /** Row i's vector, as a copy. */
    public float[] vector(int i) {
      return Arrays.copyOfRange(vectors, i * d, (i + 1) * d);
    }
  }

  /** Subclass it; every method may throw UserError (the user's to fix) or any exception. */
  public abstract static class Engine {
    /** The connection of the server the runner started for this participant (open's `server`:
     * host, port, params, dataDir), set before open(); null without a server. */
    public Map<String, Object> server;

    /** The engine's human name (hello's `engine`). */
    public abstract String name();

    /** The engine's version, read from the engine itself. */
    public abstract String version() throws Exception;

    public abstract void open(Dataset dataset, Map<String, Object> settings, String workDir, int maxConcurrency, boolean reopen)
        throws Exception;

    public abstract void ingest(Rows rows) throws Exception;

    public void build() throws Exception {}

    public abstract void knobs(Map<String, Object> knobs) throws Exception;

    /** Thread-safe: searches overlap. Filter: null or the parsed JSON filter. */
    public abstract int[] search(float[] vector, int k, Map<String, Object> filter) throws Exception;

    /** Plan text whose first line is "strategy: LABEL" ("LABEL (observed)" when read from the engine). */
    public String explain(float[] vector, int k, Map<String, Object> filter) throws Exception {
      throw new UnsupportedOperationException("explain");
    }

    public long diskBytes() throws Exception {
      throw new UnsupportedOperationException("disk_bytes");
    }

    public void insert(Rows rows) throws Exception {
      throw new UnsupportedOperationException("insert");
    }

    public void upsert(Rows rows) throws Exception {
      throw new UnsupportedOperationException("upsert");
    }

    public void delete(int[] ids) throws Exception {
      throw new UnsupportedOperationException("delete");
    }

    public void compact() throws Exception {
      throw new UnsupportedOperationException("compact");
    }

    public void close() throws Exception {}

    /** The optional ops served: by default those whose method the subclass overrides. */
    public Set<String> ops() {
      Set<String> out = new LinkedHashSet<>();
      Object[][] methods = {
        {"explain", "explain", new Class<?>[] {float[].class, int.class, Map.class}},
        {"disk_bytes", "diskBytes", new Class<?>[] {}},
        {"insert", "insert", new Class<?>[] {Rows.class}},
        {"upsert", "upsert", new Class<?>[] {Rows.class}},
        {"delete", "delete", new Class<?>[] {int[].class}},
        {"compact", "compact", new Class<?>[] {}},
      };
      for (Object[] m : methods) {
        try {
          if (getClass().getMethod((String) m[1], (Class<?>[]) m[2]).getDeclaringClass() != Engine.class) out.add((String) m[0]);
        } catch (NoSuchMethodException e) {
          throw new IllegalStateException(e);
        }
      }
      return out;
    }
  }

  // ---- the wire ----

  private static final class Wire {
    private final DataInputStream in = new DataInputStream(new BufferedInputStream(new FileInputStream(FileDescriptor.in), 1 << 16));
    private final OutputStream out = new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 1 << 16);

    /** The next frame's bytes after its size, or null at the end of stdin. */
    byte[] read() throws IOException {
      byte[] head = new byte[4];
      int got = 0;
      while (got < 4) {
        int r = in.read(head, got, 4 - got);
        if (r < 0) return null;
        got += r;
      }
      long size = ByteBuffer.wrap(head).order(ByteOrder.LITTLE_ENDIAN).getInt() & 0xffffffffL;
      if (size < 8 || size > MAX_FRAME) {
        System.err.println("vecbench host: a frame of " + size + " bytes: not the participant protocol");
        System.exit(1);
      }
      byte[] frame = new byte[(int) size];
      try {
        in.readFully(frame);
      } catch (EOFException e) {
        return null;
      }
      return frame;
    }

    /** One whole frame, flushed; callable from any thread. */
    synchronized void write(int id, Map<String, Object> header, byte[] payload) {
      byte[] h = Json.write(header).getBytes(StandardCharsets.UTF_8);
      ByteBuffer prefix = ByteBuffer.allocate(12).order(ByteOrder.LITTLE_ENDIAN);
      prefix.putInt(8 + h.length + payload.length).putInt(id).putInt(h.length);
      try {
        out.write(prefix.array());
        out.write(h);
        out.write(payload);
        out.flush();
      } catch (IOException e) {
        // The harness is gone: nothing to answer to.
        System.err.println("vecbench host: cannot write to stdout (" + e.getMessage() + "); exiting");
        Runtime.getRuntime().halt(1);
      }
    }
  }

  private static final byte[] NO_PAYLOAD = new byte[0];

  static int intOf(Object o, String what) {
    if (o instanceof Number) {
      double v = ((Number) o).doubleValue();
      if (v == Math.rint(v) && v >= Integer.MIN_VALUE && v <= Integer.MAX_VALUE) return (int) v;
    }
    throw new IllegalArgumentException(what + " is not an integer: " + Json.write(o));
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> objectOrNull(Object o, String what) {
    if (o == null) return null;
    if (o instanceof Map) return (Map<String, Object>) o;
    throw new IllegalArgumentException(what + " is not a JSON object: " + Json.write(o));
  }

  private static float[] floats(ByteBuffer payload, int count) {
    float[] out = new float[count];
    payload.asFloatBuffer().get(out);
    payload.position(payload.position() + 4 * count);
    return out;
  }

  private static int[] ints(ByteBuffer payload, int count) {
    int[] out = new int[count];
    payload.asIntBuffer().get(out);
    payload.position(payload.position() + 4 * count);
    return out;
  }

  private static float[] vector(ByteBuffer payload, int d) {
    if (d < 0) throw new IllegalStateException("no dataset is open: open comes first");
    if (payload.remaining() != 4 * d)
      throw new IllegalArgumentException("a query vector of " + payload.remaining() + " bytes, the index has " + d + " dimensions");
    return floats(payload, d);
  }

  @SuppressWarnings("unchecked")
  private static Rows rows(Map<String, Object> header, ByteBuffer payload, int d) {
    if (d < 0) throw new IllegalStateException("no dataset is open: open comes first");
    int n = intOf(header.get("n"), "n");
    List<String> names = new ArrayList<>();
    Object given = header.get("attrs");
    if (given == null) names.addAll(ATTRIBUTES);
    else for (Object a : (List<Object>) given) names.add((String) a);
    long need = 4L * n + 4L * n * d + 4L * n * names.size();
    if (payload.remaining() != need)
      throw new IllegalArgumentException("a batch of " + n + " rows needs " + need + " bytes, got " + payload.remaining());
    int[] ids = ints(payload, n);
    float[] vectors = floats(payload, n * d);
    Map<String, int[]> attrs = new LinkedHashMap<>();
    for (String a : names) attrs.put(a, ints(payload, n));
    List<String> text = null;
    if (header.get("text") instanceof List) {
      text = new ArrayList<>();
      for (Object t : (List<Object>) header.get("text")) text.add(t == null ? null : String.valueOf(t));
    }
    return new Rows(n, d, ids, vectors, attrs, text);
  }

  private static byte[] idsPayload(int[] ids) {
    ByteBuffer b = ByteBuffer.allocate(4 * ids.length).order(ByteOrder.LITTLE_ENDIAN);
    b.asIntBuffer().put(ids);
    return b.array();
  }

  /** The engine's failure in one line: "Type: first line of its message". */
  private static Map<String, Object> errorOf(Throwable e) {
    Map<String, Object> h = new LinkedHashMap<>();
    if (e instanceof UserError) {
      h.put("error", String.valueOf(e.getMessage()).strip());
      h.put("user", true);
      return h;
    }
    e.printStackTrace(System.err);
    String msg = e.getMessage() == null ? "" : e.getMessage().strip();
    int nl = msg.indexOf('\n');
    if (nl >= 0) msg = msg.substring(0, nl).strip();
    h.put("error", e.getClass().getSimpleName() + (msg.isEmpty() ? "" : ": " + msg));
    h.put("user", false);
    return h;
  }

  private static final Map<String, Object> EMPTY = Collections.emptyMap();

  /**
   * Ends this JVM soon after the process that started it dies. A host inside a long engine call
   * (a build of an hour) reads stdin only when the call returns, so the closed pipe alone left it
   * running after a stopped run. Java cannot ask the kernel (prctl) for a signal, so a daemon
   * thread watches the parent's handle, which also tells a reused pid from the parent.
   */
  public static void exitWithParent() {
    // A parent gone before this call closed stdin too: the first read ends the host. (No check
    // for pid 1: in a container the harness may be pid 1.)
    ProcessHandle parent = ProcessHandle.current().parent().orElse(null);
    if (parent == null) return;
    Thread watch =
        new Thread(
            () -> {
              for (;;) {
                try {
                  Thread.sleep(250);
                } catch (InterruptedException e) {
                  return;
                }
                if (!parent.isAlive()) Runtime.getRuntime().halt(1);
              }
            },
            "vecbench-parent-watch");
    watch.setDaemon(true);
    watch.start();
  }

  /** Answers the harness until it closes stdin or sends close; then exits the JVM. */
  public static void serve(Engine engine) {
    exitWithParent();
    // The protocol owns the real stdout; anything the engine prints goes to stderr.
    System.setOut(System.err);
    Wire wire = new Wire();
    Set<String> served = engine.ops();
    Object lock = new Object();
    AtomicInteger inFlight = new AtomicInteger();
    ExecutorService pool = null;
    int d = -1;
    try {
      for (;;) {
        byte[] frame = wire.read();
        if (frame == null) break;
        ByteBuffer buf = ByteBuffer.wrap(frame).order(ByteOrder.LITTLE_ENDIAN);
        int id = buf.getInt(0);
        int hlen = buf.getInt(4);
        Map<String, Object> header;
        try {
          if (hlen < 0 || 8L + hlen > frame.length) throw new IllegalArgumentException("a header longer than its frame");
          header = objectOrNull(Json.parse(new String(frame, 8, hlen, StandardCharsets.UTF_8)), "the request header");
          if (header == null) throw new IllegalArgumentException("the request header is null");
        } catch (RuntimeException e) {
          wire.write(id, errorOf(e), NO_PAYLOAD);
          continue;
        }
        ByteBuffer payload = buf.position(8 + hlen).slice().order(ByteOrder.LITTLE_ENDIAN);
        Object op = header.get("op");
        if ("search".equals(op) && pool != null) {
          final int dim = d;
          inFlight.incrementAndGet();
          pool.execute(() -> {
            try {
              wire.write(id, EMPTY, search(engine, header, payload, dim));
            } catch (Throwable e) {
              wire.write(id, errorOf(e), NO_PAYLOAD);
            } finally {
              if (inFlight.decrementAndGet() == 0) synchronized (lock) {
                lock.notifyAll();
              }
            }
          });
          continue;
        }
        // Anything else runs alone: after the searches in flight.
        synchronized (lock) {
          while (inFlight.get() > 0) lock.wait();
        }
        try {
          Map<String, Object> reply = new LinkedHashMap<>();
          byte[] out = NO_PAYLOAD;
          if ("hello".equals(op)) {
            reply.put("protocol", PROTOCOL_VERSION);
            reply.put("engine", engine.name());
            reply.put("version", String.valueOf(engine.version()));
            reply.put("ops", new ArrayList<>(served));
          } else if ("open".equals(op)) {
            Map<String, Object> ds = objectOrNull(header.get("dataset"), "dataset");
            Dataset dataset = new Dataset(ds);
            engine.server = objectOrNull(header.get("server"), "server");
            int maxConcurrency = header.get("max_concurrency") == null ? 1 : Math.max(1, intOf(header.get("max_concurrency"), "max_concurrency"));
            engine.open(dataset, objectOrNull(header.get("settings"), "settings"), String.valueOf(header.get("work_dir")), maxConcurrency,
                Boolean.TRUE.equals(header.get("reopen")));
            d = dataset.d;
            if (pool != null) pool.shutdown();
            AtomicInteger seq = new AtomicInteger();
            pool = Executors.newFixedThreadPool(maxConcurrency, (r) -> {
              Thread t = new Thread(r, "vecbench-search-" + seq.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
          } else if ("ingest".equals(op)) {
            engine.ingest(rows(header, payload, d));
          } else if (("insert".equals(op) || "upsert".equals(op)) && served.contains(op)) {
            if ("insert".equals(op)) engine.insert(rows(header, payload, d));
            else engine.upsert(rows(header, payload, d));
          } else if ("build".equals(op)) {
            engine.build();
          } else if ("knobs".equals(op)) {
            Map<String, Object> knobs = objectOrNull(header.get("knobs"), "knobs");
            engine.knobs(knobs == null ? new LinkedHashMap<>() : knobs);
          } else if ("search".equals(op)) {
            out = search(engine, header, payload, d);
          } else if ("null_search".equals(op)) {
            // The protocol's own cost: the same frames, no engine (the harness-overhead pass).
            int k = intOf(header.get("k"), "k");
            vector(payload, d);
            int[] none = new int[k];
            for (int i = 0; i < k; i++) none[i] = i;
            out = idsPayload(none);
          } else if ("pass".equals(op) || "null_pass".equals(op)) {
            out = timedPass(engine, "null_pass".equals(op), header, payload, d, reply);
          } else if ("explain".equals(op) && served.contains("explain")) {
            reply.put("plan", String.valueOf(engine.explain(vector(payload, d), intOf(header.get("k"), "k"),
                objectOrNull(header.get("filter"), "filter"))));
          } else if ("disk_bytes".equals(op) && served.contains("disk_bytes")) {
            reply.put("bytes", engine.diskBytes());
          } else if ("delete".equals(op) && served.contains("delete")) {
            if (payload.remaining() % 4 != 0) throw new IllegalArgumentException("delete: " + payload.remaining() + " bytes, not whole int32s");
            engine.delete(ints(payload, payload.remaining() / 4));
          } else if ("compact".equals(op) && served.contains("compact")) {
            engine.compact();
          } else if ("close".equals(op)) {
            engine.close();
            wire.write(id, reply, out);
            break;
          } else {
            throw new IllegalArgumentException("unknown operation " + Json.write(op));
          }
          wire.write(id, reply, out);
        } catch (Throwable e) {
          wire.write(id, errorOf(e), NO_PAYLOAD);
        }
      }
    } catch (Throwable e) {
      e.printStackTrace(System.err);
      System.err.flush();
      Runtime.getRuntime().halt(1);
    }
    System.err.flush();
    Runtime.getRuntime().halt(0);
  }

  /** The threads of timed passes with several clients, reused from pass to pass. */
  private static final ExecutorService PASS_THREADS = Executors.newCachedThreadPool((r) -> {
    Thread t = new Thread(r, "vecbench-pass");
    t.setDaemon(true);
    return t;
  });

  /**
   * The timed loop next to the engine: the pass's queries with `clients` threads taking them from
   * one counter, each search timed around the engine's call alone. The reply holds wall_s and
   * the per-query errors; the payload float64 latencies (ms), int32 counts, int32 ids.
   */
  @SuppressWarnings("unchecked")
  private static byte[] timedPass(Engine engine, boolean nothing, Map<String, Object> header, ByteBuffer payload, int d, Map<String, Object> reply)
      throws Exception {
    if (d < 0) throw new IllegalStateException("no dataset is open: open comes first");
    int n = intOf(header.get("n"), "n");
    int k = intOf(header.get("k"), "k");
    int clients = header.get("clients") == null ? 1 : Math.max(1, Math.min(n, intOf(header.get("clients"), "clients")));
    List<Object> filters = header.get("filters") instanceof List ? (List<Object>) header.get("filters") : null;
    if (filters != null && filters.size() != n) throw new IllegalArgumentException("a pass of " + n + " queries with " + filters.size() + " filters");
    if (payload.remaining() != 4L * n * d) throw new IllegalArgumentException("a pass of " + n + " queries needs " + (4L * n * d) + " bytes");
    float[] all = floats(payload, n * d);
    double[] latencies = new double[n];
    int[][] results = new int[n][];
    List<Object> errors = Collections.synchronizedList(new ArrayList<>());
    int[] none = new int[k];
    for (int i = 0; i < k; i++) none[i] = i;
    AtomicInteger next = new AtomicInteger();
    Runnable worker = () -> {
      for (int i; (i = next.getAndIncrement()) < n; ) {
        float[] v = Arrays.copyOfRange(all, i * d, (i + 1) * d);
        Map<String, Object> f = filters == null ? null : objectOrNull(filters.get(i), "filter");
        long t0 = System.nanoTime();
        try {
          int[] ids = nothing ? none : engine.search(v, k, f);
          latencies[i] = (System.nanoTime() - t0) / 1e6;
          results[i] = ids.length > k ? Arrays.copyOf(ids, k) : ids;
        } catch (Throwable e) {
          latencies[i] = (System.nanoTime() - t0) / 1e6;
          results[i] = new int[0];
          Object message = errorOf(e).get("error");
          errors.add(List.of((long) i, String.valueOf(message)));
        }
      }
    };
    long start = System.nanoTime();
    if (clients == 1) worker.run();
    else {
      // Threads kept between passes: starting `clients` threads per pass would be timed.
      List<java.util.concurrent.Future<?>> running = new ArrayList<>();
      for (int t = 0; t < clients; t++) running.add(PASS_THREADS.submit(worker));
      for (java.util.concurrent.Future<?> f : running) f.get();
    }
    reply.put("wall_s", (System.nanoTime() - start) / 1e9);
    reply.put("errors", new ArrayList<>(errors));
    int total = 0;
    for (int[] r : results) total += r.length;
    ByteBuffer b = ByteBuffer.allocate(12 * n + 4 * total).order(ByteOrder.LITTLE_ENDIAN);
    for (double l : latencies) b.putDouble(l);
    for (int[] r : results) b.putInt(r.length);
    for (int[] r : results) for (int id : r) b.putInt(id);
    return b.array();
  }

  private static byte[] search(Engine engine, Map<String, Object> header, ByteBuffer payload, int d) throws Exception {
    int k = intOf(header.get("k"), "k");
    int[] ids = engine.search(vector(payload, d), k, objectOrNull(header.get("filter"), "filter"));
    if (ids.length > k) ids = Arrays.copyOf(ids, k);
    return idsPayload(ids);
  }

  // ---- JSON: a strict parser and a writer, enough for the protocol's headers ----

  /** Objects are LinkedHashMap<String, Object>, arrays ArrayList<Object>, numbers Long (integers
   * that fit) or Double, then String, Boolean and null. */
  public static final class Json {
    private Json() {}

    public static Object parse(String s) {
      Parser p = new Parser(s);
      Object v = p.value();
      p.ws();
      if (p.i != s.length()) throw p.error("trailing characters");
      return v;
    }

    public static String write(Object v) {
      StringBuilder b = new StringBuilder();
      write(b, v);
      return b.toString();
    }

    private static void write(StringBuilder b, Object v) {
      if (v == null) b.append("null");
      else if (v instanceof String) quote(b, (String) v);
      else if (v instanceof Boolean) b.append(v);
      else if (v instanceof Integer || v instanceof Long || v instanceof Short || v instanceof Byte) b.append(v);
      else if (v instanceof Number) {
        double x = ((Number) v).doubleValue();
        if (!Double.isFinite(x)) b.append("null");
        else if (x == Math.rint(x) && Math.abs(x) < 1e15) b.append((long) x);
        else b.append(x);
      } else if (v instanceof Map) {
        b.append('{');
        boolean first = true;
        for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
          if (!first) b.append(',');
          first = false;
          quote(b, String.valueOf(e.getKey()));
          b.append(':');
          write(b, e.getValue());
        }
        b.append('}');
      } else if (v instanceof Iterable) {
        b.append('[');
        boolean first = true;
        for (Object x : (Iterable<?>) v) {
          if (!first) b.append(',');
          first = false;
          write(b, x);
        }
        b.append(']');
      } else if (v instanceof Object[]) write(b, Arrays.asList((Object[]) v));
      else if (v instanceof int[]) {
        b.append('[');
        int[] a = (int[]) v;
        for (int i = 0; i < a.length; i++) b.append(i == 0 ? "" : ",").append(a[i]);
        b.append(']');
      } else throw new IllegalArgumentException("cannot write a " + v.getClass().getName() + " as JSON");
    }

    private static void quote(StringBuilder b, String s) {
      b.append('"');
      for (int i = 0; i < s.length(); i++) {
        char c = s.charAt(i);
        switch (c) {
          case '"': b.append("\\\""); break;
          case '\\': b.append("\\\\"); break;
          case '\n': b.append("\\n"); break;
          case '\r': b.append("\\r"); break;
          case '\t': b.append("\\t"); break;
          case '\b': b.append("\\b"); break;
          case '\f': b.append("\\f"); break;
          default:
            if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
      }
      b.append('"');
    }

    private static final class Parser {
      final String s;
      int i;

      Parser(String s) {
        this.s = s;
      }

      IllegalArgumentException error(String what) {
        return new IllegalArgumentException("JSON: " + what + " at offset " + i);
      }

      void ws() {
        while (i < s.length()) {
          char c = s.charAt(i);
          if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
          i++;
        }
      }

      void expect(char c) {
        ws();
        if (i >= s.length() || s.charAt(i) != c) throw error("expected '" + c + "'");
        i++;
      }

      Object value() {
        ws();
        if (i >= s.length()) throw error("unexpected end");
        char c = s.charAt(i);
        switch (c) {
          case '{': return object();
          case '[': return array();
          case '"': return string();
          case 't': return literal("true", Boolean.TRUE);
          case 'f': return literal("false", Boolean.FALSE);
          case 'n': return literal("null", null);
          default:
            if (c == '-' || (c >= '0' && c <= '9')) return number();
            throw error("unexpected character '" + c + "'");
        }
      }

      Object literal(String word, Object v) {
        if (!s.startsWith(word, i)) throw error("expected " + word);
        i += word.length();
        return v;
      }

      Map<String, Object> object() {
        i++; // {
        Map<String, Object> m = new LinkedHashMap<>();
        ws();
        if (i < s.length() && s.charAt(i) == '}') {
          i++;
          return m;
        }
        for (;;) {
          ws();
          if (i >= s.length() || s.charAt(i) != '"') throw error("expected a string key");
          String key = string();
          expect(':');
          m.put(key, value());
          ws();
          if (i >= s.length()) throw error("unterminated object");
          char c = s.charAt(i++);
          if (c == '}') return m;
          if (c != ',') throw error("expected ',' or '}'");
        }
      }

      List<Object> array() {
        i++; // [
        List<Object> a = new ArrayList<>();
        ws();
        if (i < s.length() && s.charAt(i) == ']') {
          i++;
          return a;
        }
        for (;;) {
          a.add(value());
          ws();
          if (i >= s.length()) throw error("unterminated array");
          char c = s.charAt(i++);
          if (c == ']') return a;
          if (c != ',') throw error("expected ',' or ']'");
        }
      }

      String string() {
        i++; // "
        StringBuilder b = new StringBuilder();
        for (;;) {
          if (i >= s.length()) throw error("unterminated string");
          char c = s.charAt(i++);
          if (c == '"') return b.toString();
          if (c < 0x20) throw error("a control character in a string");
          if (c != '\\') {
            b.append(c);
            continue;
          }
          if (i >= s.length()) throw error("unterminated escape");
          char e = s.charAt(i++);
          switch (e) {
            case '"': b.append('"'); break;
            case '\\': b.append('\\'); break;
            case '/': b.append('/'); break;
            case 'b': b.append('\b'); break;
            case 'f': b.append('\f'); break;
            case 'n': b.append('\n'); break;
            case 'r': b.append('\r'); break;
            case 't': b.append('\t'); break;
            case 'u':
              if (i + 4 > s.length()) throw error("a short \\u escape");
              int cp = 0;
              for (int j = 0; j < 4; j++) {
                int h = Character.digit(s.charAt(i + j), 16);
                if (h < 0) throw error("a bad \\u escape");
                cp = cp * 16 + h;
              }
              i += 4;
              b.append((char) cp);
              break;
            default:
              throw error("a bad escape \\" + e);
          }
        }
      }

      Object number() {
        int start = i;
        if (s.charAt(i) == '-') i++;
        if (i < s.length() && s.charAt(i) == '0') i++;
        else if (i < s.length() && s.charAt(i) >= '1' && s.charAt(i) <= '9') digits();
        else throw error("a bad number");
        boolean integer = true;
        if (i < s.length() && s.charAt(i) == '.') {
          i++;
          integer = false;
          if (digits() == 0) throw error("a bad fraction");
        }
        if (i < s.length() && (s.charAt(i) == 'e' || s.charAt(i) == 'E')) {
          i++;
          integer = false;
          if (i < s.length() && (s.charAt(i) == '+' || s.charAt(i) == '-')) i++;
          if (digits() == 0) throw error("a bad exponent");
        }
        String text = s.substring(start, i);
        if (integer) {
          try {
            return Long.parseLong(text);
          } catch (NumberFormatException e) {
            // beyond a long: a double, as JavaScript reads it
          }
        }
        return Double.parseDouble(text);
      }

      int digits() {
        int start = i;
        while (i < s.length() && s.charAt(i) >= '0' && s.charAt(i) <= '9') i++;
        return i - start;
      }
    }
  }
}
