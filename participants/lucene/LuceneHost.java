// Apache Lucene (lucene-core 9.12.3): the HNSW vector search inside Elasticsearch and OpenSearch,
// in-process in a JVM, driven over vecbench's participant protocol by the Java reference host
// (src/sdk/java/VecbenchHost.java). Settings are checked by the TypeScript adapter (adapter.ts,
// which also starts this JVM); knobs here. provision.sh compiles this file and the reference host.
//
// One index per work directory (work_dir/lucene, an MMapDirectory). A row is one document: the
// vector (KnnFloatVectorField), the row id as a term (StringField, what deletes and upserts
// name) and as a doc value (what hits are mapped back through: doc numbers change at merges),
// and each attribute as an IntField (points and doc values), which the filters query.
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.lucene.codecs.KnnVectorsFormat;
import org.apache.lucene.codecs.KnnVectorsReader;
import org.apache.lucene.codecs.KnnVectorsWriter;
import org.apache.lucene.codecs.lucene912.Lucene912Codec;
import org.apache.lucene.codecs.lucene99.Lucene99HnswVectorsFormat;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.IntField;
import org.apache.lucene.document.KnnFloatVectorField;
import org.apache.lucene.document.NumericDocValuesField;
import org.apache.lucene.document.StringField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.LeafReader;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.NumericDocValues;
import org.apache.lucene.index.QueryTimeout;
import org.apache.lucene.index.ReaderUtil;
import org.apache.lucene.index.SegmentReadState;
import org.apache.lucene.index.SegmentWriteState;
import org.apache.lucene.index.Term;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.search.FieldExistsQuery;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.KnnFloatVectorQuery;
import org.apache.lucene.search.MatchAllDocsQuery;
import org.apache.lucene.search.MatchNoDocsQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.ScoreMode;
import org.apache.lucene.search.Scorer;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.search.TotalHits;
import org.apache.lucene.search.Weight;
import org.apache.lucene.search.knn.KnnCollectorManager;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.MMapDirectory;
import org.apache.lucene.util.Bits;
import org.apache.lucene.util.Version;

public final class LuceneHost extends VecbenchHost.Engine {
  static final String VECTOR = "vec";
  /** The row id as a term: deleteDocuments / updateDocument name rows by it. */
  static final String ID_TERM = "id";
  /** The row id as a doc value: hits (doc numbers) are mapped back through it. */
  static final String ID_VALUE = "id_dv";
  /** Lucene's HNSW format allows 1024 dimensions; Elasticsearch raises it to 4096 as here. */
  static final int MAX_DIMENSIONS = 4096;

  private VecbenchHost.Dataset dataset;
  private Path path;
  private Directory dir;
  private IndexWriter writer;
  private VectorSimilarityFunction similarity;
  private int maxConn;
  private int beamWidth;
  private boolean mergeToOne;
  private double ramBufferMb;
  /** The knob: KnnFloatVectorQuery's k (the graph search's candidate list, HNSW ef); 0 = k. */
  private volatile int candidates;
  /** What searches read; replaced only while no search runs (the reference host's rule). */
  private volatile Snapshot snapshot;
  /** Row ids of each segment's documents by doc number, kept across refreshes (deletes do not
   * change a segment's core, so only new segments are read). */
  private final Map<Object, int[]> idsByCore = new HashMap<>();

  /** A reader, its searcher and, per segment, the row id of every doc number. */
  private static final class Snapshot {
    final DirectoryReader reader;
    final IndexSearcher searcher;
    final List<LeafReaderContext> leaves;
    final int[][] ids;

    Snapshot(DirectoryReader reader, int[][] ids) {
      this.reader = reader;
      this.searcher = new IndexSearcher(reader);
      this.leaves = reader.leaves();
      this.ids = ids;
    }

    int idOf(int doc) {
      int leaf = ReaderUtil.subIndex(doc, leaves);
      return ids[leaf][doc - leaves.get(leaf).docBase];
    }
  }

  /** Lucene99HnswVectorsFormat with the dimension limit raised. It writes under the same name,
   * so any reader (a reopen, Luke) reads the files with the standard format. */
  private static final class WideHnswFormat extends KnnVectorsFormat {
    private final KnnVectorsFormat in;

    WideHnswFormat(int maxConn, int beamWidth) {
      super("Lucene99HnswVectorsFormat");
      this.in = new Lucene99HnswVectorsFormat(maxConn, beamWidth);
    }

    @Override
    public KnnVectorsWriter fieldsWriter(SegmentWriteState state) throws IOException {
      return in.fieldsWriter(state);
    }

    @Override
    public KnnVectorsReader fieldsReader(SegmentReadState state) throws IOException {
      return in.fieldsReader(state);
    }

    @Override
    public int getMaxDimensions(String fieldName) {
      return MAX_DIMENSIONS;
    }

    @Override
    public String toString() {
      return in.toString();
    }
  }

  @Override
  public String name() {
    return "Apache Lucene";
  }

  @Override
  public String version() {
    return "Lucene " + Version.LATEST;
  }

  private static Object setting(Map<String, Object> settings, String key, Object fallback) {
    Object v = settings == null ? null : settings.get(key);
    return v == null ? fallback : v;
  }

  @Override
  public void open(VecbenchHost.Dataset ds, Map<String, Object> settings, String workDir, int maxConcurrency, boolean reopen) throws IOException {
    dataset = ds;
    maxConn = ((Number) setting(settings, "max_conn", 16)).intValue();
    beamWidth = ((Number) setting(settings, "beam_width", 200)).intValue();
    mergeToOne = (Boolean) setting(settings, "merge_to_one_segment", true);
    ramBufferMb = ((Number) setting(settings, "ram_buffer_mb", 256)).doubleValue();
    if (ds.d > MAX_DIMENSIONS) throw new VecbenchHost.UserError("Lucene's HNSW takes at most " + MAX_DIMENSIONS + " dimensions; this dataset has " + ds.d);
    switch (ds.metric) {
      case "cosine": // unit vectors: the inner product ranks them
        similarity = VectorSimilarityFunction.DOT_PRODUCT;
        break;
      case "ip": // maybe not unit: DOT_PRODUCT assumes unit vectors (its score clamps at -1)
        similarity = VectorSimilarityFunction.MAXIMUM_INNER_PRODUCT;
        break;
      case "l2":
        similarity = VectorSimilarityFunction.EUCLIDEAN;
        break;
      default:
        throw new VecbenchHost.UserError("unknown metric " + ds.metric);
    }
    path = Paths.get(workDir, "lucene");
    if (reopen) {
      dir = new MMapDirectory(path);
      if (!DirectoryReader.indexExists(dir)) throw new VecbenchHost.UserError("no Lucene index in " + path + " to reopen");
      // Read-only until a write arrives: the writer (and its lock) is opened then.
      refresh();
      return;
    }
    if (Files.exists(path)) {
      try (Stream<Path> s = Files.walk(path)) {
        for (Path p : s.sorted(Comparator.reverseOrder()).toArray(Path[]::new)) Files.delete(p);
      }
    }
    Files.createDirectories(path);
    dir = new MMapDirectory(path);
    writer = new IndexWriter(dir, config(IndexWriterConfig.OpenMode.CREATE));
  }

  private IndexWriterConfig config(IndexWriterConfig.OpenMode mode) {
    KnnVectorsFormat format = new WideHnswFormat(maxConn, beamWidth);
    Lucene912Codec codec = new Lucene912Codec() {
      @Override
      public KnnVectorsFormat getKnnVectorsFormatForField(String field) {
        return format;
      }
    };
    return new IndexWriterConfig().setCodec(codec).setOpenMode(mode).setRAMBufferSizeMB(ramBufferMb);
  }

  /** The writer, opened on the existing index after a reopen (the first write). */
  private IndexWriter writer() throws IOException {
    if (writer == null) {
      writer = new IndexWriter(dir, config(IndexWriterConfig.OpenMode.APPEND));
      // From now on the searcher reads the writer's near-real-time view.
      Snapshot old = snapshot;
      snapshot = null;
      refresh();
      if (old != null) old.reader.close();
    }
    return writer;
  }

  /** Opens the latest view (the writer's, flushed but not committed, when there is a writer). */
  private void refresh() throws IOException {
    Snapshot old = snapshot;
    DirectoryReader next;
    if (old == null) next = writer != null ? DirectoryReader.open(writer) : DirectoryReader.open(dir);
    else next = writer != null ? DirectoryReader.openIfChanged(old.reader, writer) : DirectoryReader.openIfChanged(old.reader);
    if (next == null) return;
    snapshot = new Snapshot(next, idsOf(next));
    if (old != null) old.reader.close();
  }

  private int[][] idsOf(DirectoryReader reader) throws IOException {
    List<LeafReaderContext> leaves = reader.leaves();
    int[][] out = new int[leaves.size()][];
    Map<Object, int[]> seen = new HashMap<>();
    for (int i = 0; i < leaves.size(); i++) {
      LeafReader leaf = leaves.get(i).reader();
      IndexReader.CacheHelper helper = leaf.getCoreCacheHelper();
      Object key = helper == null ? null : helper.getKey();
      int[] ids = key == null ? null : idsByCore.get(key);
      if (ids == null) {
        ids = new int[leaf.maxDoc()];
        Arrays.fill(ids, -1);
        NumericDocValues dv = leaf.getNumericDocValues(ID_VALUE);
        if (dv != null) for (int d = dv.nextDoc(); d != DocIdSetIterator.NO_MORE_DOCS; d = dv.nextDoc()) ids[d] = (int) dv.longValue();
      }
      if (key != null) seen.put(key, ids);
      out[i] = ids;
    }
    idsByCore.clear();
    idsByCore.putAll(seen);
    return out;
  }

  private Document document(VecbenchHost.Rows rows, int i) {
    Document doc = new Document();
    int id = rows.ids[i];
    doc.add(new KnnFloatVectorField(VECTOR, rows.vector(i), similarity));
    doc.add(new StringField(ID_TERM, Integer.toString(id), Field.Store.NO));
    doc.add(new NumericDocValuesField(ID_VALUE, id));
    for (Map.Entry<String, int[]> a : rows.attrs.entrySet()) doc.add(new IntField(a.getKey(), a.getValue()[i], Field.Store.NO));
    return doc;
  }

  @Override
  public void ingest(VecbenchHost.Rows rows) throws IOException {
    IndexWriter w = writer();
    List<Document> docs = new ArrayList<>(rows.n);
    for (int i = 0; i < rows.n; i++) docs.add(document(rows, i));
    w.addDocuments(docs);
  }

  @Override
  public void build() throws IOException {
    IndexWriter w = writer();
    if (mergeToOne) w.forceMerge(1);
    w.commit();
    refresh();
  }

  @Override
  public void insert(VecbenchHost.Rows rows) throws IOException {
    ingest(rows);
    refresh();
  }

  @Override
  public void upsert(VecbenchHost.Rows rows) throws IOException {
    IndexWriter w = writer();
    for (int i = 0; i < rows.n; i++) w.updateDocument(new Term(ID_TERM, Integer.toString(rows.ids[i])), document(rows, i));
    refresh();
  }

  @Override
  public void delete(int[] ids) throws IOException {
    Term[] terms = new Term[ids.length];
    for (int i = 0; i < ids.length; i++) terms[i] = new Term(ID_TERM, Integer.toString(ids[i]));
    writer().deleteDocuments(terms);
    refresh();
  }

  @Override
  public void compact() throws IOException {
    IndexWriter w = writer();
    w.forceMerge(1);
    w.commit();
    refresh();
  }

  @Override
  public long diskBytes() throws IOException {
    long total = 0;
    try (Stream<Path> s = Files.walk(path)) {
      for (Path p : (Iterable<Path>) s::iterator) {
        try {
          if (Files.isRegularFile(p)) total += Files.size(p);
        } catch (NoSuchFileException e) {
          // removed by a merge while counting
        }
      }
    } catch (UncheckedIOException e) {
      if (!(e.getCause() instanceof NoSuchFileException)) throw e;
    }
    return total;
  }

  @Override
  public void knobs(Map<String, Object> knobs) {
    // Names and values arrive checked against adapter.ts's knobs (the harness checks them).
    Object v = knobs.get("candidates");
    if (v != null) candidates = ((Number) v).intValue();
  }

  /** vecbench's filter (eq, range gte <= v < lt, and) as a Lucene query over the IntFields. */
  static Query filterQuery(Map<String, Object> f) {
    Object op = f.get("op");
    if ("and".equals(op)) {
      Object args = f.get("args");
      if (!(args instanceof List) || ((List<?>) args).isEmpty()) return new MatchAllDocsQuery();
      BooleanQuery.Builder b = new BooleanQuery.Builder();
      for (Object a : (List<?>) args) b.add(filterQuery(VecbenchHost.objectOrNull(a, "filter")), BooleanClause.Occur.FILTER);
      return b.build();
    }
    Object field = f.get("field");
    if (!VecbenchHost.ATTRIBUTES.contains(field)) throw new VecbenchHost.UserError("unknown filter field " + VecbenchHost.Json.write(field));
    String name = (String) field;
    if ("eq".equals(op)) {
      double v = ((Number) f.get("value")).doubleValue();
      if (v != Math.rint(v) || v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) return new MatchNoDocsQuery("not an int32");
      return IntField.newExactQuery(name, (int) v);
    }
    if ("range".equals(op)) {
      // gte <= v < lt over integers: [ceil(gte), ceil(lt) - 1], both ends inclusive for Lucene.
      long lo = (long) Math.max(Math.ceil(((Number) f.get("gte")).doubleValue()), Integer.MIN_VALUE);
      long hi = (long) Math.min(Math.ceil(((Number) f.get("lt")).doubleValue()) - 1, Integer.MAX_VALUE);
      if (lo > hi) return new MatchNoDocsQuery("empty range");
      return IntField.newRangeQuery(name, (int) lo, (int) hi);
    }
    throw new VecbenchHost.UserError("filter op " + VecbenchHost.Json.write(op) + " is not one vecbench sends");
  }

  private Snapshot current() {
    Snapshot s = snapshot;
    if (s == null) throw new IllegalStateException("search before build: no reader is open");
    return s;
  }

  /** The graph search's candidate list for a request of k: the knob, never below k. */
  private int candidatesFor(int k) {
    return Math.max(k, candidates);
  }

  private int[] idsOf(Snapshot s, TopDocs td) {
    int[] out = new int[td.scoreDocs.length];
    for (int i = 0; i < out.length; i++) out[i] = s.idOf(td.scoreDocs[i].doc);
    return out;
  }

  @Override
  public int[] search(float[] vector, int k, Map<String, Object> filter) throws IOException {
    Snapshot s = current();
    Query q = new KnnFloatVectorQuery(VECTOR, vector, candidatesFor(k), filter == null ? null : filterQuery(filter));
    return idsOf(s, s.searcher.search(q, k));
  }

  /** Counts what Lucene did per segment: exact searches, graph walks, walks that gave up. */
  private static final class CountingQuery extends KnnFloatVectorQuery {
    int exact;
    int walks;
    int fallbacks;
    long visited;

    CountingQuery(String field, float[] target, int k, Query filter) {
      super(field, target, k, filter);
    }

    @Override
    protected TopDocs exactSearch(LeafReaderContext c, DocIdSetIterator it, QueryTimeout qt) throws IOException {
      exact++;
      return super.exactSearch(c, it, qt);
    }

    @Override
    protected TopDocs approximateSearch(LeafReaderContext c, Bits accept, int limit, KnnCollectorManager m) throws IOException {
      walks++;
      TopDocs td = super.approximateSearch(c, accept, limit, m);
      visited += td.totalHits.value;
      if (td.totalHits.relation != TotalHits.Relation.EQUAL_TO) fallbacks++;
      return td;
    }
  }

  /**
   * Lucene shows no plan: the strategy is declared from its documented rule
   * (AbstractKnnVectorQuery, per segment), fed with the filter's live matches in each segment.
   * Unfiltered: the graph walk. Filtered: when a segment's matches are no more than the
   * candidates, an exact scan of them; otherwise the graph walk checking the filter at each
   * node, which gives up and scans the matches exactly when it visits more nodes than there are
   * matches. The plan also reports what this query did (counted in Lucene's own hooks).
   */
  @Override
  public String explain(float[] vector, int k, Map<String, Object> filter) throws IOException {
    Snapshot s = current();
    int cand = candidatesFor(k);
    Query fq = filter == null ? null : filterQuery(filter);
    List<String> lines = new ArrayList<>();
    String label;
    if (fq == null) label = "graph walk";
    else {
      // The accept set Lucene builds: the filter, docs with a vector, live docs.
      Query accept = new BooleanQuery.Builder().add(fq, BooleanClause.Occur.FILTER).add(new FieldExistsQuery(VECTOR), BooleanClause.Occur.FILTER).build();
      Weight w = s.searcher.createWeight(s.searcher.rewrite(accept), ScoreMode.COMPLETE_NO_SCORES, 1f);
      int exactSegments = 0;
      int walkSegments = 0;
      long total = 0;
      List<String> perSegment = new ArrayList<>();
      for (LeafReaderContext leaf : s.leaves) {
        long matches = 0;
        Scorer sc = w.scorer(leaf);
        if (sc != null) {
          Bits live = leaf.reader().getLiveDocs();
          DocIdSetIterator it = sc.iterator();
          for (int d = it.nextDoc(); d != DocIdSetIterator.NO_MORE_DOCS; d = it.nextDoc()) if (live == null || live.get(d)) matches++;
        }
        total += matches;
        if (matches == 0) perSegment.add("0 (nothing to search)");
        else if (matches <= cand) {
          exactSegments++;
          perSegment.add(matches + " (exact)");
        } else {
          walkSegments++;
          perSegment.add(matches + " (walk)");
        }
      }
      if (walkSegments == 0) label = "exact scan of filter matches";
      else if (exactSegments == 0) label = "filtered graph walk";
      else label = "filtered graph walk or exact scan, per segment";
      lines.add("filter matches: " + total + " live docs; per segment: " + String.join(", ", perSegment));
      lines.add("rule: matches <= candidates (" + cand + "): exact scan of them; else a graph walk with the filter that scans them exactly once it visits more than their number");
    }
    CountingQuery q = new CountingQuery(VECTOR, vector, cand, fq);
    s.searcher.search(q, k);
    lines.add("candidates: " + cand + " (KnnFloatVectorQuery k, the graph search's ef), results cut to k = " + k);
    lines.add("segments: " + s.leaves.size() + ", live docs: " + s.reader.numDocs() + " of " + s.reader.maxDoc());
    lines.add("this query, per segment: " + q.walks + " graph walk(s) visiting " + q.visited + " nodes, " + q.fallbacks + " gave up, "
        + q.exact + " exact scan(s)");
    lines.add("declared from Lucene's documented rule (AbstractKnnVectorQuery), not read from a planner");
    return "strategy: " + label + "\n" + String.join("\n", lines);
  }

  @Override
  public void close() throws IOException {
    Snapshot s = snapshot;
    snapshot = null;
    if (s != null) s.reader.close();
    if (writer != null) {
      writer.commit();
      writer.close();
      writer = null;
    }
    if (dir != null) dir.close();
  }

  public static void main(String[] args) {
    VecbenchHost.serve(new LuceneHost());
  }
}
