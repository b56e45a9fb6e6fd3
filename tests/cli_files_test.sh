#!/usr/bin/env bash
# Filter files from the command line: build, add, query, info, merge, fold, remove (counting
# filters), and dedup --state (the crawler-restart story, a killed run included).
# usage: cli_files_test.sh SIMDBLOOM_BINARY URL_STREAM_FILE
set -u
bin=$1
stream=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib.sh"

awk '!seen[$0]++' "$stream" >"$tmp/distinct"
total=$(wc -l <"$tmp/distinct")
head -n 50000 "$tmp/distinct" >"$tmp/a"
tail -n +50001 "$tmp/distinct" >"$tmp/b"

# build + query: every added line is present; lines never added are mostly absent.
# (Bloom filters: the merges below take bit filters, and 1e-4 plans a fingerprint one)
"$bin" build --quiet --expect 100k --fpp 1e-4 --layout block512-k16 -o "$tmp/a.sbloom" "$tmp/a"
check "build writes a file" test -s "$tmp/a.sbloom"
"$bin" query --quiet "$tmp/a.sbloom" "$tmp/a" >"$tmp/present"
check "every built line is present" cmp -s "$tmp/present" "$tmp/a"
"$bin" query --quiet --absent "$tmp/a.sbloom" "$tmp/b" >"$tmp/absent"
absent=$(wc -l <"$tmp/absent"); others=$(wc -l <"$tmp/b")
check "lines never added are absent but for false positives ($absent of $others)" \
  bash -c "[ $((others - absent)) -le 20 ]"

# query over a mapped file writes each run of chosen lines from where it lies in the file; over a
# pipe it copies them. Lines present and absent interleaved, every third with a CR (the key drops
# it, the output keeps it): the same answers both ways, and the present and absent lines are
# the input, each exactly once.
paste -d '\n' "$tmp/a" "$tmp/b" | awk 'NR % 3 == 0 { printf "%s\r\n", $0; next } { print }' \
  >"$tmp/mixed"
"$bin" query --quiet "$tmp/a.sbloom" "$tmp/mixed" >"$tmp/qp"
"$bin" query --quiet --absent "$tmp/a.sbloom" "$tmp/mixed" >"$tmp/qa"
cat "$tmp/mixed" | "$bin" query --quiet "$tmp/a.sbloom" >"$tmp/qp_pipe"
cat "$tmp/mixed" | "$bin" query --quiet --absent "$tmp/a.sbloom" >"$tmp/qa_pipe"
check "query over a mapped file answers as over a pipe (present lines)" cmp -s "$tmp/qp" "$tmp/qp_pipe"
check "query over a mapped file answers as over a pipe (absent lines)" cmp -s "$tmp/qa" "$tmp/qa_pipe"
check "present and absent lines are the input, each once" \
  bash -c "sort '$tmp/qp' '$tmp/qa' | cmp -s - <(sort '$tmp/mixed')"
lines=$(wc -l <"$tmp/mixed") present=$(wc -l <"$tmp/qp") absent=$(wc -l <"$tmp/qa")
"$bin" query -v "$tmp/a.sbloom" "$tmp/mixed" 2>"$tmp/err" >/dev/null
check "query's summary counts the present lines it wrote (mapped)" \
  grep -qx "simdbloom query: $lines lines, $present present" "$tmp/err"
cat "$tmp/mixed" | "$bin" query -v --absent "$tmp/a.sbloom" 2>"$tmp/err" >/dev/null
check "query's summary counts the absent lines it wrote (pipe)" \
  grep -qx "simdbloom query: $lines lines, $absent absent" "$tmp/err"
"$bin" query -v --absent "$tmp/a.sbloom" "$tmp/mixed" 2>"$tmp/err" >/dev/null
check "query's summary counts the absent lines it wrote (mapped)" \
  grep -qx "simdbloom query: $lines lines, $absent absent" "$tmp/err"
awk 'NR % 2 == 1' "$tmp/mixed" >"$tmp/mixed_a" # a's lines, CRs and all
check "every added line is present, in order, its CR kept" \
  awk 'NR == FNR { want[++n] = $0; next } $0 == want[i + 1] { i++ } END { exit i != n }' \
  "$tmp/mixed_a" "$tmp/qp"

# info: the fields a user asks for, and a damaged file is refused.
"$bin" info "$tmp/a.sbloom" >"$tmp/info"
for field in layout size 'items added' fill 'estimated items' planned 'fpp now' checksums isa; do
  check "info shows '$field'" grep -q "^  $field" "$tmp/info"
done
check "info counts the items" grep -q "items added *50000" "$tmp/info"
cp "$tmp/a.sbloom" "$tmp/bad.sbloom"
printf '\xff' | dd of="$tmp/bad.sbloom" bs=1 seek=5000 conv=notrunc 2>/dev/null
"$bin" info "$tmp/bad.sbloom" >/dev/null 2>"$tmp/err"; rc=$?
check "info on a damaged file: exit 1 and says so" bash -c "[ $rc -eq 1 ] && grep -q checksum '$tmp/err'"
check "the damage is named in one line: the payload's checksum" \
  bash -c "[ \$(wc -l <'$tmp/err') -eq 1 ] && grep -q 'payload checksum mismatch' '$tmp/err'"
cp "$tmp/a.sbloom" "$tmp/bad-header.sbloom"
printf '\x07' | dd of="$tmp/bad-header.sbloom" bs=1 seek=40 conv=notrunc 2>/dev/null
"$bin" info "$tmp/bad-header.sbloom" >/dev/null 2>"$tmp/err"
check "a header field changed under its checksum: the header's checksum is named" \
  grep -q 'header checksum mismatch' "$tmp/err"
"$bin" query "$tmp/bad.sbloom" "$tmp/a" >"$tmp/out" 2>/dev/null; rc=$?
check "query refuses a damaged filter and prints nothing" bash -c "[ $rc -eq 1 ] && [ ! -s '$tmp/out' ]"
head -c 100 "$tmp/a.sbloom" >"$tmp/short.sbloom"
"$bin" info "$tmp/short.sbloom" >/dev/null 2>"$tmp/err"
check "a truncated file is named as such" grep -q truncated "$tmp/err"

# add: the file grows by the new lines and is saved back.
cp "$tmp/a.sbloom" "$tmp/ab.sbloom"
"$bin" add --quiet "$tmp/ab.sbloom" "$tmp/b"
"$bin" query --quiet "$tmp/ab.sbloom" "$tmp/distinct" >"$tmp/present"
check "after add, every line is present" cmp -s "$tmp/present" "$tmp/distinct"
"$bin" add --quiet "$tmp/missing.sbloom" "$tmp/b" 2>"$tmp/err"; rc=$?
check "add to a missing file: exit 1, named" bash -c "[ $rc -eq 1 ] && grep -q missing.sbloom '$tmp/err'"

# merge: the union of filters built with the same plan; different plans are refused.
"$bin" build --quiet --expect 100k --fpp 1e-4 --layout block512-k16 -o "$tmp/b.sbloom" "$tmp/b"
"$bin" merge --quiet -o "$tmp/merged.sbloom" "$tmp/a.sbloom" "$tmp/b.sbloom"
check "merged bits equal adding both" cmp -s <(tail -c +129 "$tmp/merged.sbloom") <(tail -c +129 "$tmp/ab.sbloom")
check "merged filter holds every line" bash -c "'$bin' query --quiet '$tmp/merged.sbloom' '$tmp/distinct' | cmp -s - '$tmp/distinct'"
"$bin" build --quiet --expect 1k --layout block512-k16 -o "$tmp/small.sbloom" "$tmp/a"
"$bin" merge -o "$tmp/x.sbloom" "$tmp/a.sbloom" "$tmp/small.sbloom" 2>"$tmp/err"; rc=$?
check "merging different plans: exit 1, no output file" bash -c "[ $rc -eq 1 ] && [ ! -e '$tmp/x.sbloom' ] && grep -q 'different layouts or sizes' '$tmp/err'"

# fold: a filter planned for 2M keys holding 50k shrinks and keeps every key.
"$bin" build --quiet --expect 2M --fpp 1e-4 --layout block512-k16 -o "$tmp/big.sbloom" "$tmp/a"
"$bin" fold --fpp 1e-4 -o "$tmp/folded.sbloom" "$tmp/big.sbloom" 2>"$tmp/fold"
big=$(stat -c %s "$tmp/big.sbloom"); folded=$(stat -c %s "$tmp/folded.sbloom")
check "fold shrinks ($big -> $folded bytes)" bash -c "[ $folded -lt $((big / 8)) ]"
"$bin" query --quiet "$tmp/folded.sbloom" "$tmp/a" >"$tmp/present"
check "a folded filter still holds every key" cmp -s "$tmp/present" "$tmp/a"
"$bin" fold -o "$tmp/f2" "$tmp/big.sbloom" 2>/dev/null; rc=$?
check "fold without --fpp is a usage error" bash -c "[ $rc -eq 2 ]"

# dedup --state: two runs over halves of the stream give what one run gives.
half=$(( $(wc -l <"$stream") / 2 ))
head -n "$half" "$stream" >"$tmp/s1"; tail -n +"$((half + 1))" "$stream" >"$tmp/s2"
"$bin" dedup --quiet --state "$tmp/visited.sbloom" --fpp 1e-9 "$tmp/s1" >"$tmp/o1"
"$bin" dedup --quiet --state "$tmp/visited.sbloom" --fpp 1e-9 "$tmp/s2" >"$tmp/o2"
check "restarted dedup equals one run" bash -c "cat '$tmp/o1' '$tmp/o2' | cmp -s - '$tmp/distinct'"
"$bin" dedup --quiet --state "$tmp/visited.sbloom" "$stream" >"$tmp/o3"
check "a third run over seen lines writes nothing" test ! -s "$tmp/o3"
"$bin" dedup --quiet --state "$tmp/bad.sbloom" "$tmp/s1" >"$tmp/o4" 2>"$tmp/err"; rc=$?
check "a damaged state file: exit 1, no output" bash -c "[ $rc -eq 1 ] && [ ! -s '$tmp/o4' ]"
"$bin" dedup --checkpoint 5 "$tmp/s1" >/dev/null 2>&1; rc=$?
check "--checkpoint without --state is a usage error" bash -c "[ $rc -eq 2 ]"

# A run killed with SIGKILL after checkpoints, then rerun over the whole input: nothing lost, and
# only lines written since the last checkpoint are written again.
rm -f "$tmp/visited2.sbloom"
( while IFS= read -r line; do printf '%s\n' "$line"; done <"$stream" | pv_sleep=1 awk '{print; if (NR % 20000 == 0) system("sleep 0.4")}' ) |
  "$bin" dedup --quiet --state "$tmp/visited2.sbloom" --checkpoint 1 --fpp 1e-9 >"$tmp/k1" &
pid=$!
for _ in $(seq 1 600); do [ -s "$tmp/visited2.sbloom" ] && break; sleep 0.1; done  # a checkpoint
sleep 1.5
alive=0; kill -0 "$pid" 2>/dev/null && alive=1
pkill -9 -P $$ -f "dedup --quiet --state $tmp/visited2.sbloom" 2>/dev/null || kill -9 "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
check "dedup was still running when it was killed" [ $alive -eq 1 ]
check "the killed run left a state file" test -s "$tmp/visited2.sbloom"
checkpointed=$("$bin" info "$tmp/visited2.sbloom" 2>/dev/null | awk '/items (added|held)/ {print $3}')
"$bin" dedup --quiet --state "$tmp/visited2.sbloom" --fpp 1e-9 "$stream" >"$tmp/k2"
lost=$(cat "$tmp/k1" "$tmp/k2" | sort -u | comm -13 - <(sort "$tmp/distinct") | wc -l)
again=$(sort "$tmp/k1" "$tmp/k2" | uniq -d | wc -l)
written=$(wc -l <"$tmp/k1")
distinct=$(wc -l <"$tmp/distinct")
check "the kill came mid-stream: 0 < $written lines written < $distinct" \
  bash -c "[ $written -gt 0 ] && [ $written -lt $distinct ]"
check "a checkpoint came before the kill: $checkpointed lines in the saved state" \
  bash -c "[ '${checkpointed:-0}' -gt 0 ]"
check "after a kill and a rerun no line is lost ($lost lost)" bash -c "[ $lost -eq 0 ]"
check "only lines since the last checkpoint repeat: $again <= $written - ${checkpointed:-0}" \
  bash -c "[ $again -le \$(( $written - ${checkpointed:-0} )) ]"

# --normalize url: spellings of one URL are one key; the first spelling is written; build and
# query agree when both normalize.
printf 'HTTP://Example.com:80/a/./b#x\nhttp://example.com/a/b\nhttps://example.com/a/b\nnot a url\nnot a url\nhttp://example.com/%%7Euser\nhttp://example.com/~user\n' >"$tmp/spellings"
"$bin" dedup --quiet --normalize url "$tmp/spellings" >"$tmp/out"
check "normalized dedup keeps the first spelling of each URL" cmp -s "$tmp/out" \
  <(printf 'HTTP://Example.com:80/a/./b#x\nhttps://example.com/a/b\nnot a url\nhttp://example.com/%%7Euser\n')
"$bin" build --quiet --normalize url -o "$tmp/n.sbloom" <(printf 'http://EXAMPLE.com/x/../y\n')
"$bin" query --quiet --normalize url "$tmp/n.sbloom" <(printf 'http://example.com:80/y#frag\nhttp://example.com/z\n') >"$tmp/out"
check "build and query agree under --normalize url" cmp -s "$tmp/out" <(printf 'http://example.com:80/y#frag\n')
"$bin" dedup --normalize path "$tmp/spellings" >/dev/null 2>&1; rc=$?
check "--normalize with an unknown form is a usage error" bash -c "[ $rc -eq 2 ]"

# allow: known false positives of a weak filter, listed beside it, are then reported absent,
# and only they: the filter's real keys stay present.
head -n 1000 "$tmp/a" >"$tmp/in"; sed -n '1001,6000p' "$tmp/a" >"$tmp/out_keys"
"$bin" build --quiet --expect 1000 --fpp 0.2 -o "$tmp/weak.sbloom" "$tmp/in"
"$bin" query --quiet "$tmp/weak.sbloom" "$tmp/out_keys" >"$tmp/fps"
fps=$(wc -l <"$tmp/fps")
check "a 20% filter has false positives to allow ($fps)" bash -c "[ $fps -gt 100 ]"
"$bin" allow --quiet "$tmp/weak.sbloom" "$tmp/fps"
check "allow writes FILTER.allow" test -s "$tmp/weak.sbloom.allow"
"$bin" query --quiet "$tmp/weak.sbloom" "$tmp/out_keys" >"$tmp/fps2"
check "allowed false positives are reported absent" test ! -s "$tmp/fps2"
"$bin" query --quiet "$tmp/weak.sbloom" "$tmp/in" >"$tmp/present"
check "the filter's keys stay present" cmp -s "$tmp/present" "$tmp/in"
cp "$tmp/weak.sbloom.allow" "$tmp/allow.before"
"$bin" allow -v "$tmp/weak.sbloom" "$tmp/fps" 2>"$tmp/err"
check "allowing again adds nothing: 0 new keys, the list unchanged" bash -c \
  "grep -q '^simdbloom allow: 0 new keys, $fps in ' '$tmp/err' && cmp -s '$tmp/allow.before' '$tmp/weak.sbloom.allow'"
printf 'x' | dd of="$tmp/weak.sbloom.allow" bs=1 seek=70 conv=notrunc 2>/dev/null
"$bin" query --quiet "$tmp/weak.sbloom" "$tmp/in" >"$tmp/out" 2>"$tmp/err"; rc=$?
check "a damaged allow-list stops query: exit 1, named" bash -c "[ $rc -eq 1 ] && grep -q 'weak.sbloom.allow' '$tmp/err'"
"$bin" allow --quiet "$tmp/none.sbloom" "$tmp/fps" 2>/dev/null; rc=$?
check "allow needs an existing filter" bash -c "[ $rc -eq 1 ]"

# Counting filters: build --counting, remove (refusals counted, plain filters refused), query,
# add, info, and the commands that take only plain filters say so.
"$bin" build --quiet --counting --expect 100k --fpp 1e-3 -o "$tmp/c.sbloom" "$tmp/a"
"$bin" query --quiet "$tmp/c.sbloom" "$tmp/a" >"$tmp/present"
check "every line of a counting build is present" cmp -s "$tmp/present" "$tmp/a"
"$bin" info "$tmp/c.sbloom" >"$tmp/info"
for field in layout size 'items held' saturated planned 'fpp now' checksums isa; do
  check "info on a counting filter shows '$field'" grep -q "^  $field" "$tmp/info"
done
check "info names the counting layout and its items" bash -c "grep -q counting512 '$tmp/info' && grep -q 'items held *50000' '$tmp/info'"
head -n 20000 "$tmp/a" >"$tmp/gone"
tail -n +20001 "$tmp/a" >"$tmp/kept"
head -n 1000 "$tmp/b" >"$tmp/never"
cat "$tmp/gone" "$tmp/never" | "$bin" remove -v "$tmp/c.sbloom" 2>"$tmp/err"; rc=$?
check "remove: exit 0, counts removed and refused lines" bash -c "[ $rc -eq 0 ] && grep -Eq '21000 lines, 2[0-9]{4} removed, [0-9]+ not in the filter' '$tmp/err'"
refused=$(sed -E 's/.* ([0-9]+) not in the filter.*/\1/' "$tmp/err")
check "remove refuses most never-added lines (refused $refused of 1000)" bash -c "[ $refused -ge 980 ] && [ $refused -le 1000 ]"
"$bin" query --quiet "$tmp/c.sbloom" "$tmp/kept" >"$tmp/present"
check "every line not removed is still present" cmp -s "$tmp/present" "$tmp/kept"
"$bin" query --quiet --absent "$tmp/c.sbloom" "$tmp/gone" >"$tmp/absent"
absent=$(wc -l <"$tmp/absent")
check "removed lines answer absent but for false positives ($absent of 20000)" bash -c "[ $absent -ge 19900 ]"
"$bin" add --quiet "$tmp/c.sbloom" "$tmp/gone"
check "add to a counting file brings lines back" bash -c "'$bin' query --quiet '$tmp/c.sbloom' '$tmp/a' | cmp -s - '$tmp/a'"
"$bin" remove "$tmp/a.sbloom" "$tmp/gone" 2>"$tmp/err"; rc=$?
check "remove on a plain filter: exit 1, says why" bash -c "[ $rc -eq 1 ] && grep -q 'build --counting' '$tmp/err'"
"$bin" merge -o "$tmp/x.sbloom" "$tmp/a.sbloom" "$tmp/c.sbloom" 2>"$tmp/err"; rc=$?
check "merge refuses a counting filter: exit 1, says why" bash -c "[ $rc -eq 1 ] && grep -q 'is a counting filter: merge takes bit filters only' '$tmp/err' && [ ! -e '$tmp/x.sbloom' ]"
"$bin" build --counting --layout parquet -o "$tmp/x.sbloom" "$tmp/a" 2>/dev/null; rc=$?
check "--counting with --layout is a usage error" bash -c "[ $rc -eq 2 ] && [ ! -e '$tmp/x.sbloom' ]"
"$bin" remove "$tmp/missing.sbloom" "$tmp/gone" 2>"$tmp/err"; rc=$?
check "remove from a missing file: exit 1, named" bash -c "[ $rc -eq 1 ] && grep -q missing.sbloom '$tmp/err'"

# Fingerprint filters: what build picks at 1e-6 (a third smaller than block512-k16), info, remove
# (exact for lines added once), and merge refuses them.
"$bin" build --quiet --expect 100k --fpp 1e-6 -o "$tmp/fp.sbloom" "$tmp/a"
"$bin" build --quiet --expect 100k --fpp 1e-6 --layout block512-k16 -o "$tmp/k16.sbloom" "$tmp/a"
"$bin" info "$tmp/fp.sbloom" >"$tmp/info"
check "build at 1e-6 picks fp512-r19, smaller than block512-k16" bash -c \
  "grep -q '^  layout *fp512-r19' '$tmp/info' && [ \$(stat -c %s '$tmp/fp.sbloom') -lt \$(( \$(stat -c %s '$tmp/k16.sbloom') * 7 / 10 )) ]"
for field in layout size 'items held' fill 'estimated items' planned 'fpp now' checksums isa; do
  check "info on a fingerprint filter shows '$field'" grep -q "^  $field" "$tmp/info"
done
check "info counts its entries" bash -c "grep -q 'items held *50000' '$tmp/info' && grep -q 'slots in use' '$tmp/info'"
"$bin" query --quiet "$tmp/fp.sbloom" "$tmp/a" >"$tmp/present"
check "every line of a fingerprint build is present" cmp -s "$tmp/present" "$tmp/a"
cat "$tmp/gone" "$tmp/never" | "$bin" remove -v "$tmp/fp.sbloom" 2>"$tmp/err"; rc=$?
check "remove from a fingerprint filter: exit 0, 20000 removed, the 1000 never added refused" \
  bash -c "[ $rc -eq 0 ] && grep -q '21000 lines, 20000 removed, 1000 not in the filter' '$tmp/err'"
check "... the removed lines absent, the others present" bash -c \
  "[ -z \"\$('$bin' query --quiet '$tmp/fp.sbloom' '$tmp/gone')\" ] && '$bin' query --quiet '$tmp/fp.sbloom' '$tmp/kept' | cmp -s - '$tmp/kept'"
"$bin" merge -o "$tmp/x.sbloom" "$tmp/fp.sbloom" "$tmp/fp.sbloom" 2>"$tmp/err"; rc=$?
check "merge refuses a fingerprint filter: exit 1, says why" bash -c "[ $rc -eq 1 ] && grep -q 'is a fingerprint filter (fp512-r19): merge takes bit filters only' '$tmp/err' && [ ! -e '$tmp/x.sbloom' ]"

# --threads: output, filters and answers do not depend on the thread count.
for t in 1 2 5; do
  "$bin" dedup --quiet --threads $t --normalize url --fpp 1e-9 "$stream" >"$tmp/t$t"
  "$bin" build --quiet --threads $t --expect 200k -o "$tmp/t$t.sbloom" "$stream"
  "$bin" query --quiet --absent --threads $t "$tmp/a.sbloom" "$tmp/b" >"$tmp/q$t"
done
check "dedup output is the same with 1, 2 and 5 threads" bash -c "cmp -s '$tmp/t1' '$tmp/t2' && cmp -s '$tmp/t1' '$tmp/t5'"
check "built filters are the same with 1, 2 and 5 threads" bash -c "cmp -s '$tmp/t1.sbloom' '$tmp/t2.sbloom' && cmp -s '$tmp/t1.sbloom' '$tmp/t5.sbloom'"
check "query answers are the same with 1, 2 and 5 threads" bash -c "cmp -s '$tmp/q1' '$tmp/q2' && cmp -s '$tmp/q1' '$tmp/q5'"
"$bin" dedup --quiet --threads 0 --normalize url --fpp 1e-9 "$stream" >"$tmp/t0" 2>&1; rc=$?
check "--threads 0 means every core, as in the library: exit 0, the same output" \
  bash -c "[ $rc -eq 0 ] && cmp -s '$tmp/t0' '$tmp/t1'"
"$bin" dedup --threads 33 "$tmp/s1" >/dev/null 2>&1; rc=$?
check "--threads 33 is a usage error" bash -c "[ $rc -eq 2 ]"

finish
