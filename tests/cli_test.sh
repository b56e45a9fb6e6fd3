#!/usr/bin/env bash
# The simdbloom command, end to end: dedup against awk on real data, edge inputs, exit codes.
# usage: cli_test.sh SIMDBLOOM_BINARY URL_STREAM_FILE
set -u
bin=$1
stream=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib.sh"
exit_code() { # exit_code WANT COMMAND...: the command's exit status is WANT
  local want=$1; shift
  "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  if [ "$got" -eq "$want" ]; then pass; else fail "exit $got, want $want: $* ($(head -c 300 "$tmp/err"))"; fi
  if [ "$want" -ne 0 ]; then # every error is one line on standard error (a summary may follow)
    if [ "$(grep -c '^simdbloom: ' "$tmp/err")" -eq 1 ]; then pass; else fail "not one line of error: $*"; fi
  fi
}

# 1. The real stream: same output as awk's first-seen filter (a 1e-9 rate makes a false positive
#    over 100k distinct lines a one-in-ten-thousand event), and the summary tells the counts.
"$bin" dedup -v --fpp 1e-9 "$stream" >"$tmp/ours" 2>"$tmp/summary"
awk '!seen[$0]++' "$stream" >"$tmp/awk"
check "dedup equals awk on the URL stream" cmp -s "$tmp/ours" "$tmp/awk"
lines_in=$(wc -l <"$stream"); lines_out=$(wc -l <"$tmp/awk")
check "summary counts lines in and out" grep -q "^simdbloom dedup: $lines_in lines in, $lines_out lines out" "$tmp/summary"
check "summary names layout and isa" grep -q "^filter: .*isa " "$tmp/summary"
check "no overflow warning when within plan" bash -c "! grep -q warning '$tmp/summary'"
# Standard input and '-' behave like a file; two files share one filter.
"$bin" dedup --quiet <"$stream" >"$tmp/stdin"
check "stdin equals file" cmp -s "$tmp/stdin" "$tmp/awk"
"$bin" dedup --quiet - "$stream" <"$stream" >"$tmp/twice"
check "second pass over the same lines adds nothing" cmp -s "$tmp/twice" "$tmp/awk"
# A file is mapped and cut into pieces of about 1 MiB that any thread splits and hashes: output in
# input order on every thread count. A pipe is read; standard input that is a file some of which
# was read before (head leaves its offset after the lines it took) goes on from there.
for threads in 1 3; do
  "$bin" dedup --quiet --fpp 1e-9 --threads "$threads" "$stream" >"$tmp/threads"
  check "dedup --threads $threads equals awk" cmp -s "$tmp/threads" "$tmp/awk"
done
cat "$stream" | "$bin" dedup --quiet --fpp 1e-9 --threads 3 >"$tmp/piped"
check "a pipe equals the file" cmp -s "$tmp/piped" "$tmp/awk"
# Short lines: a piece holds far more lines than a slot starts with (its arrays grow).
{ seq 1 300000; seq 1 300000; } >"$tmp/short"
"$bin" dedup --quiet --fpp 1e-9 --threads 2 "$tmp/short" >"$tmp/short_out"
check "a file of short lines: every line once, in order" cmp -s "$tmp/short_out" <(seq 1 300000)
# The pages of pieces handed over leave the process: a mapped file of 190 MB is deduped in far
# less resident memory than its size (the peak counts the filter, ~10 MB, and the pieces in
# flight; every page it touched would count without the release). Native builds only (CMake sets
# SIMDBLOOM_TEST_RESIDENT): a sanitizer's shadow memory or an emulator counts memory of its own.
if [ "${SIMDBLOOM_TEST_RESIDENT:-0}" = 1 ]; then
  "$bin" gen-urls 2600k --seed 9 >"$tmp/big"
  big_kib=$(($(wc -c <"$tmp/big") / 1024))
  peak_kib=$(/usr/bin/python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$bin" dedup --quiet --expect 3M \
    --threads 2 "$tmp/big")
  check "a mapped 190 MB file deduped in under a third of its size resident ($peak_kib of $big_kib KiB)" \
    bash -c "[ -n '$peak_kib' ] && [ '$peak_kib' -lt $((big_kib / 3)) ]"
  rm -f "$tmp/big"
fi
{ head -n 1000 >/dev/null; "$bin" dedup --quiet --fpp 1e-9 >"$tmp/rest"; } <"$stream"
tail -n +1001 "$stream" | awk '!s[$0]++' >"$tmp/rest_awk"
check "standard input goes on where it was left" cmp -s "$tmp/rest" "$tmp/rest_awk"
check "--quiet prints nothing" bash -c "'$bin' dedup --quiet '$stream' 2>&1 >/dev/null | cmp -s - /dev/null"

# 2. Over the plan: a warning with the rate now expected.
head -n 5000 "$stream" | "$bin" dedup --expect 100 --fpp 0.01 >/dev/null 2>"$tmp/warn"
check "warns when the filter is saturated" grep -q "^warning: far more distinct lines than the 100 planned (every bit of the filter is set); the false-positive rate is now about 1" "$tmp/warn"
# The count comes from the fill, not from the keys that changed the filter (which an overloaded
# filter undercounts): within 5% of the truth at a rate near 0.99.
head -n 50000 "$stream" | "$bin" dedup --expect 3000 --fpp 0.01 >/dev/null 2>"$tmp/warn"
truth=$(head -n 50000 "$stream" | awk '!s[$0]++' | wc -l)
told=$(sed -n 's/^warning: about \([0-9]*\) distinct lines (estimated from the filter.s fill) exceed the 3000 planned.*/\1/p' "$tmp/warn")
check "the overload warning counts distinct lines from the fill" \
  awk -v t="$truth" -v e="${told:-0}" 'BEGIN { d = e - t; if (d < 0) d = -d; exit !(d <= 0.05 * t) }'
check "the advice without --state is a larger --expect" grep -q "Plan for more (--expect [0-9]*)" "$tmp/warn"

# 3. Edge inputs: CRLF, empty lines, NUL bytes, invalid UTF-8, no final newline, long lines.
printf 'a\r\nb\na\n\n\nb\r\n' >"$tmp/crlf"
"$bin" dedup --quiet "$tmp/crlf" >"$tmp/out"
check "CRLF: CR is not part of the key, output keeps the first form" cmp -s "$tmp/out" <(printf 'a\r\nb\n\n')
printf 'x\0y\nx\0z\nx\0y\n\xff\xfe\n\xff\xfe\nlast' >"$tmp/binary"
"$bin" dedup --quiet "$tmp/binary" >"$tmp/out"
check "NUL bytes and invalid UTF-8 are key bytes" cmp -s "$tmp/out" <(printf 'x\0y\nx\0z\n\xff\xfe\nlast\n')
# The unterminated last line occurs nowhere else first: were it dropped, or glued to the next
# file's first line, the output (and its order) would differ.
printf 'one\ntwo' >"$tmp/nofinal"; printf 'three\ntwo\n' >"$tmp/second"
"$bin" dedup --quiet "$tmp/nofinal" "$tmp/second" >"$tmp/out"
check "a last line without newline is a line, and is not glued to the next file" cmp -s "$tmp/out" <(printf 'one\ntwo\nthree\n')
printf 'x\ny' | "$bin" dedup --quiet >"$tmp/out"
check "an unterminated last line of standard input is written, with a newline" cmp -s "$tmp/out" <(printf 'x\ny\n')
printf 'a\nb' >"$tmp/keys-nofinal"
"$bin" build --quiet --expect 100 -o "$tmp/nofinal.sbloom" "$tmp/keys-nofinal" 2>/dev/null
printf 'a\nb\nc' | "$bin" query --absent "$tmp/nofinal.sbloom" >"$tmp/out"
check "build and query read an unterminated last line as a line" cmp -s "$tmp/out" <(printf 'c\n')
head -c 3000000 /dev/zero | tr '\0' 'u' >"$tmp/long"; printf '\nshort\n' >>"$tmp/long"
head -c 3000000 /dev/zero | tr '\0' 'u' >>"$tmp/long"; printf 'v\n' >>"$tmp/long"
cat "$tmp/long" "$tmp/long" >"$tmp/long2"
"$bin" dedup --quiet "$tmp/long2" >"$tmp/out"
check "3 MB lines kept whole and told apart by their last byte" cmp -s "$tmp/out" "$tmp/long"
: >"$tmp/empty"
"$bin" dedup --verbose "$tmp/empty" >"$tmp/out" 2>"$tmp/err"
check "empty input: no output, a summary" bash -c "[ ! -s '$tmp/out' ] && grep -q '0 lines in, 0 lines out' '$tmp/err'"
# A summary is for a person: standard error not a terminal (a file, here) gets none by default,
# as zstd -c and cp give none; -v asks for it; -q silences everything but errors.
"$bin" dedup "$tmp/empty" >"$tmp/out" 2>"$tmp/err"
check "not on a terminal: no summary" [ ! -s "$tmp/err" ]
for c in "dedup" "build -o $tmp/q.sbloom" "query $tmp/q.sbloom" "info $tmp/q.sbloom" "plan" "gen-urls 2"; do
  "$bin" $c -q </dev/null >/dev/null 2>"$tmp/err"; rc=$?
  check "$c accepts -q (exit $rc, quiet)" bash -c "[ $rc -eq 0 ] && [ ! -s '$tmp/err' ]"
done
for layout in parquet block512-k8 block512-k16; do
  "$bin" dedup --quiet --layout "$layout" --fpp 1e-9 "$stream" >"$tmp/out"
  check "layout $layout equals awk" cmp -s "$tmp/out" "$tmp/awk"
done

# 4. Exit codes: 0 ok, 1 runtime, 2 usage; one line on stderr for errors.
exit_code 0 "$bin" --help
exit_code 0 "$bin" --version
check "--version names the instruction set" bash -c "'$bin' --version | grep -q 'isa '"
exit_code 0 "$bin" dedup --help
exit_code 2 "$bin"
exit_code 2 "$bin" frobnicate
exit_code 2 "$bin" dedup --no-such-option
exit_code 2 "$bin" dedup --expect
exit_code 2 "$bin" dedup --expect 0
exit_code 2 "$bin" dedup --expect -5
exit_code 2 "$bin" dedup --expect 12abc
exit_code 2 "$bin" dedup --fpp 0
exit_code 2 "$bin" dedup --fpp 1
exit_code 2 "$bin" dedup --fpp nan
exit_code 2 "$bin" dedup --fpp=abc
exit_code 2 "$bin" dedup --layout bogus
exit_code 2 "$bin" dedup --expect 1T --fpp 1e-12
exit_code 1 "$bin" dedup "$tmp/does-not-exist"
check "missing file is named" grep -q "cannot open $tmp/does-not-exist" "$tmp/err"
exit_code 1 "$bin" dedup "$tmp"
if [ ! -w /dev/full ]; then
  echo "SKIP: /dev/full not writable here: the write-error check is not run"
else
  "$bin" dedup --quiet "$stream" >/dev/full 2>"$tmp/err"; rc=$?
  check "write error is exit 1 with a message" bash -c "[ $rc -eq 1 ] && grep -q 'cannot write' '$tmp/err'"
fi
SIMDBLOOM_ISA=no-such-isa "$bin" dedup --quiet </dev/null >/dev/null 2>"$tmp/err"; rc=$?
check "an unusable SIMDBLOOM_ISA is a runtime error" bash -c "[ $rc -eq 1 ] && grep -q 'instruction set' '$tmp/err'"

# 5. The generator: deterministic, distinct, realistic lengths, repeats on request.
"$bin" gen-urls 20000 --seed 7 >"$tmp/g1"; "$bin" gen-urls 20000 --seed 7 >"$tmp/g2"
check "gen-urls is deterministic" cmp -s "$tmp/g1" "$tmp/g2"
check "gen-urls lines are distinct" bash -c "[ \$(sort -u '$tmp/g1' | wc -l) -eq 20000 ]"
median=$(awk '{print length($0)}' "$tmp/g1" | sort -n | awk '{a[NR]=$1} END {print a[int(NR/2)]}')
check "gen-urls median length is URL-like ($median)" bash -c "[ $median -ge 35 ] && [ $median -le 90 ]"
check "gen-urls lines look like URLs" bash -c "! grep -v -q -E '^https?://[a-z0-9.-]+\.[a-z.]+(/|\?|$)' '$tmp/g1'"
"$bin" gen-urls 20000 --repeat 0.7 >"$tmp/g3"
distinct=$(sort -u "$tmp/g3" | wc -l)
check "gen-urls --repeat 0.7 repeats about 70% ($distinct distinct of 20000)" bash -c "[ $distinct -gt 5000 ] && [ $distinct -lt 7000 ]"
exit_code 2 "$bin" gen-urls
exit_code 2 "$bin" gen-urls 10 --repeat 1.5

# 6. plan: the sizes the library computes.
"$bin" plan --expect 1M --fpp 0.01 >"$tmp/plan"
check "plan lists every layout and classic" bash -c "grep -q '^parquet' '$tmp/plan' && grep -q '^block512-k8' '$tmp/plan' && grep -q '^block512-k16' '$tmp/plan' && grep -q '^classic' '$tmp/plan' && grep -q '^auto picks' '$tmp/plan'"
check "plan table has a row per rate" bash -c "[ \$('$bin' plan --table | grep -c '^| [0-9]') -eq 9 ]"
check "plan picks the fingerprint family at 1e-6, a Bloom layout at 1e-2" bash -c \
  "'$bin' plan --expect 1M --fpp 1e-6 | grep -q '^auto picks fp512-r19' && grep -q '^auto picks block512-k8' '$tmp/plan'"
check "plan names the Bloom layout a plan would take (for --shared, Redis, merge)" bash -c \
  "'$bin' plan --expect 1M --fpp 1e-6 | grep -q '^bloom picks block512-k16 '"
# a window's plan: each form's bytes those of the filter build makes with the same options (the
# fingerprint window where it is smaller, the ring with --layout bloom), and the pick said
size_of() { "$bin" info "$1" | awk '$1 == "size" { gsub(/[()]/, "", $4); print $4 }'; }
for plan in "1M 1e-6 30d fingerprint" "60000 1e-4 90m fingerprint" "1000 0.1 3s ring"; do
  read -r wn wp wd wform <<<"$plan"
  "$bin" plan --expect "$wn" --fpp "$wp" --forget-after "$wd" >"$tmp/wplan"
  rm -f "$tmp/w1.sbf" "$tmp/w2.sbf"
  "$bin" build -q --expect "$wn" --fpp "$wp" --forget-after "$wd" -o "$tmp/w1.sbf" </dev/null
  "$bin" build -q --expect "$wn" --fpp "$wp" --forget-after "$wd" --layout bloom -o "$tmp/w2.sbf" </dev/null
  picked=$(awk -v form="$wform" '$1 == form { print $2 }' "$tmp/wplan")
  check "plan --forget-after $wd at $wp: the ring's bytes are build --layout bloom's ($(size_of "$tmp/w2.sbf"))" \
    [ "$(awk '$1 == "ring" { print $2 }' "$tmp/wplan")" = "$(size_of "$tmp/w2.sbf")" ]
  check "plan --forget-after $wd at $wp: build takes the $wform window, of the planned bytes ($picked)" \
    bash -c "[ '$picked' = '$(size_of "$tmp/w1.sbf")' ] && grep -q '^build and dedup --state pick the $wform' '$tmp/wplan'"
done
exit_code 2 "$bin" plan --table --forget-after 3s
exit_code 2 "$bin" plan --forget-after 4s

# 7. Option parsing as getopt_long users expect: abbreviations, --opt=VALUE, combined short
#    options, -oFILE, options after the files, --, -V; refusals name the option.
printf 'b\na\nb\n' >"$tmp/p1"
"$bin" dedup --exp 10 --fp=1e-3 "$tmp/p1" >"$tmp/out" 2>"$tmp/err"
check "unambiguous abbreviations and --opt=VALUE work" bash -c "[ \$? -eq 0 ] && printf 'b\na\n' | cmp -s - '$tmp/out'"
"$bin" build -qo "$tmp/p.sbloom" "$tmp/p1" 2>"$tmp/err"
check "-qo FILE: combined short options" bash -c "[ -f '$tmp/p.sbloom' ] && [ ! -s '$tmp/err' ]"
"$bin" build -q -o"$tmp/p2.sbloom" "$tmp/p1" --expect 100
check "-oFILE, and an option after the files" bash -c "'$bin' info '$tmp/p2.sbloom' | grep -q 'planned *100 items'"
printf 'x\n' >"$tmp/-dash"
(cd "$tmp" && "$bin" dedup -- -dash >"$tmp/out")
check "-- ends the options: a file named -dash" bash -c "[ \"\$(cat '$tmp/out')\" = x ]"
check "-V prints the version, the number as field 2" bash -c "'$bin' -V | awk '{ exit !(\$2 ~ /^[0-9]+\\.[0-9]+\\.[0-9]+\$/) }'"
"$bin" dedup --re x </dev/null >/dev/null 2>"$tmp/err"; rc=$?
check "an ambiguous abbreviation (--re: --redis, --repair, --retry, --repeat): exit 2, one line" \
  bash -c "[ $rc -eq 2 ] && [ \$(wc -l <'$tmp/err') -eq 1 ] && grep -q \"ambiguous option '--re'\" '$tmp/err'"
"$bin" query --expect 5 "$tmp/p.sbloom" </dev/null >/dev/null 2>"$tmp/err"; rc=$?
check "an option of another command: exit 2, named" bash -c "[ $rc -eq 2 ] && grep -q \"'--expect' does not apply\" '$tmp/err'"
"$bin" dedup --expect </dev/null >/dev/null 2>"$tmp/err"; rc=$?
check "a missing value: exit 2, named" bash -c "[ $rc -eq 2 ] && grep -q 'option --expect needs a value' '$tmp/err'"
# (the windows' rows at 100k keys, not 1M: most of a run's time, and 30-40 s under an emulator)
"$bin" bench --quick --size 1MiB --isa scalar --window-keys 100k --json >"$tmp/bench.json" 2>/dev/null
check "bench --size 1MiB is 2^20 bytes" bash -c "grep -q '\"filter_bytes\": 1048576' '$tmp/bench.json'"
check "bench --json: the many writers measured at that size, every speed above 0" \
  jq -e '.writers.filter_bytes == 1048576 and .writers.threads >= 1 and
         ([.writers.add[], .writers.add_if_new[]] | length == 6 and all(. > 0))' "$tmp/bench.json"
check "bench --json: the windowed row (--window-keys 100k: one row of 100,000), speeds above 0, more memory than plain" \
  jq -e '.window.periods == 3 and .window.isa == "scalar" and (.window.rows | length == 1) and
         .window.rows[0].keys == 100000 and .window.rows[0].memory_ratio > 1 and
         ([.window.rows[0] | .plain_add_if_new_ns, .window_add_if_new_ns, .plain_contains_ns,
           .window_contains_ns] | all(. > 0))' "$tmp/bench.json"
check "bench --json: the fingerprint window's row at 1e-6, speeds above 0, less memory than the ring's" \
  jq -e '.window_fp.periods == 3 and .window_fp.fpp == 1e-06 and (.window_fp.rows | length == 1) and
         .window_fp.rows[0].keys == 100000 and .window_fp.rows[0].memory_ratio > 1 and
         .window_fp.rows[0].memory_ratio < .window.rows[0].memory_ratio and
         ([.window_fp.rows[0] | .plain_add_if_new_ns, .window_add_if_new_ns, .plain_contains_ns,
           .window_contains_ns] | all(. > 0))' "$tmp/bench.json"
exit_code 2 "$bin" bench --window-keys 999 # (1k to 1G: a usage error, one line, nothing run)
check "bench --window-keys 999: the error names the option and its range" grep -q -- '--window-keys takes 1k to 1G' "$tmp/err"
"$bin" bench --quick --size 1MiB --isa scalar --layout counting512 --window-keys 100k --json >"$tmp/bench.json" 2>/dev/null
check "bench --json, counting512: a whole document, no writers (its counters take one writer)" \
  jq -e '(.results | length > 0) and .writers == null' "$tmp/bench.json"
"$bin" bench --quick --size 1MiB --isa scalar --layout fp512-r13 --window-keys 100k --json >"$tmp/bench.json" 2>/dev/null
check "bench --json, fp512-r13: a remove row, its many writers, each row's second-line shares (under 5%)" \
  jq -e '(.results | length > 0) and ([.writers.add[], .writers.add_if_new[]] | length == 6 and all(. > 0)) and
         ([.results[].operation] | index("remove") != null) and
         ([.results[] | .second_line_absent_lookups, .second_line_spare_keys] | all(. >= 0 and . < 0.05))' "$tmp/bench.json"

# 7b. --strict: overload as an exit status (3), the warning said even with -q; a filter within
#     its plan exits 0. build without --expect grows (scalable) instead of planning 10M.
#     (A Bloom filter at 1e-2: a fingerprint filter stops instead, below.)
seq 1 50000 | "$bin" dedup --expect 1000 --fpp 0.01 --strict -q >/dev/null 2>"$tmp/err"; rc=$?
check "dedup --strict overfull: exit 3, the warning said even with -q" \
  bash -c "[ $rc -eq 3 ] && grep -q '^warning: .* 1000 planned' '$tmp/err'"
seq 1 500 | "$bin" dedup --expect 1000 --strict >/dev/null 2>&1; rc=$?
check "dedup --strict within the plan: exit 0" [ $rc -eq 0 ]
seq 1 50000 | "$bin" build -q --expect 1000 --fpp 0.01 --strict -o "$tmp/over.sbloom"; rc=$?
check "build --strict overfull: exit 3, the file saved" bash -c "[ $rc -eq 3 ] && '$bin' info '$tmp/over.sbloom' >/dev/null"
# 7c. A fingerprint filter (1e-6) past its plan: a key finds no room, and the run stops with one
#     line saying so; dedup has written every line up to its stop exactly once (the first lines
#     of awk's answer), build leaves the file as it was.
seq 1 20000 | "$bin" dedup --expect 1000 --state "$tmp/full.sbloom" >"$tmp/out" 2>"$tmp/err"; rc=$?
check "dedup past a fingerprint plan: exit 1, one line naming the full filter" \
  bash -c "[ $rc -eq 1 ] && [ \$(wc -l <'$tmp/err') -eq 1 ] && grep -q 'the filter is full: fp512-r19, planned for 1000 keys' '$tmp/err'"
check "... every line up to the stop written once" \
  bash -c "[ -s '$tmp/out' ] && cmp -s '$tmp/out' <(seq 1 20000 | head -n \$(wc -l <'$tmp/out'))"
check "... the state kept: each of its lines is in it" \
  bash -c "[ -z \"\$('$bin' query --quiet --absent '$tmp/full.sbloom' <(head -n 1000 '$tmp/out'))\" ]"
seq 1 20000 | "$bin" build -q --expect 1000 -o "$tmp/fp-full.sbloom" 2>"$tmp/err"; rc=$?
check "build past a fingerprint plan: exit 1, no file, the message" \
  bash -c "[ $rc -eq 1 ] && [ ! -e '$tmp/fp-full.sbloom' ] && grep -q 'the filter is full' '$tmp/err'"
seq 1 20000 | "$bin" build -q --expect 1000 --layout bloom -o "$tmp/bloom.sbloom" 2>"$tmp/err"; rc=$?
check "build --layout bloom at 1e-6: block512-k16, which takes lines past its plan" \
  bash -c "[ $rc -eq 0 ] && '$bin' info '$tmp/bloom.sbloom' | grep -q 'layout  *block512-k16'"
check "dedup --layout bloom: the Bloom layout the plan names" bash -c \
  "seq 10 | '$bin' dedup -v --expect 1k --fpp 1e-2 --layout bloom 2>&1 >/dev/null | grep -q '^filter: block512-k8,'"
# a named layout far larger than the plan's smallest (fp512-r19 below its remainder's reach:
# nearly empty lines) is made as asked, with one warning naming both; none for one within 4x
seq 1 1000 | "$bin" build --expect 10k --fpp 1e-8 --layout fp512-r19 -o "$tmp/r19.sbloom" 2>"$tmp/err"; rc=$?
check "build --layout fp512-r19 at 1e-8: made, one warning naming the smallest (fp512-r27)" \
  bash -c "[ $rc -eq 0 ] && '$bin' info '$tmp/r19.sbloom' | grep -q 'layout  *fp512-r19' &&
           [ \$(grep -c . '$tmp/err') -eq 1 ] && grep -q 'warning: fp512-r19 needs .*x the .* of the smallest layout for that plan (fp512-r27)' '$tmp/err'"
seq 1 1000 | "$bin" dedup --expect 10k --fpp 1e-8 --layout fp512-r19 2>"$tmp/err" >/dev/null
check "... dedup warns as build does" grep -q 'warning: fp512-r19 needs' "$tmp/err"
seq 1 1000 | "$bin" build -q --expect 10k --fpp 1e-8 --layout fp512-r19 -o "$tmp/r19.sbloom" 2>"$tmp/err"
check "... --quiet: no warning" bash -c "[ ! -s '$tmp/err' ]"
seq 1 1000 | "$bin" build --expect 10k --fpp 1e-8 --layout block512-k16 -o "$tmp/k16.sbloom" 2>"$tmp/err"
check "... block512-k16 at 1e-8 (1.8x the smallest): no warning" bash -c "! grep -q warning '$tmp/err'"
echo x | "$bin" dedup --redis 127.0.0.1:1 --name t --expect 1k --layout fp512-r19 >/dev/null 2>"$tmp/err"; rc=$?
if grep -q 'built without Redis support' "$tmp/err"; then # (the cross builds have no Redis)
  check "dedup --redis in a build without Redis: exit 2" [ $rc -eq 2 ]
else
  check "dedup --redis --layout fp512-r19: exit 2 before connecting, saying it takes a bit layout" \
    bash -c "[ $rc -eq 2 ] && grep -q 'takes a bit layout' '$tmp/err'"
fi
seq 1 1000 | "$bin" build -q -o "$tmp/grow.sbloom"
seq 1 20000 | "$bin" build -q --expect 20000 -o "$tmp/fp-plan.sbloom"
check "info of a fingerprint filter at its plan: its second lines, some keys and under 10%" \
  bash -c "'$bin' info '$tmp/fp-plan.sbloom' | awk '/^  second line  / { v = \$9 + 0; n++; ok = v > 0 && v < 10 } END { exit !(n == 1 && ok) }'"
check "... none for a Bloom filter" \
  bash -c "! '$bin' info '$tmp/bloom.sbloom' | grep -q 'second line'"
check "build without --expect: a scalable filter (not 10M planned)" \
  bash -c "'$bin' info '$tmp/grow.sbloom' | grep -q 'scalable'"
check "... whose stages at 1e-6 are fingerprint layouts" \
  bash -c "'$bin' info '$tmp/grow.sbloom' | grep -q '^  stage 0  *fp512-r'"
seq 1 100 | "$bin" remove "$tmp/grow.sbloom" 2>"$tmp/err"; rc=$?
check "remove from a growing fingerprint filter: those lines gone, the others kept" \
  bash -c "[ $rc -eq 0 ] && [ -z \"\$('$bin' query --quiet '$tmp/grow.sbloom' <(seq 1 100))\" ] &&
           [ -z \"\$('$bin' query --quiet --absent '$tmp/grow.sbloom' <(seq 101 1000))\" ]"
"$bin" merge -q -o "$tmp/grow-merged.sbloom" "$tmp/grow.sbloom" "$tmp/grow.sbloom" 2>"$tmp/err"; rc=$?
check "merge of growing fingerprint filters: exit 1, one line saying why, no file" \
  bash -c "[ $rc -eq 1 ] && [ \$(wc -l <'$tmp/err') -eq 1 ] && grep -q 'fingerprint stages' '$tmp/err' && [ ! -e '$tmp/grow-merged.sbloom' ]"
seq 1 1000 | "$bin" build -q --layout bloom -o "$tmp/grow-bloom.sbloom"
check "build --layout bloom without --expect: a scalable filter of Bloom stages" \
  bash -c "'$bin' info '$tmp/grow-bloom.sbloom' | grep -q '^  stage 0  *block512-k'"
seq 1 10 | "$bin" remove "$tmp/grow-bloom.sbloom" 2>"$tmp/err"; rc=$?
check "... from which remove refuses: exit 1, one line saying why" \
  bash -c "[ $rc -eq 1 ] && [ \$(wc -l <'$tmp/err') -eq 1 ] && grep -q 'with Bloom stages' '$tmp/err'"

# 8. Every error is one line, and an unreadable file is skipped as cat skips it.
"$bin" dedup "$tmp/p1" "$tmp/missing" "$tmp/p1" >"$tmp/out" 2>"$tmp/err"; rc=$?
check "dedup FILE MISSING FILE: exit 1, one line, the readable files deduped" \
  bash -c "[ $rc -eq 1 ] && [ \$(wc -l <'$tmp/err') -eq 1 ] && grep -q missing '$tmp/err' && printf 'b\na\n' | cmp -s - '$tmp/out'"
"$bin" info "$tmp/p1" >"$tmp/out" 2>"$tmp/err"; rc=$?
check "info NOT-A-FILTER: exit 1, one line on standard error, nothing on standard output" \
  bash -c "[ $rc -eq 1 ] && [ \$(wc -l <'$tmp/err') -eq 1 ] && [ ! -s '$tmp/out' ]"

finish
