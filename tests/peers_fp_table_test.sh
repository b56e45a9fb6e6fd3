#!/usr/bin/env bash
# bench/peers-fp-table turns the low-rate sections of peers reports into the fingerprint table of
# docs/PERFORMANCE.md: on two small reports with known figures, each rate's fingerprint row is the
# smallest one of the rate, and each ratio its ns over block512-k16's and over the fastest peer's.
#   peers_fp_table_test.sh SOURCE_DIR
set -euo pipefail
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
head='# simdbloom vs peer Bloom filters, one process, same keys
date 2026-01-01 00:00:00 UTC, host test, cpu Test CPU, 2 online cpus, pinned to cpus {0}
THP: always [madvise] never; simdbloom 1.0.0, ISAs usable: scalar avx2
sources: simdbloom@0000000 libfilter@1111111
'
cols='peer                                  bytes  b/key      FP%    exp%    mk ms   ins ns   pos ns   neg ns | raw'
cat >"$tmp/a.txt" <<REPORT
$head
## pre-hashed 64-bit keys, n = 1000000
$cols
BASE line pf16                      1250048  10.00        -       -     0.01     1.00     1.00     2.00 | x

## low-fpp fingerprint filters, pre-hashed 64-bit keys, n = 1000000
$cols
fp sb 1e-4 k16 avx2 batch           2876416  23.01   0.0098  0.0100     1.08     2.00     4.00     5.00 | x
fp sb 1e-4 fp512-r13 avx2 batch     2167424  17.34   0.0108       -     0.87     6.00     6.00     6.00 | x
fp sb 1e-4 fp512-r19 avx2 batch     3252288  26.02   0.0000       -     0.87     1.00     1.00     1.00 | x
fp sb 1e-6 k16 avx2 batch           4904960  39.24   0.0003  0.0001     1.10     4.00     3.00     2.00 | x
fp sb 1e-6 fp512-r13 avx2 batch   200076800 1600.61  0.0000       -     7.06     1.00     1.00     1.00 | x
fp sb 1e-6 fp512-r19 avx2 batch     3252288  26.02   0.0002       -     1.18     8.00     6.00     4.00 | x
fp cuckoo16 2^n                     4194304  33.55   0.0060  0.0058     2.06    16.00     3.00    10.00 | x
fp prefix[tc]                       1435456  11.48   0.3900  0.3711     0.50     4.00    12.00     2.00 | x
simdbloom plan for 1e-4 at n = 1000000: block512-k16, k 16, 2876416 bytes, 23.01 bits/key, planned FP 0.0100%
REPORT
cat >"$tmp/b.txt" <<REPORT
$head
## low-fpp fingerprint filters, pre-hashed 64-bit keys, n = 100000000
$cols
fp sb 1e-8 k16 avx2 batch         826625024  66.13   0.0000  0.0000  1124.82    10.00    10.00    10.00 | x
fp sb 1e-8 fp512-r27 avx2 batch   458683776  36.69   0.0000       -    40.32    25.00    20.00    15.00 | x
fp vqf8                           143369216  11.47   0.4358  0.4358    56.82   100.00    50.00    60.00 | x
REPORT
out=$(bash "$src/bench/peers-fp-table" "$tmp/a.txt" "$tmp/b.txt")
echo "$out"
fails=0
expect() { # LABEL ROW: the table holds ROW exactly
  if ! grep -qxF -- "$2" <<<"$out"; then
    echo "FAIL: $1"
    echo "      want $2"
    fails=$((fails + 1))
  fi
}
# 1e-4: r13 (17.34 bits) over r19 (26.02): 6/6/6 over k16 2/4/5 = 3.00 / 1.50 / 1.20; over the
# fastest peer per column (prefix 4, cuckoo 3, prefix 2): 1.50 / 2.00 / 3.00
expect "1e-4: the smallest layout, over k16 and the fastest peer" \
  '| 1M | 1e-4 | fp512-r13, 17.34, 0.0108% | 6.00 / 6.00 / 6.00 | 3.00 / 1.50 / 1.20 | 1.50 / 2.00 / 3.00 |'
# 1e-6: r19 (26.02) over r13 (1600.61): 8/6/4 over k16 4/3/2 = 2.00 / 2.00 / 2.00; over 4/3/2
expect "1e-6: the row made for the rate, not the oversized one" \
  '| 1M | 1e-6 | fp512-r19, 26.02, 0.0002% | 8.00 / 6.00 / 4.00 | 2.00 / 2.00 / 2.00 | 2.00 / 2.00 / 2.00 |'
# the second report: 25/20/15 over k16 10/10/10 and vqf 100/50/60
expect "100M, from the second report" \
  '| 100M | 1e-8 | fp512-r27, 36.69, 0.0000% | 25.00 / 20.00 / 15.00 | 2.50 / 2.00 / 1.50 | 0.25 / 0.40 / 0.25 |'
[ "$(grep -c '^| [0-9]' <<<"$out")" -eq 3 ] || { echo "FAIL: not three rows"; fails=$((fails + 1)); }
grep -q 'cpu Test CPU' <<<"$out" || { echo "FAIL: the report's header is missing"; fails=$((fails + 1)); }
grep -q '`a.txt`, `b.txt`' <<<"$out" || { echo "FAIL: the reports not named"; fails=$((fails + 1)); }
if bash "$src/bench/peers-fp-table" "$tmp/missing.txt" >/dev/null 2>&1; then
  echo "FAIL: a missing report accepted"; fails=$((fails + 1))
fi
[ "$fails" -eq 0 ] || exit 1
echo "peers-fp-table: ratios as computed by hand"
