#!/bin/bash
# Checksum offload helpers: decision and fallback cost ratios (seed 005).
dmesg -C
modprobe lk45_csum_bench iters=${CSUM_BENCH_ITERS:-200000} || { echo "csum: cannot load lk45_csum_bench"; exit 1; }
dmesg | sed -n 's/^\[[ 0-9.]*\] lk45_csum_bench: /csum-bench: /p'
modprobe -r lk45_csum_bench
