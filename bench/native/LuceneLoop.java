// A plain Java loop over Lucene (lucene-core, the engine's own language), the reference for
// vecbench's lucene participant (bench/harness-overhead.ts): it opens a copy of the very index
// the participant built (an MMapDirectory; the participant writes under the standard HNSW
// format's name, so the default codec reads it), maps hits to row ids through the same doc
// values field, and asks the participant's query one at a time on one thread:
// KnnFloatVectorQuery over the vector field with max(k, EF) candidates, top k, no filter, timed
// with System.nanoTime. Compiled and run against the jar the participant's provision installed,
// with the JVM flags its host gets, so both sides run the same Lucene.
//
//   java -cp lucene-core.jar:DIR_OF_THIS_CLASS LuceneLoop INDEX_DIR DIR NQ D K
//        [--adapter lucene HOST_DIR candidates DATASET METRIC]
//
// DIR holds queries.f32 (NQ x D) and gt.i32 (NQ x K, the exact ids), raw little-endian. Each
// stdin line "EF PASSES [MODE]" runs PASSES timed passes over the queries and prints one JSON
// line (per-pass QPS by wall time and by this thread's CPU time, mean latency, recall@K), as
// hnswlib_loop.py does. With --adapter (the participant's compiled host classes on the
// classpath), MODE 'adapter' times the participant's own engine class, reopened on HOST_DIR (a
// copy of its work directory), query by query in turn with the plain search in this JVM, as
// its host calls it (a copy of the query, then search), and adds the ratio of the plain
// search's time to the engine's per pass: the host's path with the JVM held equal, as
// loop-common.ts does for the JavaScript engines.
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Locale;
import java.util.Set;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.NumericDocValues;
import org.apache.lucene.index.ReaderUtil;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.KnnFloatVectorQuery;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.store.MMapDirectory;
import org.apache.lucene.util.Version;

public final class LuceneLoop {
  private static ByteBuffer read(String file, long bytes) throws IOException {
    byte[] b = Files.readAllBytes(Paths.get(file));
    if (b.length != bytes) throw new IOException(file + " holds " + b.length + " bytes, expected " + bytes);
    return ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
  }

  private static String list(double[] xs) {
    StringBuilder s = new StringBuilder("[");
    for (int i = 0; i < xs.length; i++) s.append(i == 0 ? "" : ",").append(String.format(Locale.ROOT, "%.6f", xs[i]));
    return s.append("]").toString();
  }

  /** The participant's query, plainly: KnnFloatVectorQuery with max(k, ef) candidates, top k,
   * hits mapped to row ids through the doc values read at open. */
  private static int[] plainSearch(IndexSearcher searcher, List<LeafReaderContext> leaves, int[][] ids, float[] query, int k, int ef)
      throws IOException {
    TopDocs td = searcher.search(new KnnFloatVectorQuery("vec", query, Math.max(k, ef)), k);
    int[] out = new int[td.scoreDocs.length];
    for (int j = 0; j < out.length; j++) {
      int doc = td.scoreDocs[j].doc, leaf = ReaderUtil.subIndex(doc, leaves);
      out[j] = ids[leaf][doc - leaves.get(leaf).docBase];
    }
    return out;
  }

  private static double recall(int[][] found, int[][] gt, int nq, int k) {
    long hits = 0;
    for (int i = 0; i < nq; i++) {
      Set<Integer> want = new HashSet<>();
      for (int g : gt[i]) want.add(g);
      for (int id : found[i]) if (want.contains(id)) hits++;
    }
    return (double) hits / ((double) nq * k);
  }

  public static void main(String[] args) throws Exception {
    boolean withHost = args.length == 11 && args[5].equals("--adapter");
    if (args.length != 5 && !withHost) {
      System.err.println("usage: LuceneLoop INDEX_DIR DIR NQ D K [--adapter lucene HOST_DIR candidates DATASET METRIC]");
      System.exit(2);
    }
    String dirPath = args[0], data = args[1];
    int nq = Integer.parseInt(args[2]), d = Integer.parseInt(args[3]), k = Integer.parseInt(args[4]);
    ByteBuffer qb = read(data + "/queries.f32", 4L * nq * d), gb = read(data + "/gt.i32", 4L * nq * k);
    float[][] queries = new float[nq][d];
    for (int i = 0; i < nq; i++) for (int j = 0; j < d; j++) queries[i][j] = qb.getFloat();
    int[][] gt = new int[nq][k];
    for (int i = 0; i < nq; i++) for (int j = 0; j < k; j++) gt[i][j] = gb.getInt();

    long t0 = System.nanoTime();
    DirectoryReader reader = DirectoryReader.open(new MMapDirectory(Paths.get(dirPath)));
    IndexSearcher searcher = new IndexSearcher(reader);
    List<LeafReaderContext> leaves = reader.leaves();
    int[][] ids = new int[leaves.size()][];
    for (int l = 0; l < leaves.size(); l++) {
      ids[l] = new int[leaves.get(l).reader().maxDoc()];
      NumericDocValues dv = leaves.get(l).reader().getNumericDocValues("id_dv");
      if (dv != null) for (int doc = dv.nextDoc(); doc != DocIdSetIterator.NO_MORE_DOCS; doc = dv.nextDoc()) ids[l][doc] = (int) dv.longValue();
    }
    LuceneHost host = null;
    if (withHost) {
      Map<String, Object> ds = new HashMap<>();
      ds.put("name", args[9]);
      ds.put("n", reader.maxDoc());
      ds.put("d", d);
      ds.put("metric", args[10]);
      host = new LuceneHost();
      host.open(new VecbenchHost.Dataset(ds), new HashMap<>(), args[7], 1, true);
    }
    System.out.printf(Locale.ROOT, "{\"ready\":true,\"build_s\":%.3f,\"version\":\"%s\"}%n", (System.nanoTime() - t0) / 1e9, Version.LATEST);
    System.out.flush();

    ThreadMXBean cpu = ManagementFactory.getThreadMXBean();
    int[][] found = new int[nq][];
    double[] lat = new double[nq];
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
    for (String line = in.readLine(); line != null; line = in.readLine()) {
      String[] parts = line.trim().split("\\s+");
      if (parts.length < 2) continue;
      int ef = Integer.parseInt(parts[0]), passes = Integer.parseInt(parts[1]);
      String mode = parts.length > 2 ? parts[2] : "raw";
      if (!mode.equals("raw") && !(mode.equals("adapter") && host != null))
        throw new IllegalArgumentException("no mode \"" + mode + "\" here (raw" + (host != null ? ", adapter" : "") + ")");
      double[] qps = new double[passes], cpuQps = new double[passes], meanMs = new double[passes];
      double[] ratio = new double[passes];
      if (host != null && mode.equals("adapter")) {
        host.knobs(Map.of("candidates", ef));
        for (int p = 0; p < passes; p++) {
          long own = 0, plain = 0;
          for (int i = 0; i < nq; i++) {
            for (int turn = 0; turn < 2; turn++) {
              boolean first = ((i + p) % 2 == 0) == (turn == 0);
              long t = System.nanoTime();
              if (first) {
                found[i] = host.search(Arrays.copyOfRange(queries[i], 0, d), k, null);
                lat[i] = (System.nanoTime() - t) / 1e6;
                own += System.nanoTime() - t;
              } else {
                plainSearch(searcher, leaves, ids, queries[i], k, ef);
                plain += System.nanoTime() - t;
              }
            }
          }
          qps[p] = nq / (own / 1e9);
          cpuQps[p] = Double.NaN;
          meanMs[p] = own / 1e6 / nq;
          ratio[p] = (double) plain / own;
        }
        System.out.printf(
            Locale.ROOT,
            "{\"ef\":%d,\"qps\":%s,\"cpu_qps\":null,\"mean_ms\":%s,\"recall\":%.6f,\"interleaved_ratio\":%s}%n",
            ef,
            list(qps),
            list(meanMs),
            recall(found, gt, nq, k),
            list(ratio));
        System.out.flush();
        continue;
      }
      for (int p = 0; p < passes; p++) {
        long cpu0 = cpu.getCurrentThreadCpuTime(), start = System.nanoTime();
        for (int i = 0; i < nq; i++) {
          long t = System.nanoTime();
          found[i] = plainSearch(searcher, leaves, ids, queries[i], k, ef);
          lat[i] = (System.nanoTime() - t) / 1e6;
        }
        double wall = (System.nanoTime() - start) / 1e9, used = (cpu.getCurrentThreadCpuTime() - cpu0) / 1e9;
        qps[p] = nq / wall;
        cpuQps[p] = nq / Math.max(used, 1e-9);
        double sum = 0;
        for (double x : lat) sum += x;
        meanMs[p] = sum / nq;
      }
      System.out.printf(
          Locale.ROOT,
          "{\"ef\":%d,\"qps\":%s,\"cpu_qps\":%s,\"mean_ms\":%s,\"recall\":%.6f}%n",
          ef,
          list(qps),
          list(cpuQps),
          list(meanMs),
          recall(found, gt, nq, k));
      System.out.flush();
    }
    reader.close();
  }
}
