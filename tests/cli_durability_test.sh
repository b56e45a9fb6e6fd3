#!/usr/bin/env bash
# dedup --state's promise, checked at the system-call level with the traced build of the command
# (trace_syscalls.h): at every checkpoint the output is written (and fsynced, when it is a file)
# before the state is renamed into place, so a crash at any moment leaves a state that holds no
# line the output lacks; the same command run again writes every line the crash kept back, once.
# The clock moves 10 s at every reading (SIMDBLOOM_TRACE_CLOCK_STEP), so --checkpoint 1 saves
# after every batch of lines.
# usage: cli_durability_test.sh SIMDBLOOM_TRACED URL_STREAM_FILE
set -u
bin=$1
stream=$2
tmp=$(mktemp -d)
tmp=$(cd "$tmp" && pwd -P) # the path the traced descriptors resolve to
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib.sh"
export SIMDBLOOM_TRACE_CLOCK_STEP=10
awk '!s[$0]++' "$stream" >"$tmp/distinct"
run() { "$bin" dedup --quiet --fpp 1e-9 --expect 200000 --state "$tmp/state" --checkpoint 1 "$stream"; }

# 1. The order at every checkpoint: the output's last write, its fsync, then the state's rename.
SIMDBLOOM_TRACE="$tmp/log" run >"$tmp/out"
check "dedup --state with checkpoints equals awk" cmp -s "$tmp/out" "$tmp/distinct"
saves=$(grep -c "^rename .* $tmp/state\$" "$tmp/log")
check "checkpoints were taken ($saves saves)" [ "$saves" -ge 5 ]
check "before each save of the state, the output's writes are fsynced" awk -v out="$tmp/out" \
  -v state="$tmp/state" '
  $1 == "write" && $2 == out { pending = 1 }
  $1 == "fsync" && $2 == out { pending = 0 }
  $1 == "rename" && $3 == state { saves++; if (pending) bad++ }
  END { exit !(saves > 0 && bad == 0) }' "$tmp/log"
check "the state is saved through a temporary file: write, fsync, rename" awk -v state="$tmp/state" '
  $1 == "open" && index($2, state) == 1 && $2 != state { tmp = $2; wrote = synced = 0 }
  $1 == "write" && $2 == tmp { wrote = 1; if (synced) bad++ }
  $1 == "fsync" && $2 == tmp { synced = 1 }
  $1 == "rename" && $3 == state { n++; if ($2 != tmp || !wrote || !synced) bad++ }
  END { exit !(n > 0 && bad == 0) }' "$tmp/log"

# 2. A crash just after the Nth save (the state renamed into place, nothing after it run): the
#    state holds no line the output lacks, and a rerun writes the rest, each line once in all. The
#    output is a file, then a pipe.
for n in 1 2 5; do
  for into in file pipe; do
    rm -f "$tmp/state" "$tmp/out" "$tmp/out2"
    if [ $into = file ]; then
      SIMDBLOOM_TRACE_EXIT=rename:$n run >"$tmp/out"
    else
      SIMDBLOOM_TRACE_EXIT=rename:$n run | cat >"$tmp/out"
    fi
    status=${PIPESTATUS[0]}
    check "crash after save $n ($into): the run stopped there (exit $status)" [ "$status" -eq 99 ]
    "$bin" query --quiet "$tmp/state" "$tmp/distinct" >"$tmp/known"
    check "crash after save $n ($into): every line the state holds was written" \
      bash -c "[ -z \"\$(comm -23 <(sort '$tmp/known') <(sort '$tmp/out'))\" ]"
    run >"$tmp/out2"
    check "crash after save $n ($into): run and rerun write every distinct line" \
      cmp -s <(sort -u "$tmp/out" "$tmp/out2") <(sort "$tmp/distinct")
    check "crash after save $n ($into): no line is written twice" \
      bash -c "[ -z \"\$(sort '$tmp/out' '$tmp/out2' | uniq -d)\" ]"
  done
done

# 3. A checkpoint that cannot be saved (the disk full at the rename of the second save): exit 1
#    with one line of error, the first save intact, and a rerun loses nothing.
rm -f "$tmp/state" "$tmp/out" "$tmp/out2"
SIMDBLOOM_TRACE_FAIL=rename:2:28 run >"$tmp/out" 2>"$tmp/err"
status=$?
check "a failed checkpoint exits 1 (exit $status)" [ "$status" -eq 1 ]
check "a failed checkpoint says so in one line" bash -c "[ \$(grep -c '^simdbloom: ' '$tmp/err') -eq 1 ] && grep -q 'No space left' '$tmp/err'"
check "a failed checkpoint leaves no temporary file" bash -c "[ -z \"\$(ls '$tmp' | grep -v -e '^state\$' -e '^state.lock\$' -e '^out' -e '^distinct\$' -e '^log\$' -e '^err\$' -e '^known\$')\" ]"
run >"$tmp/out2"
check "after a failed checkpoint, run and rerun write every distinct line" \
  cmp -s <(sort -u "$tmp/out" "$tmp/out2") <(sort "$tmp/distinct")

# 4. The state's folder made read-only before the second checkpoint (its temporary file cannot be
#    created: EROFS at the 5th open, after the lock, the input, the first save's temporary file
#    and the folder's fsync): exit 1 with one line, and a rerun loses nothing.
rm -f "$tmp/state" "$tmp/out" "$tmp/out2"
SIMDBLOOM_TRACE_FAIL=open:5:30 run >"$tmp/out" 2>"$tmp/err"
status=$?
check "a checkpoint in a read-only folder exits 1 (exit $status)" [ "$status" -eq 1 ]
check "a checkpoint in a read-only folder says so in one line" \
  bash -c "[ \$(grep -c '^simdbloom: ' '$tmp/err') -eq 1 ] && grep -q 'Read-only file system' '$tmp/err'"
run >"$tmp/out2"
check "after a read-only checkpoint, run and rerun write every distinct line" \
  cmp -s <(sort -u "$tmp/out" "$tmp/out2") <(sort "$tmp/distinct")
finish
