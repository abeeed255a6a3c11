{
  "variables": {
    "openblas_include%": "/usr/include/x86_64-linux-gnu/openblas-pthread"
  },
  "targets": [
    {
      "target_name": "topk",
      "sources": ["topk.c"],
      "include_dirs": ["<(openblas_include)"],
      "cflags": ["-O3", "-std=gnu11", "-Wall", "-ffp-contract=off"],
      "libraries": ["-lopenblas", "-lpthread"]
    }
  ]
}
