{
  "variables": {
    "usearch_root": "../../../node_modules/usearch",
    "numkong_root": "../../../node_modules/usearch/numkong"
  },
  "includes": ["../../../node_modules/usearch/numkong/numkong.gypi"],
  "targets": [
    {
      "target_name": "usearch_direct",
      "sources": ["usearch.cpp"],
      "dependencies": ["numkong_lib"],
      "include_dirs": ["<(usearch_root)/include", "<(numkong_root)/include", "../../_shared/native"],
      "defines": ["USEARCH_USE_NUMKONG=1", "NK_DYNAMIC_DISPATCH=1", "USEARCH_USE_OPENMP=0", "NK_NATIVE_F16=0", "NK_NATIVE_BF16=0"],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions"],
      "cflags_cc": ["-O3", "-std=c++17", "-pthread", "-fexceptions", "-Wno-unknown-pragmas", "-Wno-maybe-uninitialized"],
      "ldflags": ["-pthread"]
    }
  ]
}
