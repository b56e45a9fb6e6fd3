#!/usr/bin/env bash
# bench/peers-spread over three small reports with known figures: the medians, each row's range as
# a percentage of its median, the ratio to the best peer of the row's geometry in each run (URL
# rows too), and the counts of rows within 10%.
#   peers_spread_test.sh SOURCE_DIR
set -euo pipefail
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# report RUN K8_INS BOOST PARQUET LIBFILTER BASE: one report whose rows carry those ns (all three
# columns alike but the first row's insert, K8_INS)
report() {
  cat >"$tmp/r$1.txt" <<REPORT
# simdbloom vs peer Bloom filters, one process, same keys
date 2026-01-0$1 00:00:00 UTC, host test, cpu Test CPU, 2 online cpus, pinned to cpus {0}

## pre-hashed 64-bit keys, n = 1000000
peer                                  bytes  b/key      FP%    exp%    mk ms   ins ns   pos ns   neg ns | raw
sb k8 avx2 batch                    1250048  10.00   1.0431  1.0488     0.06     $2     $3     $3 | x
sb k8 avx2 single                   1250048  10.00   1.0431  1.0488     0.04     9.00     9.00     9.00 | x
sb parquet avx2 batch               1250016  10.00   1.2854  1.2648     0.04     $4     $4     $4 | x
libfilter block                     1249984  10.00   1.2692  1.2649     0.01     $5     $5     $5 | x
boost multiblock64<8> bulk          1250048  10.00   1.0429  1.0488     0.01     $3     $3     $3 | x
BASE line pf16                      1250048  10.00        -       -     0.01     $6     $6     $6 | x

## URL strings test.txt: 4 URLs
peer                                  bytes  b/key      FP%    exp%    mk ms   ins ns   pos ns   neg ns | raw
sb k8 avx2 batch                        128  10.00   1.0431  1.0488     0.06     3.00     3.00     3.00 | x
libfilter block                         128  10.00   1.2692  1.2649     0.01     1.00     1.00     1.00 | x
boost multiblock64<8> bulk              128  10.00   1.0429  1.0488     0.01     $3     $3     $3 | x
REPORT
}
report 1 2.00 2.00 1.00 2.00 1.00
report 2 2.10 2.00 1.00 2.00 1.00
report 3 4.00 4.00 1.00 1.00 2.00 # a slow run: boost and the line read too; libfilter faster
out=$(bash "$src/bench/peers-spread" "$tmp/r1.txt" "$tmp/r2.txt" "$tmp/r3.txt")
echo "$out"
fail=0
expect() {
  if ! grep -qxF -- "$1" <<<"$out"; then
    echo "FAIL: no line: $1"
    fail=1
  fi
}
# k8 batch: insert 2, 2.1, 4 (median 2.1, lowest 2 / 2.1 = 95%), the others 2, 2, 4 (200%); over
# boost's bulk row of each run 1.00, 1.05, 1.00
expect '| 1M | sb k8 avx2 batch | 2.10 / 2.00 / 2.00 (95-200%) | 1.00 / 1.00 / 1.00 (100-105%) |'
# Parquet batch: 1 in every run; over libfilter 0.5, 0.5, 1.0
expect '| 1M | sb parquet avx2 batch | 1.00 / 1.00 / 1.00 (100-100%) | 0.50 / 0.50 / 0.50 (100-200%) |'
expect '| 1M | boost multiblock64<8> bulk | 2.00 / 2.00 / 2.00 (100-200%) |'
expect '| 1M | libfilter block | 2.00 / 2.00 / 2.00 (50-100%) |'
# the URL row over the 512-bit peer (boost: 2, 2, 4), not the faster 256-bit libfilter: 1.5, 1.5, 0.75
expect '| URLs | sb k8 avx2 batch | 3.00 / 3.00 / 3.00 (100-100%) | 1.50 / 1.50 / 1.50 (50-100%) |'
expect 'simdbloom batch rows within 10% of their medians in every run: 2 of 3 (largest departure 100%)'
expect 'their ratios to the best peer within 10%: 1 of 3 (largest departure 100%)'
expect 'peer and line-read rows within 10%: 1 of 5 (largest departure 100%)'
grep -q 'sb k8 avx2 single' <<<"$out" && { echo "FAIL: a single-key row was counted as a batch row"; fail=1; }
bash "$src/bench/peers-spread" "$tmp/r1.txt" 2>/dev/null && { echo "FAIL: one report was accepted"; fail=1; }
[ $fail = 0 ] && echo "peers-spread: spreads as computed by hand"
exit $fail
