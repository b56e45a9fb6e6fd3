#!/usr/bin/env bash
# dedup --shared workers killed with SIGKILL lose no line after a rerun. A worker behind a slow
# reader is killed once its output holds K lines (several K), then the same command runs again:
# the two outputs together hold every distinct line of the input, the rerun writes none twice,
# and the lines written twice in all are at most one claim window (4,096: the lines the killed
# worker had written of the window it was in). A journal of a live worker is never adopted.
# usage: cli_kill_test.sh SIMDBLOOM_BINARY URL_STREAM_FILE
set -u
bin=$1
stream=$2
tmp=$(mktemp -d)
export SIMDBLOOM_CLAIMS_DIR=$tmp # the claims journals of --shared and --redis workers
worker=
cleanup() { # only this script's own jobs, and a worker not yet reaped: never a stale PID
  [ -n "$worker" ] && kill -9 "$worker" 2>/dev/null
  kill -9 $(jobs -p) 2>/dev/null
  exec 3>&- 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
. "$(dirname "$0")/lib.sh"

# A shared read-write mapping needs a little-endian host: on s390x --shared is refused, said so.
echo x | "$bin" dedup --shared "$tmp/probe.sbloom" --expect 1k >/dev/null 2>"$tmp/err"
if grep -q "not supported by this build or host" "$tmp/err"; then
  echo "SKIP: big-endian host: dedup --shared refuses (as documented), its checks not run"
  exit 77
fi
rm -f "$tmp/probe.sbloom"*
awk '!s[$0]++' "$stream" | sort >"$tmp/distinct"
# A reader taking 16 KiB every 5 ms: the worker waits on its output, claims in hand.
slow() { while n=$(head -c 16384 | tee -a "$1" | wc -c) && [ "$n" -gt 0 ]; do sleep 0.005; done; }
lines() { [ -f "$1" ] && wc -l <"$1" || echo 0; }
# The hashes the dead workers' journals in $tmp hold (owed and in flight), each from its newest
# slot: src/cli/claims.c writes two slots in turn, at 0 and 64 MiB, each beginning with its magic,
# sequence number, owed count and in-flight count (a SIGKILL never cuts a pwrite short).
journal_hashes() {
  local file at magic seq owed flight best held total=0
  for file in "$tmp"/.sbloom-claims-*; do
    [ -f "$file" ] || continue
    best=-1 held=0
    for at in 0 67108864; do
      read -r magic seq owed flight < <(od -An -v -t u8 -j "$at" -N 32 "$file" 2>/dev/null | tr -s ' \n' '  ')
      [ "$magic" = 3552576225866367571 ] && [ "$seq" -gt "$best" ] && best=$seq held=$((owed + flight))
    done
    total=$((total + held))
  done
  echo "$total"
}

for k in 2000 15000 40000; do
  F=$tmp/f$k.sbloom
  : >"$tmp/out1"
  "$bin" dedup --quiet --shared "$F" --expect 1M "$stream" | slow "$tmp/out1" &
  pipeline=$!
  worker=
  for _ in $(seq 200); do worker=$(pgrep -n -f "dedup --quiet --shared $F") && break; sleep 0.025; done
  for _ in $(seq 400); do [ "$(lines "$tmp/out1")" -ge "$k" ] && break; sleep 0.025; done
  kill -9 "$worker" 2>/dev/null
  wait "$pipeline" 2>/dev/null
  worker=
  written=$(lines "$tmp/out1")
  check "kill after $k lines: killed mid-run ($written of $(wc -l <"$tmp/distinct") written)" \
    [ "$written" -lt "$(wc -l <"$tmp/distinct")" ]
  held=$(journal_hashes)
  "$bin" dedup --shared "$F" --expect 1M "$stream" >"$tmp/out2" 2>"$tmp/err"
  rc=$?
  check "kill after $k lines: the rerun succeeds ($rc)" [ "$rc" -eq 0 ]
  # A kill in the middle of a write can cut the last line short (no newline): not a line.
  [ -n "$(tail -c 1 "$tmp/out1")" ] && sed -i '$d' "$tmp/out1"
  sort -u "$tmp/out1" "$tmp/out2" >"$tmp/union"
  check "kill after $k lines: run and rerun lose no distinct line" cmp -s "$tmp/union" "$tmp/distinct"
  check "kill after $k lines: the rerun writes no line twice" \
    bash -c "[ -z \"\$(sort '$tmp/out2' | uniq -d)\" ]"
  twice=$(sort "$tmp/out1" "$tmp/out2" | uniq -d | wc -l)
  check "kill after $k lines: $twice lines written twice in all, at most one window" \
    [ "$twice" -le 4096 ]
  # (a kill between a window's write and the next window's intent leaves a journal of none)
  if [ "$held" -gt 0 ]; then
    check "kill after $k lines: the rerun says it wrote the killed worker's $held claims" \
      grep -q "claimed by a worker that was killed" "$tmp/err"
  else
    check "kill after $k lines: the journal held no claim, and the rerun says none" \
      bash -c "! grep -q 'claimed by a worker that was killed' '$tmp/err'"
  fi
  check "kill after $k lines: no journal is left" \
    bash -c "[ -z \"\$(ls -A '$tmp' | grep sbloom-claims)\" ]"
done

# A live worker's journal is its own: a second worker neither adopts nor removes it.
F=$tmp/live.sbloom
mkfifo "$tmp/fifo"
"$bin" dedup --quiet --shared "$F" --expect 1M <"$tmp/fifo" >"$tmp/live-out" &
live=$!
exec 3>"$tmp/fifo"
head -n 1000 "$stream" >&3
for _ in $(seq 100); do ls -A "$tmp" | grep -q sbloom-claims && break; sleep 0.05; done
journal=$(ls -A "$tmp" | grep sbloom-claims)
check "a live worker keeps a journal" [ -n "$journal" ]
timeout 60 "$bin" dedup --shared "$F" "$stream" >"$tmp/other" 2>"$tmp/err"
check "a second worker succeeds beside it" [ $? -eq 0 ]
check "and does not adopt the live worker's claims" bash -c "! grep -q 'claimed by a worker' '$tmp/err'"
check "and leaves its journal" [ -f "$tmp/$journal" ]
exec 3>&-
wait "$live"
check "the live worker ends cleanly and removes its journal" [ ! -e "$tmp/$journal" ]
sort -u "$tmp/live-out" "$tmp/other" >"$tmp/union"
check "the two workers wrote every distinct line between them" cmp -s "$tmp/union" "$tmp/distinct"
finish
