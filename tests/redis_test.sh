#!/usr/bin/env bash
# simdbloom-redis end to end, on throwaway Redis servers bound to 127.0.0.1 on free ports in a
# temporary directory (ci/redis-cluster), always stopped at the end:
#   redis_test.sh SOURCE_DIR SIMDBLOOM TEST_REDIS URL_STREAM [REDIS_BENCH]
# 1. the library test (tests/test_redis.c) on a 3-master, 3-replica cluster and on one
#    password-protected standalone server;
# 2. two dedup --redis processes at once over overlapping parts of a stream write, between them,
#    each distinct line exactly once;
# 3. push then pull gives back the same file, byte for byte;
# 4. clear errors: unreachable node, wrong or missing password, plan mismatch, a port that does
#    not speak Redis;
# 5. slots moved by a reshard in the middle of a dedup run: the output is still exact;
# 6. the benchmark (simdbloom-redis-bench, when given) runs on the cluster, its own checks pass,
#    its JSON has every phase and its stream count matches the stream (nothing about speed);
# 6c. a window on the fleet (--forget-after): two workers with clocks half a second apart, a
#    rerun, expiry in Redis, a damaged generation, every line again past the window;
# 7. a master killed with SIGKILL in the middle of a dedup run: the run completes after the
#    failover (or stops with exit 1 and a message), and no distinct line is lost.
set -uo pipefail
src=$1 sb=$2 test_redis=$3 stream=$4 bench=${5:-}
. "$src/tests/lib.sh"
command -v redis-server >/dev/null || { echo "redis-server not installed: skipped"; exit 77; }

work=$(mktemp -d)
export SIMDBLOOM_CLAIMS_DIR=$work # the claims journals of --shared and --redis workers
cluster=$work/cluster standalone=$work/standalone
cleanup() {
  "$src/ci/redis-cluster" stop "$cluster"
  "$src/ci/redis-cluster" stop "$standalone"
  rm -rf "$work"
}
trap cleanup EXIT

nodes=$("$src/ci/redis-cluster" start "$cluster" 3 1) || { echo "cannot start the cluster"; exit 1; }
single=$("$src/ci/redis-cluster" standalone "$standalone" pw-$$) || { echo "cannot start redis"; exit 1; }
echo "cluster $nodes; standalone $single"

# ---- 1. the library
check "library test on the cluster" "$test_redis" "$nodes"
check "library test on a standalone server with a password" "$test_redis" "$single" "pw-$$"

# ---- 2. two processes, overlapping halves: each distinct line once between them
head -n 120000 "$stream" >"$work/stream"
head -n 80000 "$work/stream" >"$work/a"
tail -n +40001 "$work/stream" >"$work/b"
awk '!seen[$0]++' "$work/stream" | sort >"$work/want"
"$sb" dedup --quiet --redis "$nodes" --name fleet --expect 1M <"$work/a" >"$work/out-a" &
pa=$!
"$sb" dedup --quiet --redis "$nodes" --name fleet --expect 1M <"$work/b" >"$work/out-b" &
pb=$!
wait $pa; ra=$?
wait $pb; rb=$?
check "both dedup --redis processes succeed" [ "$ra$rb" = 00 ]
sort "$work/out-a" "$work/out-b" >"$work/got"
check "each distinct line written exactly once by the two processes" cmp -s "$work/want" "$work/got"
echo "two processes: $(wc -l <"$work/out-a") + $(wc -l <"$work/out-b") lines out, $(wc -l <"$work/want") distinct"
info=$("$sb" info --redis "$nodes" --name fleet)
check "info --redis counts the items of both" grep -q "items added *$(wc -l <"$work/want") " <<<"$info"
check "info --redis names 3 masters" grep -q "on 3 masters" <<<"$info"
# A third run over the whole stream finds everything seen.
check "a rerun writes nothing" [ "$("$sb" dedup --quiet --redis "$nodes" --name fleet <"$work/stream" | wc -l)" = 0 ]

# ---- 3. push and pull
"$sb" build --quiet --expect 200k --fpp 1e-4 --layout block512-k16 -o "$work/local.sbloom" "$work/a"
check "push a local filter" "$sb" push --quiet "$work/local.sbloom" --redis "$nodes" --name pushed
check "pull it back" "$sb" pull --quiet --redis "$nodes" --name pushed -o "$work/pulled.sbloom"
check "pushed then pulled: byte-identical" cmp -s "$work/local.sbloom" "$work/pulled.sbloom"
check "the pulled file answers as the local one" \
  cmp -s <("$sb" query "$work/local.sbloom" <"$work/b") <("$sb" query "$work/pulled.sbloom" <"$work/b")
"$sb" build --quiet --expect 300k --layout block512-k16 -o "$work/other.sbloom" "$work/a"
"$sb" push "$work/other.sbloom" --redis "$nodes" --name pushed 2>"$work/err"
check "push of another plan: exit 1" [ $? = 1 ]
check "push of another plan: says why" grep -q "exists with layout" "$work/err"
"$sb" build --quiet --expect 300k -o "$work/fp.sbloom" "$work/a" # (the plan: fingerprints)
"$sb" push "$work/fp.sbloom" --redis "$nodes" --name fp 2>"$work/err"
check "push of a fingerprint filter: exit 1" [ $? = 1 ]
check "push of a fingerprint filter: says why" grep -q "takes a bit layout" "$work/err"

# ---- 4. errors
expect_error() { # expect_error DESCRIPTION PATTERN COMMAND...: exit 1 and the pattern on stderr
  local what=$1 pattern=$2; shift 2
  "$@" </dev/null >/dev/null 2>"$work/err"
  local rc=$?
  if [ "$rc" = 1 ] && grep -q "$pattern" "$work/err"; then pass; else
    fail "$what: exit $rc, $(cat "$work/err")"; fi
}
expect_error "unreachable node" "cannot connect to 127.0.0.1:1" \
  "$sb" dedup --redis 127.0.0.1:1 --name x --retry 1
expect_error "wrong password" "refused the login" \
  "$sb" dedup --redis "$single" --name x --pass wrong
expect_error "no password" "give the password" env -u REDISCLI_AUTH \
  "$sb" dedup --redis "$single" --name x
expect_error "plan mismatch" "exists with layout" \
  "$sb" dedup --redis "$nodes" --name fleet --expect 5M
bus=$(( $(head -n 1 "$cluster/masters") + 10000 )) # the cluster bus: not the Redis protocol
expect_error "not a Redis server" "is it a Redis server" \
  "$sb" info --redis "127.0.0.1:$bus" --name x --retry 1
expect_error "no such filter" "no filter named" "$sb" info --redis "$nodes" --name absent
# Forged plans (anyone who can write the keyspace can write them): refused with exit 1 before a
# line is written, naming the field. A shard of 2^64 - 1 blocks once made the shard count 0 and
# the worker read past its arrays (ASan) or wrote every line, repeats included (Release).
node=$(head -n 1 "$cluster/masters")
forge_plan() { # forge_plan NAME FIELDS: stores a plan in the filter's meta key
  redis-cli -c -p "$node" set "sbloom:{$1}" "simdbloom-redis 1 $2" >/dev/null
}
forge_plan t4 "layout=block512-k8 bytes=6400 shard_blocks=18446744073709551615 planned_items=1000 planned_fpp=0.01"
forge_plan t5 "layout=block512-k8 bytes=6400 shard_blocks=0 planned_items=1000 planned_fpp=0.01"
forge_plan t6 "layout=block512-k8 bytes=6400 shard_blocks=10 planned_items=100000000 planned_fpp=0.01"
forge_plan t7 "layout=block512-k8 bytes=6400 shard_blocks=10 planned_items=1000 planned_fpp=1.5"
forge_plan t8 "layout=block512-k8 bytes=6401 shard_blocks=10 planned_items=1000 planned_fpp=0.01"
forge_plan t9 "layout=block512-k8 bytes=68719476736 shard_blocks=1 planned_items=1000 planned_fpp=0.01"
forge_plan t10 "layout=block512-k8 bytes=6400 shard_blocks=200 planned_items=1000 planned_fpp=0.01"
for t in t4:shard_blocks t5:shard_blocks t6:planned_items t7:planned_fpp t8:bytes t9:shards t10:shard_blocks; do
  name=${t%%:*} field=${t#*:}
  "$sb" dedup --redis "$nodes" --name "$name" <"$work/a" >"$work/out" 2>"$work/err"
  rc=$?
  check "forged plan $name: exit 1 ($rc), no line written, the error names $field"     bash -c "[ $rc = 1 ] && [ ! -s '$work/out' ] && [ \$(grep -c . '$work/err') = 1 ] && grep -q 'damaged plan: .*$field' '$work/err'"
done
# A standalone server is a one-node cluster; REDISCLI_AUTH gives the password as for redis-cli.
out=$(REDISCLI_AUTH=pw-$$ "$sb" dedup --quiet --redis "$single" --name solo --expect 100k <"$work/a" | wc -l)
check "standalone server with REDISCLI_AUTH" [ "$out" = "$(awk '!seen[$0]++' "$work/a" | wc -l)" ]

# ---- 5. slots moving mid-run (redis-cli --cluster reshard): MOVED and ASK are followed, and the
# output is still exact.
read -r from_id to_id < <(redis-cli -p "$(head -n 1 "$cluster/masters")" cluster nodes |
  awk '/master/ && !/fail/ {ids[n++] = $1} END {print ids[0], ids[1]}')
{
  head -n 30000 "$work/stream"
  sleep 4
  tail -n +30001 "$work/stream"
} | "$sb" dedup --quiet --redis "$nodes" --name moving --expect 1M >"$work/out-m" 2>"$work/err-m" &
pm=$!
sleep 1
redis-cli --cluster reshard "127.0.0.1:$(head -n 1 "$cluster/masters")" --cluster-from "$from_id" \
  --cluster-to "$to_id" --cluster-slots 2000 --cluster-yes >"$work/reshard.log" 2>&1
check "reshard ran" [ $? = 0 ]
wait $pm
rc_m=$?
check "dedup across a reshard succeeds" [ $rc_m = 0 ]
# (it failed now and then when a MOVED came back in a lookup round: replies were read from the
# new master's connection; tests/test_redis.c now moves a slot between rounds on purpose)
[ $rc_m = 0 ] || { echo "exit $rc_m; its standard error:"; cat "$work/err-m"; tail -5 "$work/reshard.log"; }
check "dedup across a reshard: exactly the distinct lines" cmp -s "$work/want" <(sort "$work/out-m")

# ---- 6. the benchmark, small and untimed: it checks its own answers (exit 1 if lookups disagree
# or present keys come back new); here its JSON must hold every phase, and the stream's new
# lines must be its distinct lines (false positives of 10 bits a line aside).
if [ -n "$bench" ]; then
  head -n 4000 "$work/stream" >"$work/bench-stream"
  distinct=$(awk '!seen[$0]++' "$work/bench-stream" | wc -l)
  "$bench" --json --stream "$work/bench-stream" "$nodes" 3000 1 >"$work/bench.json"
  check "simdbloom-redis-bench runs on the cluster" [ $? = 0 ]
  check "its JSON holds every phase" jq -e '[.add_if_new, .setbit, .contains, .getbit,
    .add_if_new_present, .setbit_present, .bitfield_ro, .add_if_new_stream, .setbit_stream]
    | all(.keys_per_s > 0)' "$work/bench.json"
  new=$(jq .stream_new "$work/bench.json")
  check "the stream's new lines: $new of $distinct distinct" \
    [ "$new" -le "$distinct" -a $((new * 100)) -ge $((distinct * 98)) ]
fi

# ---- 6b. a fleet worker killed with SIGKILL behind a slow reader: the same command run again
# writes every line it had claimed (its journal, in SIMDBLOOM_CLAIMS_DIR), so that the two runs lose
# no distinct line, and repeat at most one claim window (4,096 lines).
slow() { while n=$(head -c 16384 | tee -a "$1" | wc -c) && [ "$n" -gt 0 ]; do sleep 0.005; done; }
for k in 3000 20000; do
  : >"$work/k1"
  "$sb" dedup --quiet --redis "$nodes" --name "killed$k" --expect 1M "$work/stream" | slow "$work/k1" &
  pipeline=$!
  worker=
  for _ in $(seq 200); do worker=$(pgrep -n -f "name killed$k") && break; sleep 0.025; done
  for _ in $(seq 400); do [ "$(wc -l <"$work/k1")" -ge "$k" ] && break; sleep 0.025; done
  kill -9 "$worker"
  wait "$pipeline"
  [ -n "$(tail -c 1 "$work/k1")" ] && sed -i '$d' "$work/k1" # a line cut short by the kill
  "$sb" dedup --redis "$nodes" --name "killed$k" --expect 1M "$work/stream" >"$work/k2" 2>"$work/kerr"
  rk=$?
  check "fleet worker killed after $k lines: the rerun succeeds ($rk)" [ "$rk" = 0 ]
  check "fleet worker killed after $k lines: run and rerun lose no distinct line" \
    cmp -s "$work/want" <(sort -u "$work/k1" "$work/k2")
  twice=$(sort "$work/k1" "$work/k2" | uniq -d | wc -l)
  check "fleet worker killed after $k lines: $twice lines twice, at most one window" [ "$twice" -le 4096 ]
  check "fleet worker killed after $k lines: the rerun wrote the dead worker's claims" \
    grep -q "claimed by a worker that was killed" "$work/kerr"
done
check "no fleet journal is left" bash -c "[ -z \"\$(ls -A '$work' | grep sbloom-claims)\" ]"

# ---- 6c. a window on the fleet (--forget-after), on the real clock: 12 s, periods of 4 s (Redis
# times the expiry, so the servers' clock must move too). Two workers at once, one's clock half a
# second ahead, write each distinct line once between them; a rerun writes nothing; every
# generation expires by itself; past the window every line comes out again; a generation
# overwritten by another type stops a run with one line.
first=${nodes%%,*}
rcli() { redis-cli -c -h "${first%:*}" -p "${first#*:}" "$@"; }
head -n 3000 "$work/stream" | awk '!seen[$0]++' >"$work/w-all"
head -n 2000 "$work/w-all" >"$work/w-a"; tail -n +1001 "$work/w-all" >"$work/w-b"
started=$(date +%s)
"$sb" dedup --quiet --redis "$nodes" --name win --forget-after 12s --expect 10k <"$work/w-a" \
  >"$work/w-out-a" &
pa=$!
faketime -f '+0.5' "$sb" dedup --quiet --redis "$nodes" --name win --forget-after 12s \
  --expect 10k <"$work/w-b" >"$work/w-out-b"
rb=$?
wait $pa; ra=$?
written=$(date +%s) # every line was added before written + 1
check "window: both workers succeed" [ "$ra$rb" = 00 ]
check "window: each distinct line once between the two workers (one clock 0.5 s ahead)" \
  cmp -s <(sort "$work/w-all") <(sort "$work/w-out-a" "$work/w-out-b")
check "window: a rerun inside the window writes nothing" \
  [ "$("$sb" dedup --quiet --redis "$nodes" --name win --forget-after 12s <"$work/w-all" | wc -l)" = 0 ]
q=$(( started / 4 ))
gen="sbloom:{win#0}:$q"
expiry=$(rcli pexpiretime "$gen")
check "window: generation $q expires by itself, a quarter period after the window passed it" \
  [ "$expiry" = "$(( ((q + 4) * 4 + 1) * 1000 ))" -o "$(rcli exists "$gen")" = 0 ]
info=$("$sb" info --redis "$nodes" --name win)
check "window: info shows the window" grep -q "forgets after 12 s: 3 periods of 4 s" <<<"$info"
check "window: info gives each generation's start as a date" \
  grep -q "^  generation [0-9]  *began 20[0-9][0-9]-[0-9][0-9]-[0-9][0-9] " <<<"$info"
err=$("$sb" info --redis "$nodes" --name win --repair 2>&1 >/dev/null); rc=$?
check "window: info --repair on a windowed fleet filter: exit 1, saying what to do" \
  [ "$rc" -eq 1 -a "$(grep -c "windowed filter: --repair resets the shards of a plain one" <<<"$err")" -eq 1 ]
check "window: a plain run on a windowed table is refused" \
  bash -c "! '$sb' dedup --quiet --redis '$nodes' --name win <'$work/w-all' >/dev/null 2>&1"
# overwrite the current generation of shard 0 with a hash: the next run stops, naming it
now_q=$(( $(date +%s) / 4 ))
rcli del "sbloom:{win#0}:$now_q" >/dev/null
rcli hset "sbloom:{win#0}:$now_q" x y >/dev/null
"$sb" dedup --quiet --redis "$nodes" --name win --forget-after 12s <"$work/w-all" \
  >/dev/null 2>"$work/w-err"
rd=$?
if [ "$(( $(date +%s) / 4 ))" = "$now_q" ]; then # (the period did not turn meanwhile)
  check "window: a damaged generation stops the run (exit 1, one line naming it)" \
    bash -c "[ $rd = 1 ] && [ \$(grep -c . '$work/w-err') = 1 ] && grep -q 'SBLOOMDAMAGED sbloom:{win#0}:$now_q' '$work/w-err'"
fi
rcli del "sbloom:{win#0}:$now_q" >/dev/null
# past the window: a line added at t (on a clock up to 0.5 s ahead) is forgotten by its period's
# end + 12 s + the quarter period's grace, by t + 17.5 s; the last lines were added before
# written + 1 (waiting from the workers' start left them one second: too little on a loaded machine)
wait_s=$(( written + 19 - $(date +%s) ))
[ "$wait_s" -le 0 ] || sleep "$wait_s"
out=$("$sb" dedup --quiet --redis "$nodes" --name win --forget-after 12s <"$work/w-all" | wc -l)
check "window: past the window every line comes out again ($out of $(wc -l <"$work/w-all"))" \
  [ "$out" -ge "$(( $(wc -l <"$work/w-all") - 5 ))" ]
check "window: the first period's generation expired in Redis" [ "$(rcli exists "$gen")" = 0 ]

# ---- 7. a master killed mid-run (last: it changes the cluster)
# The input pauses after 30,000 lines; the master holding the most shards is killed then; the
# rest follows. The run must finish once a replica took over (or stop with exit 1 and a message),
# and every distinct line must be in the output (some may be there twice).
victim=$(head -n 1 "$cluster/masters")
{
  head -n 30000 "$work/stream"
  sleep 2
  tail -n +30001 "$work/stream"
} | "$sb" dedup --redis "$nodes" --name failover --expect 1M --retry 30 \
  >"$work/out-f" 2>"$work/err-f" &
pf=$!
sleep 1
kill -9 "$(cat "$cluster/$victim/redis.pid")"
wait $pf; rf=$?
awk '!seen[$0]++' "$work/out-f" | sort >"$work/got-f"
missing=$(comm -23 "$work/want" "$work/got-f" | wc -l)
dups=$(( $(wc -l <"$work/out-f") - $(wc -l <"$work/got-f") ))
echo "failover run: exit $rf, $(wc -l <"$work/out-f") lines out, $missing distinct lines missing, $dups written twice"
tail -n 3 "$work/err-f"
if [ "$rf" = 0 ]; then
  check "failover: no distinct line lost" [ "$missing" = 0 ]
else
  check "failover: exit 1 with a message" [ "$rf" = 1 ] && grep -q "simdbloom: redis:" "$work/err-f"
  # lines of the input not read yet are not lost: a rerun writes them
fi

finish
