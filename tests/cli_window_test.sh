#!/usr/bin/env bash
# dedup --forget-after on the wall clock, moved by faketime (Debian's faketime): a state file
# lets every distinct line through on day 0, none on days 10 and 29 (inside the 30-day window),
# every one again on day 41 (past it: forgotten between 30 and 40 days); a line first seen on day
# 15 is still held on day 41 although the day-0 lines are gone; info shows the window. Also the
# refusals: --forget-after with --layout, a malformed duration, --layout windowed. build, add and
# query --forget-after on the same clock, and their refusals; two --shared workers at once; a
# window that grows (no --expect).
# usage: cli_window_test.sh SIMDBLOOM_BINARY
set -u
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib.sh"
command -v faketime >/dev/null || { echo "FAIL: faketime is missing (apt-get install faketime)"; exit 1; }

seq -f 'https://example.org/page/%g' 1 2000 >"$tmp/day0"
seq -f 'https://example.org/late/%g' 1 500 >"$tmp/day15"
cat "$tmp/day0" "$tmp/day0" >"$tmp/twice"  # each line twice: written once
at() { # at DATE ARGS...: the command on that day (UTC)
  local when=$1; shift
  TZ=UTC timeout 60 faketime "$when 12:00:00" "$bin" "$@"
}
dedup() { at "$1" dedup --quiet --state "$tmp/s.sbloom" --forget-after 30d --expect 20k "${@:2}"; }

# --forget-after 30d: 3 periods of 10 days; a line is held for 30 days at least, and forgotten by
# 40 days at most
check "day 0: every distinct line, once" [ "$(dedup 2026-01-01 "$tmp/twice" | sort | uniq | wc -l)" -eq 2000 ]
check "day 0: no line twice" [ "$(dedup 2026-01-01 "$tmp/twice" | wc -l)" -eq 0 ]
check "day 10: the day-0 lines are still held" [ "$(dedup 2026-01-11 "$tmp/day0" | wc -l)" -eq 0 ]
check "day 15: new lines go through" [ "$(dedup 2026-01-16 "$tmp/day15" | wc -l)" -eq 500 ]
check "day 29: the day-0 lines are still held" [ "$(dedup 2026-01-30 "$tmp/day0" | wc -l)" -eq 0 ]
info=$(at 2026-01-16 info "$tmp/s.sbloom")
# (a fingerprint window, the default where it is smaller, keeps the 30 days as 6 periods of 5)
check "info names the window" grep -Eq "forgets after 2592000 s: (3 periods of 864000|6 periods of 432000) s" <<<"$info"
gens=$(sed -n 's/.* \([0-9]*\) generations.*/\1/p' <<<"$info" | head -1)
check "info lists the generations" [ -n "$gens" ] && [ "$(grep -c '^  generation' <<<"$info")" -eq "$gens" ]
check "... a generation more than the periods" grep -Eq "3 periods.*, 4 generations|6 periods.*, 7 generations" <<<"$info"
# day 41: the day-0 lines are past 30 days and one period: forgotten; the day-15 lines are
# inside their window: held
out=$(dedup 2026-02-11 "$tmp/day0" "$tmp/day15")
check "day 41: the day-0 lines come back" [ "$(grep -c /page/ <<<"$out")" -ge 1990 ]
check "day 41: the day-15 lines are still held" [ "$(grep -c /late/ <<<"$out")" -eq 0 ]
check "day 56: the day-0 lines, now seen on day 41, are held again" \
  [ "$(dedup 2026-02-26 "$tmp/day0" | wc -l)" -eq 0 ]
check "day 56: the day-15 lines are forgotten" \
  [ "$(dedup 2026-02-26 "$tmp/day15" | wc -l)" -ge 495 ]
# a query reads the file at its own time: on day 100 nothing of the file is left
check "query on day 100: nothing held" \
  [ "$(at 2026-04-11 query "$tmp/s.sbloom" "$tmp/day0" | wc -l)" -eq 0 ]
# build, add and query on the same clock: build on day 0, add on day 41 (the file first forgets
# the day-0 lines, then holds the new ones from day 41), query on day 60 (still held) and day 80
# (forgotten)
wf="$tmp/w.sbloom"
check "build --forget-after: exit 0" at 2026-01-01 build --quiet --forget-after 30d --expect 20k -o "$wf" "$tmp/day0"
check "build --forget-after: a windowed filter" grep -q "forgets after 2592000 s" <<<"$(at 2026-01-01 info "$wf")"
check "query on day 29: the built lines are held" \
  [ "$(at 2026-01-30 query "$wf" "$tmp/day0" | wc -l)" -eq 2000 ]
check "add on day 41: exit 0" at 2026-02-11 add --quiet --forget-after 30d "$wf" "$tmp/day15"
check "query on day 41: the day-0 lines are forgotten" \
  [ "$(at 2026-02-11 query "$wf" "$tmp/day0" | wc -l)" -le 10 ]
check "query on day 60: the lines added on day 41 are held" \
  [ "$(at 2026-03-02 query "$wf" "$tmp/day15" | wc -l)" -eq 500 ]
check "query on day 80: the lines added on day 41 are forgotten" \
  [ "$(at 2026-03-22 query --absent "$wf" "$tmp/day15" | wc -l)" -ge 495 ]
err=$(at 2026-02-11 add --forget-after 10d "$wf" "$tmp/day15" 2>&1 >/dev/null); rc=$?
check "add with another window: exit 1, one line naming both" \
  [ "$rc" -eq 1 -a "$(grep -c "forgets after 2592000 s.*asks for 864000 s" <<<"$err")" -eq 1 ]
check "query with another window: exit 1" [ "$(at 2026-02-11 query --forget-after 10d "$wf" "$tmp/day15" 2>/dev/null; echo $?)" = 1 ]
at 2026-01-01 build --quiet --expect 20k -o "$tmp/plain.sbloom" "$tmp/day0"
err=$(at 2026-01-01 query --forget-after 30d "$tmp/plain.sbloom" "$tmp/day0" 2>&1 >/dev/null); rc=$?
check "query --forget-after on a plain filter: exit 1, one line" \
  [ "$rc" -eq 1 -a "$(grep -c "never forgets" <<<"$err")" -eq 1 ]
"$bin" build --forget-after 1d --counting -o "$tmp/c.sbloom" </dev/null >/dev/null 2>&1
check "build --forget-after with --counting: usage error" [ $? -eq 2 ]
# without --state: a window of its own for one run
check "no state: each distinct line once" \
  [ "$(at 2026-01-01 dedup --quiet --forget-after 12h --expect 5k "$tmp/twice" | wc -l)" -eq 2000 ]
# refusals: one line each, exit 2
err=$("$bin" dedup --forget-after 3x </dev/null 2>&1 >/dev/null); rc=$?
check "a malformed duration: exit 2" [ "$rc" -eq 2 ]
check "a malformed duration: one line naming it" [ "$(grep -c "forget-after wants a duration" <<<"$err")" -eq 1 ]
"$bin" dedup --forget-after 1d --layout parquet </dev/null >/dev/null 2>&1
check "--forget-after with --layout: usage error" [ $? -eq 2 ]
# --shared: two workers at once on one windowed file, each half of the input (and the other
# half's first 500 lines): each distinct line written once between them, on day 0 and again on
# day 41, none on day 10
sf="$tmp/shared.sbloom"
# (a shared read-write mapping needs a little-endian host: on s390x --shared is refused, said so)
echo x | "$bin" dedup --shared "$tmp/probe.sbloom" --expect 1k >/dev/null 2>"$tmp/probe-err"
if grep -q "not supported by this build or host" "$tmp/probe-err"; then
  echo "SKIP: big-endian host: dedup --shared refuses (as documented), its window not run"
else
head -1000 "$tmp/day0" >"$tmp/half1"; tail -1000 "$tmp/day0" >"$tmp/half2"
cat "$tmp/half1" <(head -500 "$tmp/half2") >"$tmp/w1"; cat "$tmp/half2" <(head -500 "$tmp/half1") >"$tmp/w2"
shared_pair() { # shared_pair DATE: both workers at once; prints what they wrote together
  at "$1" dedup --quiet --shared "$sf" --forget-after 30d --expect 20k "$tmp/w1" >"$tmp/o1" &
  local p1=$!
  at "$1" dedup --quiet --shared "$sf" --forget-after 30d --expect 20k "$tmp/w2" >"$tmp/o2"
  local rc2=$?
  wait "$p1"; local rc1=$?
  [ "$rc1" -eq 0 ] && [ "$rc2" -eq 0 ] && cat "$tmp/o1" "$tmp/o2"
}
out=$(shared_pair 2026-01-01)
check "--shared day 0: every distinct line once between the workers" \
  [ "$(sort <<<"$out" | uniq | wc -l)" -eq 2000 -a "$(wc -l <<<"$out")" -eq 2000 ]
check "--shared: the file is a windowed filter, valid after the run" \
  grep -q "forgets after 2592000 s" <<<"$(at 2026-01-01 info "$sf")"
out=$(shared_pair 2026-01-11)
check "--shared day 10: nothing" [ -z "$out" ]
out=$(shared_pair 2026-02-11)
check "--shared day 41: every line once again" \
  [ "$(sort <<<"$out" | uniq | wc -l)" -ge 1990 -a "$(sort <<<"$out" | uniq -d | wc -l)" -eq 0 ]
err=$(at 2026-02-11 dedup --shared "$sf" --forget-after 10d "$tmp/w1" 2>&1 >/dev/null); rc=$?
check "--shared with another window: exit 1, naming both" \
  [ "$rc" -eq 1 -a "$(grep -c "forgets after 2592000 s.*asks for 864000 s" <<<"$err")" -eq 1 ]
fi
# --forget-after without --expect: a window that grows (from 1M lines a window, a third a
# period): 400k distinct lines in one period make it grow; held on day 10, every one back on day
# 45, when the older windows are gone (one left, large enough for 400k a period)
seq -f 'https://example.org/many/%g' 1 400000 >"$tmp/many"
grow() { at "$1" dedup --quiet --state "$tmp/g.sbloom" --forget-after 30d "${@:2}"; }
check "growing day 0: every distinct line" [ "$(grow 2026-01-01 "$tmp/many" "$tmp/many" | wc -l)" -eq 400000 ]
info=$(at 2026-01-01 info "$tmp/g.sbloom")
check "growing: info says it grows" grep -q "grows as lines come" <<<"$info"
check "growing: it grew (two windows alive)" grep -q "windows           2 alive" <<<"$info"
check "growing day 10: nothing" [ "$(grow 2026-01-11 "$tmp/many" | wc -l)" -eq 0 ]
check "growing day 45: every line again" [ "$(grow 2026-02-15 "$tmp/many" | wc -l)" -eq 400000 ]
check "growing day 45: the older window is freed" \
  grep -q "windows           1 alive" <<<"$(at 2026-02-15 info "$tmp/g.sbloom")"
err=$(grow 2026-02-15 --expect 1M </dev/null 2>&1 >/dev/null); rc=$?
check "growing state given --expect: exit 1, naming both plans" \
  [ "$rc" -eq 1 -a "$(grep -c "growing).*asks for layout windowed (forgets after 2592000 s) for 1000000" <<<"$err")" -eq 1 ]
check "build --forget-after without --expect: a growing window" \
  grep -q "grows as lines come" <<<"$(at 2026-01-01 build --quiet --forget-after 1d -o "$tmp/gb.sbloom" "$tmp/day0" && at 2026-01-01 info "$tmp/gb.sbloom")"
err=$(at 2026-01-01 dedup --shared "$tmp/gs.sbloom" --forget-after 1d "$tmp/day0" 2>&1 >/dev/null); rc=$?
check "--shared --forget-after without --expect: exit 1, asks for it" \
  [ "$rc" -eq 1 -a "$(grep -c "give --expect N" <<<"$err")" -eq 1 ]
"$bin" dedup --layout windowed </dev/null >/dev/null 2>&1
check "--layout windowed: usage error" [ $? -eq 2 ]

# A clock once in the future (a bad RTC): the file's window is ahead of the clocks after it.
# Every command that writes it refuses it (exit 1, one line naming both times and the repair);
# query and info warn; info --rewind brings it back, keeping every line held a whole window from
# then; after that the window forgets on the wall clock again. A clock set back by days: the same.
ff="$tmp/future.sbloom"
at 2100-01-01 dedup --quiet --state "$ff" --forget-after 30d --expect 20k "$tmp/day0" >/dev/null
err=$(at 2026-03-01 dedup --quiet --state "$ff" "$tmp/day15" 2>&1 >"$tmp/out"); rc=$?
check "a window ahead of the clock: dedup exits 1, writes nothing" [ "$rc" -eq 1 -a ! -s "$tmp/out" ]
check "... one line naming both times and the repair" \
  [ "$(grep -c "began at 2099-12-.*this clock says 2026-03-01 12:00:00 UTC.*info --rewind" <<<"$err")" -eq 1 ]
err=$(at 2026-03-01 add --quiet "$ff" "$tmp/day15" 2>&1); rc=$?
check "... add exits 1 too" [ "$rc" -eq 1 -a "$(grep -c "window is ahead" <<<"$err")" -eq 1 ]
err=$(at 2026-03-01 query "$ff" "$tmp/day0" 2>&1 >"$tmp/out"); rc=$?
check "... query answers (exit 0) with a warning" \
  [ "$rc" -eq 0 -a "$(wc -l <"$tmp/out")" -eq 2000 -a "$(grep -c "warning: .*window is ahead" <<<"$err")" -eq 1 ]
check "... info warns too" grep -q "warning: .*window is ahead" <<<"$(at 2026-03-01 info "$ff" 2>&1 >/dev/null)"
check "info --rewind: exit 0" at 2026-03-01 info --rewind "$ff"
check "after the rewind: the lines are held" [ "$(at 2026-03-02 dedup --quiet --state "$ff" "$tmp/day0" | wc -l)" -eq 0 ]
check "after the rewind: new lines go through" [ "$(at 2026-03-02 dedup --quiet --state "$ff" "$tmp/day15" | wc -l)" -eq 500 ]
check "a window from the rewind on: forgotten by 40 days after it" \
  [ "$(at 2026-04-11 dedup --quiet --state "$ff" "$tmp/day0" | wc -l)" -ge 1990 ]
check "info --rewind on a window that is not ahead: exit 0, left as it is" \
  grep -q "not ahead" <<<"$(at 2026-04-11 info --rewind "$ff")"
err=$(at 2026-03-20 dedup --quiet --state "$ff" "$tmp/day15" 2>&1 >/dev/null); rc=$?
check "a clock set back by 22 days: refused as well" [ "$rc" -eq 1 -a "$(grep -c "window is ahead" <<<"$err")" -eq 1 ]
silent() { "$@" >/dev/null; }
check "... a clock back by less than a quarter period is not" \
  silent at 2026-04-10 dedup --quiet --state "$ff" "$tmp/day15"

# merge of windowed files saved in different periods: each brought to the clock, then merged
# (Bloom windows: a fingerprint window's entries keep part of each key, and have no union)
wa="$tmp/wa.sbloom" wb="$tmp/wb.sbloom"
at 2026-05-01 build --quiet --forget-after 30d --expect 20k --layout bloom -o "$wa" "$tmp/day0"
at 2026-05-15 build --quiet --forget-after 30d --expect 20k --layout bloom -o "$wb" "$tmp/day15"
check "merge of windows saved in different periods: exit 0" at 2026-05-20 merge --quiet -o "$tmp/wm.sbloom" "$wa" "$wb"
check "... the merge holds both" \
  [ "$(at 2026-05-21 query "$tmp/wm.sbloom" "$tmp/day0" "$tmp/day15" | wc -l)" -eq 2500 ]
fa="$tmp/fa.sbloom" fb="$tmp/fb.sbloom"
at 2026-05-01 build --quiet --forget-after 30d --expect 20k -o "$fa" "$tmp/day0"
at 2026-05-15 build --quiet --forget-after 30d --expect 20k -o "$fb" "$tmp/day15"
check "build --forget-after: a fingerprint window, smaller than the Bloom one" \
  [ "$(stat -c %s "$fa")" -lt "$(stat -c %s "$wa")" ]
err=$(at 2026-05-20 merge --quiet -o "$tmp/fm.sbloom" "$fa" "$fb" 2>&1); rc=$?
check "merge of fingerprint windows: refused, saying why" [ "$rc" -ne 0 ] && grep -q "no union" <<<"$err"
check "... and the windows answer as before" \
  [ "$(at 2026-05-21 query "$fa" "$tmp/day0" | wc -l)" -eq 2000 ]

# durations: a unit is required; a window of 3 periods of whole seconds; 100 years at most
for bad in 30 1s 4s 36501d; do
  "$bin" dedup --forget-after "$bad" </dev/null >/dev/null 2>&1
  check "--forget-after $bad: usage error" [ $? -eq 2 ]
done
sf3="$tmp/s3.sbloom"
echo once >"$tmp/once"
# (the clock frozen at each second, -f: the wrapper's running clock starts before the program
# does, about a second before on a loaded machine, which moved the first line into period 1)
t=2026-06-01
check "--forget-after 3s: written at 0 s" [ "$(TZ=UTC faketime -f "$t 12:00:00" "$bin" dedup --quiet --state "$sf3" --forget-after 3s --expect 10 "$tmp/once" | wc -l)" -eq 1 ]
check "... held at 2 s" [ "$(TZ=UTC faketime -f "$t 12:00:02" "$bin" dedup --quiet --state "$sf3" "$tmp/once" | wc -l)" -eq 0 ]
check "... forgotten by 4 s (4/3 of the window)" [ "$(TZ=UTC faketime -f "$t 12:00:04" "$bin" dedup --quiet --state "$sf3" "$tmp/once" | wc -l)" -eq 1 ]

# messages
at() { TZ=UTC timeout 60 faketime "$1 12:00:05" "$bin" "${@:2}"; } # (after the 3 s window's runs)
err=$(at 2026-06-01 remove "$sf3" "$tmp/once" 2>&1); rc=$?
check "remove on a windowed filter: exit 1, saying it forgets by itself" \
  [ "$rc" -eq 1 -a "$(grep -c "windowed filter: it forgets lines by itself" <<<"$err")" -eq 1 ]
check "--state with --forget-after and no --expect on a planned window: its plan is used" \
  silent at 2026-06-01 dedup --quiet --state "$sf3" --forget-after 3s "$tmp/once"
check "info of a window: one layout line" [ "$(at 2026-06-01 info "$sf3" | grep -c "^  layout")" -eq 1 ]
seq -f 'burst-%g' 1 100 >"$tmp/burst"
err=$(at 2026-06-01 dedup --state "$tmp/small.sbloom" --forget-after 30d --expect 30 "$tmp/burst" 2>&1 >/dev/null)
check "an overfilled window: the advice keeps the window" \
  [ "$(grep -c "one period took 100 distinct lines" <<<"$err")" -eq 1 -a "$(grep -c -- "--forget-after 30d --expect" <<<"$err")" -eq 1 ]
finish
