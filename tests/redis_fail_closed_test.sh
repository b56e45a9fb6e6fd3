#!/usr/bin/env bash
# The fleet filter fails closed (issue: fail closed), on a throwaway 3-master cluster on loopback
# (ci/redis-cluster, always stopped):
#   redis_fail_closed_test.sh SOURCE_DIR SIMDBLOOM URL_STREAM
# 1. A shard replaced by a key of another type in the middle of a run (WRONGTYPE: Redis refused
#    the command, which did nothing): the run stops with exit 1 and one line naming the input line
#    it stopped at; no line is written twice; every line before it is written; the lines of the
#    refused command are not. After the repair, the same command writes what is missing, and the
#    two runs lose no distinct line.
# 2. Shards that vanish (DEL, as eviction does), are cut short or overwritten, before a run or
#    during one: the run stops with exit 1 naming the shard, before any line is written on its
#    strength; info --redis lists the damaged shards (exit 1) and --repair resets them.
# 3. A fleet filter overfilled warns as the local ones do, and info --redis gives the rate now;
#    one that does not exist is not created without --expect; a master whose maxmemory-policy
#    can evict the shards is warned about.
# 4. A window (--forget-after): a generation the worker made, deleted in the middle of its run
#    (as eviction does), stops it with exit 1 and one line, no line written twice; a worker whose
#    clock is hours off the servers' is refused before it writes any key (no key left without an
#    expiry), naming both clocks; a window too long for Redis's expiry times is refused at once.
src=$1 sb=$2 stream=$3
. "$src/tests/lib.sh"
command -v redis-server >/dev/null || { echo "redis-server not installed: skipped"; exit 77; }

work=$(mktemp -d)
export SIMDBLOOM_CLAIMS_DIR=$work
cluster=$work/cluster
cleanup() {
  exec 3>&- 2>/dev/null
  "$src/ci/redis-cluster" stop "$cluster"
  rm -rf "$work"
}
trap cleanup EXIT
nodes=$("$src/ci/redis-cluster" start "$cluster" 3 0) || { echo "cannot start the cluster"; exit 1; }
master=$(head -n 1 "$cluster/masters")
rcli() { redis-cli -c -p "$master" "$@"; }

head -n 20000 "$stream" >"$work/in"
awk '!seen[$0]++' "$work/in" | sort >"$work/distinct"
no_line_twice() { [ -z "$(sort "$1" | uniq -d)" ]; }
# the input lines whose first occurrence is before line $2 of $1, sorted
first_before() { awk -v n="$2" 'NR < n && !seen[$0]++' "$1" | sort; }

# dedup_paused NAME ACTION OUT ERR: runs dedup --redis over the first 10,000 lines, waits until
# it has written all it will of them, runs ACTION (a shell command), then feeds the rest.
dedup_paused() {
  local name=$1 action=$2 out=$3 err=$4 fifo=$work/fifo
  rm -f "$fifo"; mkfifo "$fifo"
  timeout 120 "$sb" dedup --redis "$nodes" --name "$name" --expect 100k --retry 2 ${window:-} \
    <"$fifo" >"$out" 2>"$err" &
  local pid=$!
  exec 3>"$fifo"
  head -n 10000 "$work/in" >&3
  local want; want=$(head -n 10000 "$work/in" | awk '!s[$0]++' | wc -l)
  for _ in $(seq 400); do [ "$(wc -l <"$out")" -ge "$want" ] && break; sleep 0.025; done
  bash -c "$action"
  tail -n +10001 "$work/in" >&3 2>/dev/null
  exec 3>&-
  wait "$pid"
}

# ---- 1. a command refused in the middle of a run
echo x | "$sb" dedup --quiet --redis "$nodes" --name wt --expect 100k >/dev/null
dedup_paused wt 'redis-cli -c -p '"$master"' del "sbloom:{wt#5}" >/dev/null;
                 redis-cli -c -p '"$master"' hset "sbloom:{wt#5}" f v >/dev/null' \
  "$work/out1" "$work/err1"
rc=$?
stop_line=$(sed -n 's/.*stopped at input line \([0-9]*\).*/\1/p' "$work/err1")
check "refused mid-run: exit 1 ($rc)" [ "$rc" = 1 ]
check "refused mid-run: one line on stderr, naming WRONGTYPE and the input line" \
  bash -c "[ \$(wc -l <'$work/err1') = 1 ] && grep -q WRONGTYPE '$work/err1' && [ -n '$stop_line' ]"
check "refused mid-run: no line written twice" no_line_twice "$work/out1"
check "refused mid-run: it stopped after the pause (line $stop_line)" [ "${stop_line:-0}" -gt 10000 ]
first_before "$work/in" "${stop_line:-0}" >"$work/before"
check "refused mid-run: every line before the stop is written" \
  bash -c "[ -z \"\$(comm -23 '$work/before' <(sort '$work/out1'))\" ]"
check "refused mid-run: the lines of the refused command are not written (some distinct lines missing)" \
  bash -c "[ \$(sort -u '$work/out1' | wc -l) -lt \$(wc -l <'$work/distinct') ]"
check "info --redis lists the shard of another type: exit 1" \
  bash -c "! '$sb' info --redis '$nodes' --name wt >'$work/info' 2>/dev/null && grep -q 'damaged shards *1 (5)' '$work/info'"
rcli del "sbloom:{wt#5}" >/dev/null
check "info --redis --repair resets it: exit 0" "$sb" info --redis "$nodes" --name wt --repair
timeout 120 "$sb" dedup --quiet --redis "$nodes" --name wt "$work/in" >"$work/out1b"
check "the rerun after the repair: exit 0" [ $? = 0 ]
check "the rerun writes no line twice" no_line_twice "$work/out1b"
check "the two runs lose no distinct line" \
  bash -c "sort -u '$work/out1' '$work/out1b' | cmp -s - '$work/distinct'"

# ---- 2. shards that vanish, shrink or are overwritten
timeout 60 "$sb" dedup --quiet --redis "$nodes" --name ev --expect 100k "$work/in" >"$work/out2"
check "a first run writes every distinct line" bash -c "sort '$work/out2' | cmp -s - '$work/distinct'"
damage_and_rerun() { # what, redis commands...
  local what=$1; shift
  "$@" >/dev/null
  timeout 60 "$sb" dedup --redis "$nodes" --name ev "$work/in" >"$work/o" 2>"$work/e"
  local rc=$?
  check "$what: exit 1 ($rc)" [ "$rc" = 1 ]
  check "$what: nothing written" [ ! -s "$work/o" ]
  check "$what: one line naming the damaged shards" \
    bash -c "[ \$(wc -l <'$work/e') = 1 ] && grep -q 'missing or damaged shards' '$work/e'"
}
damage_and_rerun "two shards deleted (evicted)" bash -c "redis-cli -c -p $master del 'sbloom:{ev#3}' && redis-cli -c -p $master del 'sbloom:{ev#40}'"
check "info --redis names both: exit 1" \
  bash -c "! '$sb' info --redis '$nodes' --name ev >'$work/info' 2>'$work/infoerr' && grep -q 'damaged shards *2 (3, 40)' '$work/info' && grep -q 'repair' '$work/infoerr'"
"$sb" info --redis "$nodes" --name ev --repair >/dev/null
damage_and_rerun "a shard overwritten by a 4-byte string" rcli set "sbloom:{ev#7}" abcd
"$sb" info --redis "$nodes" --name ev --repair >/dev/null
damage_and_rerun "a shard cut short (100 bytes)" rcli set "sbloom:{ev#9}" "$(printf '%0100d' 0)"
check "info --redis --repair: exit 0" "$sb" info --redis "$nodes" --name ev --repair
timeout 60 "$sb" dedup --quiet --redis "$nodes" --name ev "$work/in" >"$work/o"
check "after the repairs the lines of the reset shards come out once more, nothing else lost" \
  bash -c "[ -s '$work/o' ] && sort -u '$work/out2' '$work/o' | cmp -s - '$work/distinct' && [ -z \"\$(sort '$work/o' | uniq -d)\" ]"

# A shard deleted in the middle of a run: BITFIELD makes it again from zeros, without its marker.
echo x | "$sb" dedup --quiet --redis "$nodes" --name mid --expect 100k >/dev/null
dedup_paused mid 'redis-cli -c -p '"$master"' del "sbloom:{mid#11}" >/dev/null' "$work/out3" "$work/err3"
rc=$?
check "shard deleted mid-run: exit 1 ($rc)" [ "$rc" = 1 ]
check "shard deleted mid-run: one line naming the shard and the input line" \
  bash -c "[ \$(wc -l <'$work/err3') = 1 ] && grep -q 'sbloom:{mid#11}' '$work/err3' && grep -q 'stopped at input line' '$work/err3'"
check "shard deleted mid-run: no line written twice" no_line_twice "$work/out3"

# ---- 3. overfill, creation without --expect, eviction policy
head -n 60000 "$stream" >"$work/big"
"$sb" dedup --redis "$nodes" --name small --expect 1k "$work/big" >"$work/o" 2>"$work/e"
rc=$?
check "an overfilled fleet filter: exit 0 ($rc), and a warning" \
  bash -c "[ $rc = 0 ] && grep -q 'exceed the 1000 planned' '$work/e'"
"$sb" info --redis "$nodes" --name small >"$work/info" 2>"$work/e"
check "info --redis warns and gives the rate now" \
  bash -c "grep -q 'exceed the 1000 planned' '$work/e' && awk '/fpp now/ { exit !(\$3 > 0.001) }' '$work/info'"
echo x | "$sb" dedup --redis "$nodes" --name none-yet >/dev/null 2>"$work/e"
rc=$?
check "no filter and no --expect: exit 1, saying to give --expect ($rc)" \
  bash -c "[ $rc = 1 ] && grep -q 'give --expect' '$work/e' && ! '$sb' info --redis '$nodes' --name none-yet >/dev/null 2>&1"
for port in $(cat "$cluster/masters"); do redis-cli -p "$port" config set maxmemory-policy allkeys-lru >/dev/null; done
echo x | "$sb" dedup --redis "$nodes" --name ev >/dev/null 2>"$work/e"
check "a master that may evict: a warning naming the policy" grep -q "maxmemory-policy allkeys-lru" "$work/e"
echo x | "$sb" dedup --quiet --redis "$nodes" --name ev >/dev/null 2>"$work/e"
check "--quiet: no warning" [ ! -s "$work/e" ]
for port in $(cat "$cluster/masters"); do redis-cli -p "$port" config set maxmemory-policy noeviction >/dev/null; done

# ---- 4. windows: a generation gone mid-run, clocks apart, windows too long
delete_generations() { # every generation key of fleet filter $1, on every master
  for port in $(cat "$cluster/masters"); do
    redis-cli -p "$port" --scan --pattern "sbloom:{$1#*}:*" | while read -r key; do
      redis-cli -p "$port" del "$key" >/dev/null
    done
  done
}
window="--forget-after 3h" dedup_paused gone "$(declare -f delete_generations); cluster=$cluster; delete_generations gone" \
  "$work/out4" "$work/err4"
rc=$?
check "window, a generation deleted mid-run: exit 1 ($rc)" [ "$rc" = 1 ]
check "window, a generation deleted mid-run: one line saying it is gone" \
  bash -c "[ \$(wc -l <'$work/err4') = 1 ] && grep -q 'gone before its time' '$work/err4'"
check "window, a generation deleted mid-run: no line written twice" no_line_twice "$work/out4"
check "window, a generation deleted mid-run: it stopped after the pause" \
  [ "$(sed -n 's/.*stopped at input line \([0-9]*\).*/\1/p' "$work/err4")" -gt 10000 ]
no_lasting_keys() { # no key of fleet filter $1 without an expiry
  for port in $(cat "$cluster/masters"); do
    redis-cli -p "$port" --scan --pattern "sbloom:{$1#*}:*" | while read -r key; do
      [ "$(redis-cli -p "$port" ttl "$key")" = -1 ] && echo "$key"
    done
  done | grep -q . && return 1
  return 0
}
for skew in -2h +2h -41m; do
  faketime -f "$skew" "$sb" dedup --redis "$nodes" --name "skew$skew" --expect 10k \
    --forget-after 1h "$work/in" >"$work/o" 2>"$work/e"
  rc=$?
  check "window, a worker's clock $skew off the servers': exit 1 ($rc), nothing written" \
    bash -c "[ $rc = 1 ] && [ ! -s '$work/o' ]"
  check "window, clock $skew: one line naming both clocks" \
    bash -c "[ \$(wc -l <'$work/e') = 1 ] && grep -q 'apart, more than the quarter period' '$work/e'"
  check "window, clock $skew: no key without an expiry" no_lasting_keys "skew$skew"
done
# the same stream on the right clock, beside a worker 1 s ahead: each line once
"$sb" dedup --quiet --redis "$nodes" --name near --expect 100k --forget-after 1h "$work/in" \
  >"$work/o1" &
faketime -f '+1' "$sb" dedup --quiet --redis "$nodes" --name near --expect 100k \
  --forget-after 1h "$work/in" >"$work/o2"
wait $!
check "window, two clocks 1 s apart: each distinct line once between them" \
  bash -c "sort '$work/o1' '$work/o2' | cmp -s - '$work/distinct'"
# a window's plan is a generation's: ceil(n / 3) lines at p / 4 (its size is that Bloom plan's)
fleet_bytes=$("$sb" info --redis "$nodes" --name near | sed -n 's/^  size .*(\([0-9]*\) bytes).*/\1/p')
plan_bytes=$("$sb" plan --expect 33334 --fpp 2.5e-7 | awk '/^bloom picks/ { print bytes[$3] } { bytes[$1] = $2 }')
check "window: the generation planned for n / 3 lines at p / 4 ($fleet_bytes = $plan_bytes bytes)" \
  [ -n "$fleet_bytes" -a "$fleet_bytes" = "$plan_bytes" ]
err=$("$sb" dedup --redis "$nodes" --name long --expect 10k --forget-after 36501d </dev/null 2>&1)
rc=$?
check "a window longer than 100 years: exit 2 ($rc), nothing made" \
  bash -c "[ $rc = 2 ] && grep -q 'longest window' <<<'$err' && ! '$sb' info --redis '$nodes' --name long >/dev/null 2>&1"
echo x | "$sb" dedup --quiet --redis "$nodes" --name longest --expect 10k --forget-after 36500d >/dev/null
check "a window of 100 years works" [ $? = 0 ]
finish
