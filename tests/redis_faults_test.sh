#!/usr/bin/env bash
# dedup --redis through a proxy that injects faults (tests/redis_fault_proxy.py): at random
# commands, with fixed seeds, error replies of every kind the client handles (MOVED, ASK,
# TRYAGAIN, CLUSTERDOWN, LOADING, MASTERDOWN, READONLY, WRONGTYPE, OOM), connections dropped
# before a command or after it ran, garbled replies, slow replies and replies past the client's
# timeout (--timeout 1). For each seed, over the same
# input: no line written twice within a run; a failed run says so in one line and exits 1; no
# run hangs past its bounds; a rerun without faults then loses no distinct line.
#   redis_faults_test.sh SOURCE_DIR SIMDBLOOM URL_STREAM [SEEDS]
# One Redis server on loopback (a one-node cluster, so that redirects name the proxy again),
# stopped at the end with the proxies.
src=$1 sb=$2 stream=$3 seeds=${4:-12}
. "$src/tests/lib.sh"
command -v redis-server >/dev/null || { echo "redis-server not installed: skipped"; exit 77; }
python=/usr/bin/python3
[ -x "$python" ] || { echo "no $python: skipped"; exit 77; }

work=$(mktemp -d)
export SIMDBLOOM_CLAIMS_DIR=$work
proxy=
cleanup() {
  [ -n "$proxy" ] && kill "$proxy" 2>/dev/null
  "$src/ci/redis-cluster" stop "$work/redis"
  rm -rf "$work"
}
trap cleanup EXIT
single=$("$src/ci/redis-cluster" standalone "$work/redis") || { echo "cannot start redis"; exit 1; }
upstream=${single##*:}

head -n 6000 "$stream" >"$work/in"
sort -u "$work/in" >"$work/distinct"
failed_runs=0 repeated=0 faults_seen=0
for seed in $(seq 1 "$seeds"); do
  rm -f "$work/port"
  rate=$(awk -v s="$seed" 'BEGIN { print 0.0005 * (1 + s % 6) }') # 0.05% to 0.3% of the commands
  "$python" "$src/tests/redis_fault_proxy.py" "$upstream" "$seed" "$rate" "$work/port" "$work/faults" & proxy=$!
  for _ in $(seq 200); do [ -s "$work/port" ] && break; sleep 0.025; done
  port=$(cat "$work/port")
  start=$(date +%s)
  timeout 60 "$sb" dedup --redis "127.0.0.1:$port" --name "f$seed" --expect 100k --retry 3 --timeout 1 \
    "$work/in" >"$work/o1" 2>"$work/e1"
  rc=$?
  took=$(($(date +%s) - start))
  kill "$proxy"; wait "$proxy" 2>/dev/null; proxy=
  check "seed $seed: exit 0 or 1 ($rc), within bounds (${took} s)" bash -c "[ $rc = 0 ] || [ $rc = 1 ]"
  if [ "$rc" = 1 ]; then
    failed_runs=$((failed_runs + 1))
    echo "seed $seed (rate $rate): $(cat "$work/e1")"
    check "seed $seed: the failure is one line" \
      bash -c "[ \$(wc -l <'$work/e1') = 1 ] && grep -q '^simdbloom: redis: ' '$work/e1'"
  fi
  check "seed $seed: no line written twice" bash -c "[ -z \"\$(sort '$work/o1' | uniq -d)\" ]"
  timeout 60 "$sb" dedup --quiet --redis "$single" --name "f$seed" --expect 100k "$work/in" >"$work/o2"
  check "seed $seed: the rerun without faults succeeds" [ $? = 0 ]
  check "seed $seed: the rerun writes no line twice" bash -c "[ -z \"\$(sort '$work/o2' | uniq -d)\" ]"
  check "seed $seed: run and rerun lose no distinct line" \
    bash -c "sort -u '$work/o1' '$work/o2' | cmp -s - '$work/distinct'"
  repeated=$((repeated + $(sort -u "$work/o1" | comm -12 - <(sort -u "$work/o2") | wc -l)))
done
echo "$seeds seeds: $failed_runs runs stopped with exit 1; $repeated lines written by both a run and its rerun"
echo "faults injected: $(sort "$work/faults" 2>/dev/null | uniq -c | awk '{ printf "%s %s, ", $1, $2 }')"
finish
