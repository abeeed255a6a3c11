/* vecbench's faiss binding: a thin N-API layer over libfaiss (Debian's libfaiss-dev 1.7.3).
 *
 * One handle per index: IndexHNSWFlat, IndexIVFFlat, or IndexRefineFlat over an IndexIVFPQ.
 * Labels are positions (0, 1, 2... in insertion order, never reused) for every type; the
 * caller keeps the position -> row id table and passes it, with its attribute columns and the
 * alive flag per position, to each search, so that the filter is evaluated inside faiss's
 * search through an IDSelector (SearchParametersHNSW / SearchParametersIVF `sel`) and the
 * result comes back as row ids. Vectors arrive as Float32Array and are read in place.
 *
 * IndexRefineFlat::search refuses search parameters in 1.7.3, so for IVFPQ the refine step is
 * done here: the IVFPQ is searched (nprobe, selector) for k x k_factor candidates, which are
 * ranked again by exact distance to the vectors the IndexRefineFlat keeps. Adds to that index
 * go to its flat store and to the IVFPQ with explicit labels, so that removing labels from the
 * IVFPQ (which IndexRefineFlat does not offer) really removes them from the search.
 *
 * On disk (writeDisk, readDisk): an IVFPQ's lists go to a faiss OnDiskInvertedLists file and its
 * full vectors to a raw float32 file; readDisk maps both read-only, so the lists a query probes
 * and the vectors its refine step reads come through the page cache from those files. Such a
 * handle is the IndexIVFPQ alone (no IndexRefineFlat) and takes no writes.
 *
 * Threads: every call that may run OpenMP sets omp_set_num_threads first (per calling
 * thread): the caller's count for train and add, one for search and remove; OpenBLAS (used by
 * training and by assignment of large batches) gets the build's count. */
#include <node_api.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <omp.h>

#include <faiss/IndexFlat.h>
#include <faiss/IndexHNSW.h>
#include <faiss/IndexIVFFlat.h>
#include <faiss/IndexIVFPQ.h>
#include <faiss/IndexRefine.h>
#include <faiss/impl/IDSelector.h>
#include <faiss/index_io.h>
#include <faiss/invlists/OnDiskInvertedLists.h>
#include <faiss/utils/distances.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "napi_args.h"

using idx_t = faiss::Index::idx_t;

namespace {

using namespace vecbench_napi;

enum Kind { HNSW = 0, IVFFLAT = 1, IVFPQ = 2 };
const char* const KIND_NAMES[] = {"hnsw", "ivfflat", "ivfpq"};
constexpr int NCOLS = 6;

// A value that is not a handle fails with N-API's own message, as this binding always has.
constexpr Addon addon{"faiss addon", "faiss", false};

struct Handle {
  faiss::Index* index = nullptr;
  Kind kind = HNSW;
  /* readDisk: the full vectors, mapped read-only (rows x d floats); null otherwise. */
  const float* mapped = nullptr;
  size_t mappedRows = 0;
  size_t mappedBytes = 0;
  ~Handle() { release(); }
  void release() {
    delete index;
    index = nullptr;
    if (mapped) munmap(const_cast<float*>(mapped), mappedBytes);
    mapped = nullptr;
  }
  bool onDisk() const { return mapped != nullptr; }
};

/* OpenMP threads of this calling thread; with `blas`, OpenBLAS's too (a process-wide setting,
 * so only the build paths change it: searches run in several worker threads at once). */
void setThreads(int threads, bool blas) {
  omp_set_num_threads(threads);
  if (!blas) return;
  // The OpenBLAS faiss calls (Debian's libblas.so.3 alternative), when it is OpenBLAS.
  using SetFn = void (*)(int);
  static SetFn set = [] {
    void* lib = dlopen("libblas.so.3", RTLD_LAZY | RTLD_NOLOAD);
    return lib ? reinterpret_cast<SetFn>(dlsym(lib, "openblas_set_num_threads")) : nullptr;
  }();
  if (set) set(threads);
}

faiss::IndexIVF* ivfOf(const Handle* h) {
  faiss::Index* base = h->kind == IVFPQ && !h->onDisk() ? static_cast<faiss::IndexRefine*>(h->index)->base_index : h->index;
  return static_cast<faiss::IndexIVF*>(base);
}

/* The vectors argument of train and add: rows of the index's d, read in place; the row count. */
std::pair<const float*, idx_t> rowsOf(napi_env env, napi_value v, const Handle* h) {
  auto [x, len] = view<float>(env, v, napi_float32_array, "vectors");
  size_t d = h->index->d;
  if (len % d) fail("vectors length is not a multiple of d");
  return {x, (idx_t)(len / d)};
}

/* create(kind, d, innerProduct, M, efConstruction, nlist, pqM, pqNbits) */
napi_value Create(napi_env env, napi_callback_info info) {
  return addon.call(env, info, 8, 8, [&](const Args& a) {
    std::string kind = text(env, a[0], "kind");
    int d = (int)number(env, a[1], "d");
    bool ip = false;
    check(env, napi_get_value_bool(env, a[2], &ip));
    int M = (int)number(env, a[3], "M"), efc = (int)number(env, a[4], "efConstruction");
    size_t nlist = (size_t)number(env, a[5], "nlist");
    size_t pqM = (size_t)number(env, a[6], "pqM"), nbits = (size_t)number(env, a[7], "pqNbits");
    if (d < 1) fail("d must be positive");
    faiss::MetricType metric = ip ? faiss::METRIC_INNER_PRODUCT : faiss::METRIC_L2;
    auto h = std::make_unique<Handle>();
    if (kind == "hnsw") {
      auto* idx = new faiss::IndexHNSWFlat(d, M, metric);
      idx->hnsw.efConstruction = efc;
      h->index = idx;
      h->kind = HNSW;
    } else if (kind == "ivfflat" || kind == "ivfpq") {
      faiss::IndexFlat* quantizer = new faiss::IndexFlat(d, metric);
      if (kind == "ivfflat") {
        auto* idx = new faiss::IndexIVFFlat(quantizer, d, nlist, metric);
        idx->own_fields = true;
        h->index = idx;
        h->kind = IVFFLAT;
      } else {
        auto* pq = new faiss::IndexIVFPQ(quantizer, d, nlist, pqM, nbits, metric);
        pq->own_fields = true;
        auto* refine = new faiss::IndexRefineFlat(pq);
        refine->own_fields = true;
        h->index = refine;
        h->kind = IVFPQ;
      }
    } else {
      fail("unknown index kind " + kind);
    }
    return wrap(env, std::move(h));
  });
}

/* read(path): the index write() saved. */
napi_value Read(napi_env env, napi_callback_info info) {
  return addon.call(env, info, 1, 1, [&](const Args& a) {
    std::string path = text(env, a[0], "path");
    auto h = std::make_unique<Handle>();
    h->index = faiss::read_index(path.c_str());
    if (dynamic_cast<faiss::IndexHNSWFlat*>(h->index)) {
      h->kind = HNSW;
    } else if (dynamic_cast<faiss::IndexIVFFlat*>(h->index)) {
      h->kind = IVFFLAT;
    } else if (auto* r = dynamic_cast<faiss::IndexRefineFlat*>(h->index); r && dynamic_cast<faiss::IndexIVFPQ*>(r->base_index)) {
      h->kind = IVFPQ;
    } else {
      fail(path + " holds an index type this binding does not make");
    }
    return wrap(env, std::move(h));
  });
}

napi_value Write(napi_env env, napi_callback_info info) {
  return addon.onHandle<Handle>(env, info, 2, 2, [&](Handle* h, const Args& a) {
    faiss::write_index(h->index, text(env, a[1], "path").c_str());
    return undefined(env);
  });
}

/* writeDisk(h, indexPath, listsPath, vectorsPath): an in-memory IVFPQ's disk form. The lists are
 * copied into an OnDiskInvertedLists at listsPath (compact), the IndexIVFPQ is written with them
 * in place of its own (which it keeps), and the refine store's vectors (every label's, in label
 * order) are written raw to vectorsPath. */
napi_value WriteDisk(napi_env env, napi_callback_info info) {
  return addon.onHandle<Handle>(env, info, 4, 4, [&](Handle* h, const Args& a) {
    if (h->kind != IVFPQ || h->onDisk()) fail("writeDisk needs an in-memory ivfpq index");
    std::string indexPath = text(env, a[1], "indexPath"), listsPath = text(env, a[2], "listsPath"), vectorsPath = text(env, a[3], "vectorsPath");
    auto* refine = static_cast<faiss::IndexRefine*>(h->index);
    auto* ivf = static_cast<faiss::IndexIVF*>(refine->base_index);
    auto* flat = static_cast<const faiss::IndexFlat*>(refine->refine_index);
    // A fresh file: OnDiskInvertedLists maps what it finds at that path.
    unlink(listsPath.c_str());
    faiss::OnDiskInvertedLists lists(ivf->nlist, ivf->code_size, listsPath.c_str());
    lists.merge_from_1(ivf->invlists);
    faiss::InvertedLists* own = ivf->invlists;
    ivf->invlists = &lists;
    try {
      faiss::write_index(ivf, indexPath.c_str());
    } catch (...) {
      ivf->invlists = own;
      throw;
    }
    ivf->invlists = own;
    std::string tmp = vectorsPath + ".tmp";
    FILE* f = std::fopen(tmp.c_str(), "wb");
    if (!f) fail("cannot write " + tmp + ": " + std::strerror(errno));
    size_t floats = (size_t)flat->ntotal * flat->d;
    size_t wrote = floats ? std::fwrite(flat->get_xb(), sizeof(float), floats, f) : 0;
    bool ok = wrote == floats && std::fflush(f) == 0 && fsync(fileno(f)) == 0;
    ok = std::fclose(f) == 0 && ok;
    if (!ok || std::rename(tmp.c_str(), vectorsPath.c_str()) != 0) fail("cannot write " + vectorsPath + ": " + std::strerror(errno));
    return undefined(env);
  });
}

/* readDisk(indexPath, vectorsPath): the disk form writeDisk saved, both files mapped read-only. */
napi_value ReadDisk(napi_env env, napi_callback_info info) {
  return addon.call(env, info, 2, 2, [&](const Args& a) {
    std::string indexPath = text(env, a[0], "indexPath"), vectorsPath = text(env, a[1], "vectorsPath");
    auto h = std::make_unique<Handle>();
    h->index = faiss::read_index(indexPath.c_str(), faiss::IO_FLAG_READ_ONLY);
    h->kind = IVFPQ;
    auto* ivf = dynamic_cast<faiss::IndexIVFPQ*>(h->index);
    if (!ivf || !dynamic_cast<faiss::OnDiskInvertedLists*>(ivf->invlists)) fail(indexPath + " is not an IndexIVFPQ with on-disk lists");
    int fd = open(vectorsPath.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) fail("cannot open " + vectorsPath + ": " + std::strerror(errno));
    struct stat st;
    size_t row = sizeof(float) * (size_t)ivf->d;
    if (fstat(fd, &st) != 0 || st.st_size <= 0 || (size_t)st.st_size % row) {
      close(fd);
      fail(vectorsPath + " is not whole rows of " + std::to_string(ivf->d) + " float32");
    }
    void* p = mmap(nullptr, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) fail("cannot map " + vectorsPath + ": " + std::strerror(errno));
    // The re-rank reads scattered rows of d floats; without this the kernel reads its read-ahead
    // window around each fault (128 KiB by default: 40 times a 768-d row).
    if (madvise(p, (size_t)st.st_size, MADV_RANDOM) != 0) {
      int err = errno;
      munmap(p, (size_t)st.st_size);
      fail("cannot advise the kernel on " + vectorsPath + ": " + std::strerror(err));
    }
    h->mapped = static_cast<const float*>(p);
    h->mappedBytes = (size_t)st.st_size;
    h->mappedRows = h->mappedBytes / row;
    return wrap(env, std::move(h));
  });
}

/* info(h): {kind, d, innerProduct, ntotal, trained, nlist}; for IVFPQ ntotal is the flat store's
 * count: the next label (removals only leave the IVFPQ). */
napi_value Info(napi_env env, napi_callback_info info) {
  return addon.onHandle<Handle>(env, info, 1, 1, [&](Handle* h, const Args&) {
    return ObjectOut(env)
        .string("kind", KIND_NAMES[h->kind])
        .number("d", h->index->d)
        .boolean("innerProduct", h->index->metric_type == faiss::METRIC_INNER_PRODUCT)
        .number("ntotal", h->onDisk() ? (double)h->mappedRows : (double)h->index->ntotal)
        .boolean("onDisk", h->onDisk())
        .boolean("trained", h->index->is_trained)
        .number("nlist", h->kind == HNSW ? 0 : (double)ivfOf(h)->nlist)
        .object;
  });
}

/* train(h, vectors, threads): IVF types only (k-means on the vectors; faiss subsamples). */
napi_value Train(napi_env env, napi_callback_info info) {
  return addon.onHandle<Handle>(env, info, 3, 3, [&](Handle* h, const Args& a) {
    auto [x, n] = rowsOf(env, a[1], h);
    setThreads((int)number(env, a[2], "threads"), true);
    h->index->train(n, x);
    return undefined(env);
  });
}

/* add(h, vectors, firstLabel, threads): labels firstLabel, firstLabel + 1, ... */
napi_value Add(napi_env env, napi_callback_info info) {
  return addon.onHandle<Handle>(env, info, 4, 4, [&](Handle* h, const Args& a) {
    auto [x, n] = rowsOf(env, a[1], h);
    idx_t first = (idx_t)number(env, a[2], "firstLabel");
    setThreads((int)number(env, a[3], "threads"), true);
    if (h->onDisk()) fail("an index read from its disk form takes no writes");
    if (n == 0) return undefined(env);
    if (!h->index->is_trained) fail("the index is not trained");
    if (h->kind == IVFFLAT) {
      std::vector<idx_t> ids(n);
      for (idx_t i = 0; i < n; i++) ids[i] = first + i;
      h->index->add_with_ids(n, x, ids.data());
    } else {
      if (first != h->index->ntotal) fail("labels must continue at " + std::to_string(h->index->ntotal));
      if (h->kind == HNSW) {
        h->index->add(n, x);
      } else {
        auto* r = static_cast<faiss::IndexRefine*>(h->index);
        std::vector<idx_t> ids(n);
        for (idx_t i = 0; i < n; i++) ids[i] = first + i;
        r->base_index->add_with_ids(n, x, ids.data());
        r->refine_index->add(n, x);
        r->ntotal = r->refine_index->ntotal;
      }
    }
    return undefined(env);
  });
}

/* remove(h, labels Int32Array): how many were removed, or -1 where the type cannot remove
 * (HNSW: the caller keeps them as tombstones). */
napi_value Remove(napi_env env, napi_callback_info info) {
  return addon.onHandle<Handle>(env, info, 2, 2, [&](Handle* h, const Args& a) {
    auto [labels, n] = view<int32_t>(env, a[1], napi_int32_array, "labels");
    double removed = -1;
    if (h->onDisk()) fail("an index read from its disk form takes no writes");
    if (h->kind != HNSW) {
      std::vector<idx_t> ids(labels, labels + n);
      faiss::IDSelectorBatch sel(ids.size(), ids.data());
      setThreads(1, false);
      removed = (double)ivfOf(h)->remove_ids(sel);
      // IndexIVF::remove_ids lowers its own ntotal; the refine wrapper's count stays the flat
      // store's, which is the next label.
    }
    return numberOut(env, removed);
  });
}

/* Admits a label when it is alive and its row passes every clause lo <= column[row] < hi. */
struct RowSelector : faiss::IDSelector {
  const uint8_t* alive = nullptr;
  const int32_t* rowOf = nullptr;
  size_t labels = 0;
  const int32_t* cols[NCOLS] = {};
  size_t rows = 0;
  const int32_t* clauses = nullptr;
  size_t nclauses = 0;

  bool is_member(idx_t label) const override {
    if (label < 0 || (size_t)label >= labels) return false;
    if (alive && !alive[label]) return false;
    int32_t row = rowOf[label];
    if (row < 0 || (size_t)row >= rows) return false;
    for (size_t c = 0; c < nclauses; c++) {
      const int32_t* cl = clauses + 3 * c;
      int32_t v = cols[cl[0]][row];
      if (v < cl[1] || v >= cl[2]) return false;
    }
    return true;
  }
};

/* What a search call shares with every query it asks: the index, k, the knob, and the selector
 * over the labels (alive flags, label -> row table, the slots' columns; clauses per query). */
struct Searcher {
  Handle* h = nullptr;
  idx_t k = 0;
  int knob = 0;
  double kFactor = 1;
  RowSelector sel;
  bool alive = false;

  /* Arguments a[2..]: k, knob, kFactor, clauses|null, alive|null, rowOf, col0..col5. The
   * clauses are checked as triples here; the caller points sel.clauses at each query's. */
  Searcher(napi_env env, const std::vector<napi_value>& a, const int32_t*& clauses, size_t& clen) {
    h = openHandle<Handle>(env, a[0], addon.namedHandles);
    k = (idx_t)number(env, a[2], "k");
    knob = (int)number(env, a[3], "knob");
    kFactor = number(env, a[4], "kFactor");
    auto [cl, n] = view<int32_t>(env, a[5], napi_int32_array, "clauses", true);
    auto [al, alen] = view<uint8_t>(env, a[6], napi_uint8_array, "alive", true);
    auto [rowOf, rlen] = view<int32_t>(env, a[7], napi_int32_array, "rowOf");
    sel.rowOf = rowOf;
    sel.labels = rlen;
    sel.alive = al;
    alive = al != nullptr;
    if (al && alen < rlen) fail("alive is shorter than rowOf");
    sel.rows = SIZE_MAX;
    for (int c = 0; c < NCOLS; c++) {
      auto [col, rows] = view<int32_t>(env, a[8 + c], napi_int32_array, "column");
      sel.cols[c] = col;
      sel.rows = std::min(sel.rows, rows);
    }
    if (n % 3) fail("clauses must be triples");
    for (size_t c = 0; c < n / 3; c++)
      if (cl[3 * c] < 0 || cl[3 * c] >= NCOLS) fail("clause column out of range");
    clauses = cl;
    clen = n;
  }

  /* One query: the row ids found, best first, appended to `out`. */
  void search(const float* q, std::vector<int32_t>& out) {
    size_t d = h->index->d;
    bool select = sel.clauses != nullptr || alive;
    setThreads(1, false);
    idx_t want = k;
    if (h->kind == IVFPQ) want = std::max<idx_t>(k, (idx_t)(k * std::max(1.0, kFactor)));
    std::vector<float> D(want);
    std::vector<idx_t> I(want, -1);
    if (h->kind == HNSW) {
      faiss::SearchParametersHNSW p;
      p.efSearch = std::max<int>(knob, (int)std::min<idx_t>(k, 1 << 30));
      // 1.7.3 reads efSearch partly from the parameters and partly from the index (the walk's
      // stop test): given only in the parameters, values above the index's own (16) change
      // nothing. A handle serves one search at a time (each search thread has its own).
      static_cast<faiss::IndexHNSW*>(h->index)->hnsw.efSearch = p.efSearch;
      p.sel = select ? &sel : nullptr;
      h->index->search(1, q, want, D.data(), I.data(), &p);
    } else {
      faiss::IndexIVF* ivf = ivfOf(h);
      faiss::SearchParametersIVF p;
      p.nprobe = std::min<size_t>((size_t)std::max(1, knob), ivf->nlist);
      p.sel = select ? &sel : nullptr;
      ivf->search(1, q, want, D.data(), I.data(), &p);
    }
    size_t found = 0;
    while (found < (size_t)want && I[found] >= 0) found++;
    if (h->kind == IVFPQ) {
      // The refine step: exact distances to the kept vectors (in memory, or mapped from the
      // vectors file), the k best of the candidates.
      const float* xb = h->mapped;
      size_t rows = h->mappedRows;
      if (!h->onDisk()) {
        auto* flat = static_cast<const faiss::IndexFlat*>(static_cast<faiss::IndexRefine*>(h->index)->refine_index);
        xb = flat->get_xb();
        rows = (size_t)flat->ntotal;
      }
      bool ip = h->index->metric_type == faiss::METRIC_INNER_PRODUCT;
      std::vector<std::pair<float, idx_t>> c(found);
      for (size_t i = 0; i < found; i++) {
        if ((size_t)I[i] >= rows) fail("label " + std::to_string(I[i]) + " has no vector (" + std::to_string(rows) + " rows)");
        const float* v = xb + (size_t)I[i] * d;
        c[i] = {ip ? -faiss::fvec_inner_product(q, v, d) : faiss::fvec_L2sqr(q, v, d), I[i]};
      }
      size_t keep = std::min<size_t>(found, (size_t)k);
      std::partial_sort(c.begin(), c.begin() + keep, c.end());
      for (size_t i = 0; i < keep; i++) I[i] = c[i].second;
      found = keep;
    }
    for (size_t i = 0; i < found; i++) out.push_back((size_t)I[i] < sel.labels ? sel.rowOf[I[i]] : -1);
  }
};

/* search(h, query, k, knob, kFactor, clauses|null, alive|null, rowOf, col0..col5): the row ids
 * found, best first (Int32Array). knob is efSearch (HNSW) or nprobe (IVF). clauses: triples
 * (column, lo, hi). alive (per label) is consulted only when given.
 * timedSearch(h, queries, k, knob, kFactor, clauses|null, alive|null, rowOf, col0..col5): each of
 * the n queries (n x d, one after another) searched as search() does, each timed alone by the
 * steady clock around the search and the copy of its row ids, so a pass pays no call from JS per
 * query. clauses: null, or n x c triples (query i's at 3c * i). Returns [row ids (each query's
 * best first, one after another), offsets (n + 1), nanoseconds (n)]. */
napi_value searchWith(napi_env env, napi_callback_info info, bool timed) {
  return addon.call(env, info, 8 + NCOLS, 8 + NCOLS, [&](const Args& a) {
    const int32_t* clauses;
    size_t clen;
    Searcher s(env, a, clauses, clen);
    size_t d = s.h->index->d;
    auto [qs, n] = queriesOf(env, a[1], d, timed);
    if (clauses && (n == 0 || clen % (3 * n))) fail("clauses must be the same number of triples for every query");
    size_t per = clauses ? clen / (3 * n) : 0;
    s.sel.nclauses = per;
    return searchAnswer(env, timed, n, (size_t)std::max<idx_t>(s.k, 0), [&](size_t i, std::vector<int32_t>& out) {
      s.sel.clauses = clauses ? clauses + 3 * per * i : nullptr;
      s.search(qs + i * d, out);
    });
  });
}

napi_value Search(napi_env env, napi_callback_info info) { return searchWith(env, info, false); }
napi_value TimedSearch(napi_env env, napi_callback_info info) { return searchWith(env, info, true); }

napi_value Init(napi_env env, napi_value exports) {
  defineFunctions(env, exports,
                  {{"create", Create}, {"read", Read}, {"write", Write}, {"writeDisk", WriteDisk}, {"readDisk", ReadDisk}, {"info", Info}, {"train", Train}, {"add", Add}, {"remove", Remove},
                   {"search", Search}, {"timedSearch", TimedSearch}, {"free", freeBinding<Handle, addon>}});
  napi_value v;
  std::string version = std::to_string(FAISS_VERSION_MAJOR) + "." + std::to_string(FAISS_VERSION_MINOR) + "." +
                        std::to_string(FAISS_VERSION_PATCH);
  napi_create_string_utf8(env, version.c_str(), NAPI_AUTO_LENGTH, &v);
  napi_set_named_property(env, exports, "version", v);
  return exports;
}

}  // namespace

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
