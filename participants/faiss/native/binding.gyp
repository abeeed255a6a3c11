{
  "targets": [
    {
      "target_name": "faiss",
      "sources": ["faiss.cpp"],
      "include_dirs": ["../../_shared/native"],
      "cflags_cc!": ["-fno-exceptions", "-fno-rtti"],
      "cflags_cc": ["-O2", "-std=c++17", "-fexceptions", "-frtti", "-fopenmp", "-Wall"],
      "ldflags": ["-fopenmp"],
      "libraries": ["-l:libfaiss.a", "-lblas", "-llapack", "-ldl"]
    }
  ]
}
