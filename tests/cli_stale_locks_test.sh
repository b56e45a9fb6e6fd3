#!/usr/bin/env bash
# dedup --shared workers and the lock words in FILTER.lock that another process left (issue 58,
# item 4). A word holds its holder's process ID; a holder is alive only while it holds its
# liveness byte of the lock file (src/os/lockword.c), so:
#   - words naming a live process that shares nothing (this script's own sleeping child; pid 1)
#     are stale: a worker takes them over at once and dedups as if they were free (a plain and a
#     windowed file; the stripes and the windowed clock's word);
#   - words naming a live worker that keeps them (one blocked on its input, its ID written into
#     every word) make another worker wait at most SIMDBLOOM_LOCK_WAIT seconds, then exit 1 with
#     one line naming the holder; SIGTERM ends such a waiting worker within about a second;
#   - once that holder ends, the same command run again writes every line of its input that no
#     run wrote, exactly once between them all.
# usage: cli_stale_locks_test.sh SIMDBLOOM_BINARY
set -u
bin=$1
tmp=$(mktemp -d)
export SIMDBLOOM_CLAIMS_DIR=$tmp
sleeper= holder= waiter=
cleanup() {
  [ "$BASHPID" = "$$" ] || return # a forked child killed before its exec: not its directory
  for p in $sleeper $holder $waiter; do kill "$p" 2>/dev/null; done
  exec 3>&- 2>/dev/null
  wait 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
. "$(dirname "$0")/lib.sh"

echo x | "$bin" dedup --shared "$tmp/probe.sbloom" --expect 1k >/dev/null 2>"$tmp/probe-err"
if grep -q "not supported by this build or host" "$tmp/probe-err"; then
  echo "SKIP: big-endian host: dedup --shared refuses (as documented)"
  finish
  exit
fi

# stale WORDS PID FILE: every stripe word and the windowed clock's word of FILE.lock set to PID
stale() {
  perl -e 'open(my $f, "+<", $ARGV[0]) or die; binmode $f;
           seek($f, 264, 0); print $f pack("V", $ARGV[1]);
           seek($f, 4096, 0); print $f pack("V*", ($ARGV[1]) x 4096); close $f' "$1.lock" "$2"
}
seq -f 'https://a.example/%g' 1 4000 >"$tmp/first"
seq -f 'https://a.example/%g' 3001 9000 >"$tmp/second" # 1,000 seen, 5,000 new

sleep 600 &
sleeper=$!
for kind in plain windowed; do
  f=$tmp/$kind.sbloom
  window=()
  [ $kind = windowed ] && window=(--forget-after 30d)
  "$bin" dedup --quiet --shared "$f" --expect 20k "${window[@]}" "$tmp/first" >/dev/null
  for pid in "$sleeper" 1; do
    stale "$f" "$pid"
    out=$(timeout 30 "$bin" dedup --quiet --shared "$f" "$tmp/second")
    rc=$?
    check "$kind file, words naming pid $pid (alive, not a worker): taken over, exit 0" [ "$rc" -eq 0 ]
    if [ "$pid" = 1 ]; then # (the second pass: every line seen)
      check "$kind file, words naming pid 1: nothing new" [ -z "$out" ]
    else
      check "$kind file, words naming a sleeping child: the 5,000 new lines" [ "$(wc -l <<<"$out")" -eq 5000 ]
    fi
  done
done

# A live worker that keeps the locks: blocked on a FIFO, its ID in every word.
f=$tmp/held.sbloom
"$bin" dedup --quiet --shared "$f" --expect 20k "$tmp/first" >/dev/null
mkfifo "$tmp/fifo"
"$bin" dedup --quiet --shared "$f" <"$tmp/fifo" >"$tmp/holder.out" &
holder=$!
exec 3>"$tmp/fifo" # the holder waits for input
joined() { # the holder has mapped the file: it holds its liveness byte (an OFD lock)
  grep -q "OFDLCK.* $((1073741824 + holder)) $((1073741824 + holder))\$" /proc/locks
}
for _ in $(seq 100); do joined && break; sleep 0.1; done
check "the holder holds its liveness byte" joined
stale "$f" "$holder"

start=$SECONDS
err=$(SIMDBLOOM_LOCK_WAIT=2 timeout 60 "$bin" dedup --quiet --shared "$f" "$tmp/second" 2>&1 >"$tmp/out1")
rc=$?
check "a live holder keeps the lock: exit 1 (not a hang)" [ "$rc" -eq 1 ]
check "... within the bound (2 s asked)" [ $((SECONDS - start)) -le 15 ]
check "... one line naming the holder" [ "$(grep -c "process $holder, which holds one of the filter.s locks" <<<"$err")" -eq 1 ]
check "... nothing written" [ ! -s "$tmp/out1" ]

SIMDBLOOM_LOCK_WAIT=600 "$bin" dedup --quiet --shared "$f" "$tmp/second" >"$tmp/out2" 2>"$tmp/err2" &
waiter=$!
sleep 1.5
start=$SECONDS
kill -TERM "$waiter"
timeout 20 tail --pid="$waiter" -f /dev/null
gone=$?
wait "$waiter"
rc=$?
waiter=
check "SIGTERM ends a worker waiting for the lock" [ "$gone" -eq 0 ]
check "... within a few seconds" [ $((SECONDS - start)) -le 5 ]
check "... exit 143, one line saying why" [ "$rc" -eq 143 -a "$(grep -c "stopped by a signal while waiting" "$tmp/err2")" -eq 1 ]

exec 3>&- # the holder's input ends: it exits, its liveness byte with it
wait "$holder"
holder=
timeout 30 "$bin" dedup --quiet --shared "$f" "$tmp/second" >"$tmp/out3"
out=$(cat "$tmp/out1" "$tmp/out2" "$tmp/out3")
old=$(sort -u "$tmp/first" | sort - <(sort -u <<<"$out") | uniq -d | wc -l)
check "after the holder: the run again writes the 5,000 new lines" \
  [ "$(($(sort -u <<<"$out" | wc -l) - old))" -eq 5000 ]
check "... each once" [ "$(sort <<<"$out" | uniq -d | wc -l)" -eq 0 ]
if grep -q "are in its claims journal" "$tmp/err2"; then
  # The waiter's call did not return within its second after the signal (a loaded machine: the
  # process ended from the alarm), so its journal kept the window's intent, and the rerun wrote
  # those lines, old ones among them: at most one claim window (src/cli/claims.c).
  check "... and old ones at most one window ($old, the killed waiter's intent)" [ "$old" -le 4096 ]
else
  check "... and only new ones ($old old)" [ "$old" -eq 0 ]
fi
finish
