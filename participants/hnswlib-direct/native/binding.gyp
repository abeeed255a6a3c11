{
  "variables": {
    "hnswlib_headers": "<(module_root_dir)/../../../node_modules/hnswlib-node/src/hnswlib"
  },
  "targets": [
    {
      "target_name": "hnswlib_direct",
      "sources": ["hnswlib.cpp"],
      "include_dirs": ["<(hnswlib_headers)", "../../_shared/native"],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions"],
      "cflags_cc": ["-O3", "-m64", "-pthread", "-fno-omit-frame-pointer", "-std=gnu++17", "-fexceptions", "-Wno-type-limits", "-Wno-unused-function"]
    }
  ]
}
