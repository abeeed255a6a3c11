// TEMPLATE PARTICIPANT IN JAVA: copy this directory to participants/<name>/ and replace the
// engine. The engine here is a toy in plain Java (standard library only) so the template runs as
// it is: an inverted file. build takes `lists` rows at an even stride as centroids and files every
// row under its nearest; a search scores the rows of the `probes` nearest lists that pass the
// filter (probes == lists scores every row: exact). A real participant keeps this shape and calls
// its engine instead: look for REPLACE below.
//
// The protocol (framing, errors, which operations exist, the search threads) is the SDK's
// reference host, src/sdk/java/VecbenchHost.java; this file only holds the engine. adapter.ts
// declares the settings and how the JVM starts; provision.sh compiles both sources.
//
// Threads: searches run on a pool and overlap, so search() and explain() only read the index and
// keep their scratch in locals. Every other request (ingest, build, knobs, the writes) runs alone
// on the reading thread once the searches in flight are done (the reference host's rule), so
// the writes below change the arrays in place without locks.
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntPredicate;

public final class TemplateHost extends VecbenchHost.Engine {
  static final String KNOB = "probes";
  /** REPLACE: the engine's own files (an engine that persists needs none). */
  static final String FILE = "template-index.bin";
  /** The file's first bytes and format version: a reopen refuses anything else. */
  static final int MAGIC = 0x56425431;

  private int d;
  private boolean l2;
  private int lists;
  private Path path;
  /** The knob; set by knobs() on the reading thread, read by the search threads. */
  private volatile int probes;

  // The rows, live or deleted, in the order they came: row i is ids[i], vectors[i*d..(i+1)*d),
  // live[i], and attrs.get(a)[i] for each attribute a.
  private int n;
  private int[] ids = new int[0];
  private float[] vectors = new float[0];
  private boolean[] live = new boolean[0];
  private final Map<String, int[]> attrs = new LinkedHashMap<>();
  // The inverted file (null before build): nc centroids (nc <= lists: fewer when there are fewer
  // rows), the list of every row, and each list's rows.
  private float[] centroids;
  private int nc;
  private int[] assign = new int[0];
  private int[][] members;
  private int[] sizes;

  @Override
  public String name() {
    return "template (Java inverted file)"; // REPLACE: the engine's name
  }

  @Override
  public String version() {
    return "Java " + Runtime.version(); // REPLACE: read the engine's version from the engine
  }

  @Override
  public void open(VecbenchHost.Dataset dataset, Map<String, Object> settings, String workDir, int maxConcurrency, boolean reopen)
      throws IOException {
    d = dataset.d;
    // cosine vectors are unit length: the inner product ranks them.
    l2 = "l2".equals(dataset.metric);
    lists = VecbenchHost.intOf(settings == null ? null : settings.get("lists"), "settings.lists");
    path = Paths.get(workDir, FILE);
    probes = lists;
    if (reopen) {
      if (!Files.exists(path)) throw new VecbenchHost.UserError("no index in " + path + " to reopen");
      load();
      return;
    }
    Files.deleteIfExists(path);
  }

  /** Adds rows at the end (filed under their nearest list once the index is built). */
  private void append(VecbenchHost.Rows rows) {
    if (rows.d != d) throw new IllegalArgumentException("rows of " + rows.d + " dimensions, the index has " + d);
    int from = n;
    grow(n + rows.n);
    System.arraycopy(rows.ids, 0, ids, from, rows.n);
    System.arraycopy(rows.vectors, 0, vectors, from * d, rows.n * d);
    Arrays.fill(live, from, from + rows.n, true);
    for (Map.Entry<String, int[]> a : rows.attrs.entrySet()) {
      int[] col = attrs.get(a.getKey());
      if (col == null || col.length < ids.length) {
        // A column seen first now starts with zeros for the rows before it.
        col = col == null ? new int[ids.length] : Arrays.copyOf(col, ids.length);
        attrs.put(a.getKey(), col);
      }
      System.arraycopy(a.getValue(), 0, col, from, rows.n);
    }
    n += rows.n;
    if (centroids != null) for (int i = from; i < n; i++) file(i, nearestList(vectors, i * d));
  }

  /** Room for `need` rows in every array (doubling). */
  private void grow(int need) {
    if (need <= ids.length) return;
    int cap = Math.max(need, Math.max(16, 2 * ids.length));
    ids = Arrays.copyOf(ids, cap);
    vectors = Arrays.copyOf(vectors, cap * d);
    live = Arrays.copyOf(live, cap);
    assign = Arrays.copyOf(assign, cap);
    for (Map.Entry<String, int[]> a : attrs.entrySet()) a.setValue(Arrays.copyOf(a.getValue(), cap));
  }

  /** Files row i under list l. */
  private void file(int i, int l) {
    assign[i] = l;
    if (sizes[l] == members[l].length) members[l] = Arrays.copyOf(members[l], Math.max(8, 2 * members[l].length));
    members[l][sizes[l]++] = i;
  }

  /** Higher is closer: minus the squared distance for l2, the inner product otherwise. */
  private float score(float[] x, int at, float[] q) {
    float s = 0;
    if (l2) {
      for (int j = 0; j < d; j++) {
        float t = x[at + j] - q[j];
        s -= t * t;
      }
    } else {
      for (int j = 0; j < d; j++) s += x[at + j] * q[j];
    }
    return s;
  }

  /** The list whose centroid is closest to the vector at x[at..at+d) (the first of equals). */
  private int nearestList(float[] x, int at) {
    float[] v = Arrays.copyOfRange(x, at, at + d);
    int best = 0;
    float bestScore = Float.NEGATIVE_INFINITY;
    for (int c = 0; c < nc; c++) {
      float s = score(centroids, c * d, v);
      if (s > bestScore) {
        best = c;
        bestScore = s;
      }
    }
    return best;
  }

  @Override
  public void ingest(VecbenchHost.Rows rows) { // REPLACE: add the rows to the engine
    append(rows);
  }

  @Override
  public void build() throws IOException { // REPLACE: build the engine's index
    if (n == 0) throw new IllegalStateException("build with no rows: nothing to take centroids from");
    int stride = Math.max(1, n / lists);
    nc = Math.min(lists, (n + stride - 1) / stride);
    centroids = new float[nc * d];
    for (int c = 0; c < nc; c++) System.arraycopy(vectors, c * stride * d, centroids, c * d, d);
    fileAll(false);
    save();
  }

  /** Files every row under its nearest list (build), or under the list it was saved in (reopen). */
  private void fileAll(boolean saved) {
    members = new int[nc][];
    sizes = new int[nc];
    for (int c = 0; c < nc; c++) members[c] = new int[0];
    for (int i = 0; i < n; i++) file(i, saved ? assign[i] : nearestList(vectors, i * d));
  }

  @Override
  public void knobs(Map<String, Object> knobs) {
    int next = lists;
    for (Map.Entry<String, Object> e : knobs.entrySet()) {
      if (!KNOB.equals(e.getKey())) throw new VecbenchHost.UserError("unknown knob \"" + e.getKey() + "\"; known knobs: " + KNOB);
      Object v = e.getValue();
      boolean whole = (v instanceof Long || v instanceof Integer) && ((Number) v).longValue() >= 1 && ((Number) v).longValue() <= lists;
      if (!whole)
        throw new VecbenchHost.UserError(
            "knob " + KNOB + " must be an integer 1.." + lists + " (index.lists), got " + VecbenchHost.Json.write(v));
      next = ((Number) v).intValue();
    }
    probes = next;
  }

  /** vecbench's filter (eq; range gte <= v < lt; and) as a test of a row. */
  private IntPredicate filterOf(Map<String, Object> f) {
    Object op = f.get("op");
    if ("and".equals(op)) {
      List<IntPredicate> parts = new ArrayList<>();
      Object args = f.get("args");
      if (args instanceof List) for (Object a : (List<?>) args) parts.add(filterOf(VecbenchHost.objectOrNull(a, "filter")));
      return (row) -> {
        for (IntPredicate p : parts) if (!p.test(row)) return false;
        return true;
      };
    }
    Object field = f.get("field");
    int[] col = attrs.get(field);
    if (col == null) throw new VecbenchHost.UserError("the filter names " + VecbenchHost.Json.write(field) + ", an attribute the index was not given");
    if ("eq".equals(op)) {
      double v = ((Number) f.get("value")).doubleValue();
      return (row) -> col[row] == v;
    }
    if ("range".equals(op)) {
      double gte = ((Number) f.get("gte")).doubleValue();
      double lt = ((Number) f.get("lt")).doubleValue();
      return (row) -> col[row] >= gte && col[row] < lt;
    }
    throw new VecbenchHost.UserError("filter op " + VecbenchHost.Json.write(op) + " is not one vecbench sends");
  }

  /** The centroids of the `probe` nearest lists (the first of equals first). */
  private int[] probed(float[] q, int probe) {
    Integer[] order = new Integer[nc];
    float[] s = new float[nc];
    for (int c = 0; c < nc; c++) {
      order[c] = c;
      s[c] = score(centroids, c * d, q);
    }
    Arrays.sort(order, (a, b) -> s[a] != s[b] ? Float.compare(s[b], s[a]) : Integer.compare(a, b));
    int[] out = new int[Math.min(probe, nc)];
    for (int i = 0; i < out.length; i++) out[i] = order[i];
    return out;
  }

  /**
   * The search itself, read-only: the best k live rows of the probed lists that pass the filter,
   * best first (equal scores: the earlier row first). scanned[0], when given, counts the rows scored.
   */
  private int[] scan(float[] q, int k, Map<String, Object> filter, int probe, long[] scanned) {
    if (centroids == null) throw new IllegalStateException("search before build: no lists yet");
    IntPredicate pass = filter == null ? null : filterOf(filter);
    // A bounded heap of row numbers, the worst at the root.
    int[] heap = new int[Math.max(k, 1)];
    float[] heapScore = new float[heap.length];
    int size = 0;
    long count = 0;
    for (int l : probed(q, probe)) {
      int[] rows = members[l];
      for (int m = 0, end = sizes[l]; m < end; m++) {
        int i = rows[m];
        if (!live[i] || (pass != null && !pass.test(i))) continue;
        count++;
        float s = score(vectors, i * d, q);
        if (size < k) {
          heap[size] = i;
          heapScore[size] = s;
          up(heap, heapScore, size++);
        } else if (k > 0 && better(s, i, heapScore[0], heap[0])) {
          heap[0] = i;
          heapScore[0] = s;
          down(heap, heapScore, size);
        }
      }
    }
    if (scanned != null) scanned[0] = count;
    int[] out = new int[size];
    for (int r = size - 1; r >= 0; r--) {
      out[r] = ids[heap[0]];
      heap[0] = heap[r];
      heapScore[0] = heapScore[r];
      down(heap, heapScore, r);
    }
    return out;
  }

  /** Row a (score sa) ranks before row b (score sb). */
  private static boolean better(float sa, int a, float sb, int b) {
    return sa > sb || (sa == sb && a < b);
  }

  private static void up(int[] h, float[] s, int i) {
    while (i > 0) {
      int p = (i - 1) / 2;
      if (!better(s[p], h[p], s[i], h[i])) return;
      swap(h, s, i, p);
      i = p;
    }
  }

  private static void down(int[] h, float[] s, int size) {
    int i = 0;
    for (;;) {
      int l = 2 * i + 1;
      int r = l + 1;
      int worst = i;
      if (l < size && better(s[worst], h[worst], s[l], h[l])) worst = l;
      if (r < size && better(s[worst], h[worst], s[r], h[r])) worst = r;
      if (worst == i) return;
      swap(h, s, i, worst);
      i = worst;
    }
  }

  private static void swap(int[] h, float[] s, int a, int b) {
    int t = h[a];
    h[a] = h[b];
    h[b] = t;
    float u = s[a];
    s[a] = s[b];
    s[b] = u;
  }

  @Override
  public int[] search(float[] vector, int k, Map<String, Object> filter) { // REPLACE: the engine's search, ids best first
    return scan(vector, k, filter, probes, null);
  }

  @Override
  public String explain(float[] vector, int k, Map<String, Object> filter) {
    int probe = probes;
    long[] scanned = new long[1];
    scan(vector, k, filter, probe, scanned);
    String label = probe >= nc ? "exact scan" : "scan of the " + probe + " nearest lists";
    return "strategy: " + label + (filter == null ? "" : " + filter") + " (observed)\n"
        + "probes=" + probe + " of " + lists + " lists; " + scanned[0] + " rows scored";
  }

  @Override
  public void insert(VecbenchHost.Rows rows) throws IOException {
    append(rows);
    save();
  }

  @Override
  public void upsert(VecbenchHost.Rows rows) throws IOException {
    markDeleted(rows.ids);
    insert(rows);
  }

  @Override
  public void delete(int[] gone) throws IOException {
    markDeleted(gone);
    save();
  }

  private void markDeleted(int[] gone) {
    int[] sorted = gone.clone();
    Arrays.sort(sorted);
    for (int i = 0; i < n; i++) if (live[i] && Arrays.binarySearch(sorted, ids[i]) >= 0) live[i] = false;
  }

  @Override
  public long diskBytes() throws IOException {
    return Files.exists(path) ? Files.size(path) : 0;
  }

  // ---- the toy's own file (REPLACE: an engine saves its index itself) ----
  // Little-endian: MAGIC, d, n, nc, the attribute names (count, then each as a length and UTF-8
  // bytes), then ids, vectors, live (one byte a row), centroids, assign and each attribute column.

  /** Writes the whole index to a new file, then moves it over the old one. */
  private void save() throws IOException {
    Path tmp = path.resolveSibling(FILE + ".tmp");
    try (Out out = new Out(FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE))) {
      out.putInt(MAGIC);
      out.putInt(d);
      out.putInt(n);
      out.putInt(nc);
      out.putInt(attrs.size());
      for (String a : attrs.keySet()) {
        byte[] name = a.getBytes(StandardCharsets.UTF_8);
        out.putInt(name.length);
        for (byte x : name) out.room(1).put(x);
      }
      for (int i = 0; i < n; i++) out.putInt(ids[i]);
      for (int i = 0; i < n * d; i++) out.putFloat(vectors[i]);
      for (int i = 0; i < n; i++) out.room(1).put((byte) (live[i] ? 1 : 0));
      for (int i = 0; i < nc * d; i++) out.putFloat(centroids[i]);
      for (int i = 0; i < n; i++) out.putInt(assign[i]);
      for (int[] col : attrs.values()) for (int i = 0; i < n; i++) out.putInt(col[i]);
    }
    Files.move(tmp, path, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }

  /** Reads what save() wrote (reopen). */
  private void load() throws IOException {
    try (In in = new In(FileChannel.open(path, StandardOpenOption.READ))) {
      if (in.getInt() != MAGIC) throw new VecbenchHost.UserError(path + " is not an index this host wrote");
      int fileD = in.getInt();
      if (fileD != d) throw new VecbenchHost.UserError(path + " holds vectors of " + fileD + " dimensions, the dataset has " + d);
      n = in.getInt();
      nc = in.getInt();
      List<String> names = new ArrayList<>();
      for (int a = in.getInt(); a > 0; a--) {
        byte[] name = new byte[in.getInt()];
        for (int j = 0; j < name.length; j++) name[j] = in.need(1).get();
        names.add(new String(name, StandardCharsets.UTF_8));
      }
      ids = new int[n];
      vectors = new float[n * d];
      live = new boolean[n];
      centroids = new float[nc * d];
      assign = new int[n];
      for (int i = 0; i < n; i++) ids[i] = in.getInt();
      for (int i = 0; i < n * d; i++) vectors[i] = in.getFloat();
      for (int i = 0; i < n; i++) live[i] = in.need(1).get() != 0;
      for (int i = 0; i < nc * d; i++) centroids[i] = in.getFloat();
      for (int i = 0; i < n; i++) assign[i] = in.getInt();
      attrs.clear();
      for (String a : names) {
        int[] col = new int[n];
        for (int i = 0; i < n; i++) col[i] = in.getInt();
        attrs.put(a, col);
      }
    }
    fileAll(true);
  }

  /** A file written through one buffer of 1 MiB. */
  private static final class Out implements AutoCloseable {
    private final FileChannel ch;
    private final ByteBuffer b = ByteBuffer.allocate(1 << 20).order(ByteOrder.LITTLE_ENDIAN);

    Out(FileChannel ch) {
      this.ch = ch;
    }

    /** The buffer, with room for `bytes` more. */
    ByteBuffer room(int bytes) throws IOException {
      if (b.remaining() < bytes) flush();
      return b;
    }

    void putInt(int v) throws IOException {
      room(4).putInt(v);
    }

    void putFloat(float v) throws IOException {
      room(4).putFloat(v);
    }

    private void flush() throws IOException {
      b.flip();
      while (b.hasRemaining()) ch.write(b);
      b.clear();
    }

    @Override
    public void close() throws IOException {
      try {
        flush();
        ch.force(false);
      } finally {
        ch.close();
      }
    }
  }

  /** A file read through one buffer of 1 MiB. */
  private static final class In implements AutoCloseable {
    private final FileChannel ch;
    private final ByteBuffer b = ByteBuffer.allocate(1 << 20).order(ByteOrder.LITTLE_ENDIAN);

    In(FileChannel ch) {
      this.ch = ch;
      b.limit(0);
    }

    /** The buffer, holding at least `bytes` more (refilled from the file). */
    ByteBuffer need(int bytes) throws IOException {
      if (b.remaining() >= bytes) return b;
      b.compact();
      while (b.position() < bytes) if (ch.read(b) < 0) throw new EOFException("the index file ends early");
      b.flip();
      return b;
    }

    int getInt() throws IOException {
      return need(4).getInt();
    }

    float getFloat() throws IOException {
      return need(4).getFloat();
    }

    @Override
    public void close() throws IOException {
      ch.close();
    }
  }

  public static void main(String[] args) {
    VecbenchHost.serve(new TemplateHost());
  }
}
