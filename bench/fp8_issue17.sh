#!/bin/sh
# Issue 17's four figures in one run, on this machine:
#   1. `scalelab report` on the 4096 x 4096 FP8 scenario against bench/fp8_numpy.py doing the same
#      block work, both whole processes, interleaved RUNS times (each pair back to back, so that
#      a busy spell of the machine hits both); the ratio of each pair and their median;
#   2. the report's peak resident memory, against 3 x the matrix's 64 MB;
#   3. bench_fp8_window: the FP8 tab's recompute after each kind of change;
#   4. bench_core: block quantize + dequantize into kept matrices against a memcpy of the matrix.
# Needs a release build with the benchmarks (cmake --build --preset release --target benchmarks)
# and Debian's python3-numpy (run with /usr/bin/python3: another python may lack NumPy).
#
#   bench/fp8_issue17.sh [RUNS]
set -eu
runs=${1:-5}
here=$(cd "$(dirname "$0")/.." && pwd)
bin=$here/build/release
scenario=$here/bench/scenarios/fp8-4096.json # the issue's scenario
timing=$(mktemp)
trap 'rm -f "$timing"' EXIT

echo "== report against NumPy ($runs pairs; seconds of the whole process)"
ratios=""
i=0
while [ "$i" -lt "$runs" ]; do
    /usr/bin/time -f "%e %M" -o "$timing" /usr/bin/python3 "$here/bench/fp8_numpy.py" >/dev/null
    numpy=$(cut -d' ' -f1 "$timing")
    /usr/bin/time -f "%e %M" -o "$timing" "$bin/app/scalelab" report --scenario "$scenario" >/dev/null
    report=$(cut -d' ' -f1 "$timing")
    rss=$(cut -d' ' -f2 "$timing")
    ratio=$(echo "$numpy $report" | awk '{ printf "%.1f", $1 / $2 }')
    ratios="$ratios $ratio"
    echo "numpy $numpy s  report $report s  ratio $ratio  report peak RSS $((rss / 1024)) MB"
    i=$((i + 1))
done
echo "$ratios" | tr ' ' '\n' | grep . | sort -n |
    awk '{ r[NR] = $1 } END { printf "median ratio %.1f (goal: at least 10)\n", r[int((NR + 1) / 2)] }'
echo "peak RSS goal: at most $((3 * 64)) MB"

echo "== window (bench_fp8_window, 10 changes of each kind)"
QT_QPA_PLATFORM=offscreen "$bin/bench/bench_fp8_window" --runs 10 2>/dev/null

echo "== quantizer against memcpy (bench_core)"
"$bin/bench/bench_core" --benchmark_filter='BM_Fp8BlockQuantizeInto/16/|BM_Fp8Memcpy' \
    --benchmark_min_time=1 2>/dev/null | grep BM_ |
    awk '{ print } /Quantize/ { q = $2 } /Memcpy/ { m = $2 }
         END { printf "quantize / memcpy %.2f (goal: at most 2)\n", q / m }'
