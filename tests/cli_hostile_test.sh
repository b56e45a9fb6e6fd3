#!/usr/bin/env bash
# The command line against a hostile user: odd save targets, permissions, FIFOs, pipelines that
# wait on output, kills mid-write, unwritable output, files truncated under a running command,
# names at the length limit, leftover temporary files, and a bad SIMDBLOOM_ISA. Everything
# happens in a temporary directory (the device node is made there, never the real /dev), every
# wait is bounded by timeout, and every skipped check says SKIP.
# usage: cli_hostile_test.sh SIMDBLOOM_BINARY
set -u
bin=$1
tmp=$(mktemp -d)
# Only this shell removes it: a child forked for a pipeline and killed before its exec would
# otherwise run the copied trap and remove the directory under the running test.
trap '[ "$BASHPID" = "$$" ] && rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib.sh"
skip() { echo "SKIP: $*"; }
cd "$tmp" || exit 1
seq 1 20000 | sed 's|^|https://example.org/page/|' >keys

# 1. Save targets: a device node and a FIFO are refused, a symlink is written through, and a
#    hard link keeps the old contents (documented).
if mknod mynull c 1 3 2>/dev/null; then
  "$bin" build --quiet -o mynull keys 2>err; rc=$?
  check "build -o DEVICE: exit 1, says it is a character device" bash -c "[ $rc -eq 1 ] && grep -q 'is a character device' err"
  check "the device node is still a device node" test -c mynull
else
  skip "mknod not permitted here: device-node target not tested"
fi
mkfifo fifo-target
timeout 10 "$bin" build --quiet -o fifo-target keys 2>err; rc=$?
check "build -o FIFO: exit 1 at once, says it is a FIFO" bash -c "[ $rc -eq 1 ] && grep -q 'is a FIFO' err && [ -p fifo-target ]"
"$bin" build --quiet --expect 100k -o real.sbloom keys
ln -s real.sbloom link.sbloom
ln real.sbloom hard.sbloom
echo https://new.example/ >more
"$bin" add --quiet link.sbloom more
check "add through a symlink keeps the link" test -L link.sbloom
check "add through a symlink updates its target" bash -c "'$bin' query --quiet real.sbloom more | grep -q new.example"
check "a hard link keeps the old contents (rename makes a new file)" bash -c "! '$bin' query --quiet hard.sbloom more | grep -q new.example"

# 2. Permissions: a 0600 filter stays 0600, a 0640 one 0640; a new file follows the umask.
chmod 600 real.sbloom
"$bin" add --quiet real.sbloom more
check "add keeps mode 0600" bash -c "[ \$(stat -c %a real.sbloom) = 600 ]"
chmod 640 real.sbloom
"$bin" add --quiet real.sbloom more
check "add keeps mode 0640" bash -c "[ \$(stat -c %a real.sbloom) = 640 ]"
(umask 077 && "$bin" build --quiet -o private.sbloom more)
check "a new file under umask 077 is 0600" bash -c "[ \$(stat -c %a private.sbloom) = 600 ]"
(umask 022 && "$bin" build --quiet -o public.sbloom more)
check "a new file under umask 022 is 0644" bash -c "[ \$(stat -c %a public.sbloom) = 644 ]"

# 3. A FIFO as a filter or as FILTER.allow: refused at once, saying what it is.
mkfifo fifo.sbloom
for command in info "query fifo.sbloom" "allow fifo.sbloom" "add fifo.sbloom"; do
  set -- $command
  timeout 10 "$bin" "$@" $([ $# -eq 1 ] && echo fifo.sbloom) </dev/null >/dev/null 2>err; rc=$?
  check "$1 on a FIFO: exit 1 without waiting, says FIFO" bash -c "[ $rc -eq 1 ] && grep -q 'is a FIFO' err"
done
cp real.sbloom withallow.sbloom && mkfifo withallow.sbloom.allow
timeout 10 "$bin" query withallow.sbloom more >/dev/null 2>err; rc=$?
check "query with FILTER.allow a FIFO: exit 1 without waiting" bash -c "[ $rc -eq 1 ] && grep -q 'allow: it is a FIFO' err"

# 4. Pipelines: a new line comes out while the input is still open, and output is whole lines.
first=$( { echo https://a.example/; sleep 3; echo https://b.example/; } |
  timeout 10 "$bin" dedup --quiet | { read -r -t 2 line; echo "${line:-none}"; } )
check "dedup in a pipe: the first new line comes out before more input arrives" [ "$first" = https://a.example/ ]
first=$( { echo https://example.org/page/5; sleep 3; } |
  timeout 10 "$bin" query --quiet real.sbloom | { read -r -t 2 line; echo "${line:-none}"; } )
check "query in a pipe: the answer comes out before more input arrives" [ "$first" = https://example.org/page/5 ]
"$bin" gen-urls 3000000 --seed 3 >big
"$bin" dedup --quiet --expect 3M big >all.out
# Stopped by kill (SIGTERM), Ctrl-C (SIGINT) or a closed terminal (SIGHUP) mid-stream: whole
# lines, a prefix of the full output, exit 128 + the signal. The input comes through a pipe that
# stays open, so the signal always lands while dedup runs.
for sig in TERM INT HUP; do
  # After the input, a line already seen every 0.1 s: the stream stays open, and the writer
  # ends by SIGPIPE once dedup has gone. The last run's output goes first: the signal must wait
  # for this run's first line (dedup started), never find the old file and land before the exec.
  rm -f stopped.out
  { cat big; while head -n 1 big; do sleep 0.1; done; } 2>/dev/null |
    "$bin" dedup --quiet --expect 3M >stopped.out & pid=$!
  for i in $(seq 1 600); do [ -s stopped.out ] && break; sleep 0.05; done
  kill -0 $pid 2>/dev/null; alive=$?
  kill -$sig $pid; wait $pid; rc=$?
  check "dedup stopped by SIG$sig: was running, exit $rc = 128 + signal" bash -c "[ $alive -eq 0 ] && [ $rc -eq \$((128 + \$(kill -l $sig))) ]"
  check "dedup stopped by SIG$sig: output is whole lines, a prefix of the full output" bash -c "
    [ \"\$(tail -c 1 stopped.out | od -An -c | tr -d ' ')\" = '\\n' ] &&
    cmp -s stopped.out <(head -c \$(stat -c %s stopped.out) all.out)"
done

# 5. Unwritable output: exit 1 with a message, and no claim of lines written that were not.
if [ -w /dev/full ]; then
  for command in "--version" "--help" "plan" "plan --table" "info real.sbloom" "plan --help"; do
    "$bin" $command >/dev/full 2>err; rc=$?
    check "$command > /dev/full: exit 1 with a message" bash -c "[ $rc -eq 1 ] && grep -q 'cannot write' err"
  done
  "$bin" dedup big >/dev/full 2>err; rc=$?
  check "dedup > /dev/full: exit 1, one line, no 'lines out' claimed" bash -c "[ $rc -eq 1 ] && [ \$(wc -l <err) -eq 1 ] && grep -q 'cannot write' err && ! grep -q 'lines out' err"
else
  skip "/dev/full not writable here: write-error checks not run"
fi
"$bin" --version >&- 2>err; rc=$?
check "--version with stdout closed: exit 1" bash -c "[ $rc -eq 1 ] && grep -q 'cannot write' err"

# 6. A filter replaced by truncation (cp onto it) while a query runs: no SIGBUS, exit 0 or 1.
"$bin" build --quiet --expect 2M -o victim.sbloom keys
{ echo https://example.org/page/7; sleep 2; echo https://example.org/page/8; } |
  timeout 20 "$bin" query --quiet victim.sbloom >q.out 2>q.err & pid=$!
sleep 1; cp public.sbloom victim.sbloom
wait $pid; rc=$?
check "query while its filter is truncated in place: no signal (exit $rc)" bash -c "[ $rc -eq 0 ] || [ $rc -eq 1 ]"
check "and it still answers from the filter it read" bash -c "[ \$(wc -l <q.out) -eq 2 ]"

# 6b. An input file truncated while dedup reads it (a file is mapped: a SIGBUS, or a write from
#     the mapping that fails): exit 1 and one line saying so, never a signal. The output is a
#     FIFO left unread until the file is cut, so the cut comes mid-run.
if grep -q 'qemu-s390x' "$bin" 2>/dev/null; then
  skip "under qemu-s390x the emulator, not the program, takes the SIGBUS: input truncation checked natively"
else
seq 1 200000 | sed 's|^|https://example.org/cut/|' >cut-input
mkfifo cut-out
timeout 60 "$bin" dedup --quiet --threads 1 cut-input >cut-out 2>cut-err & pid=$!
exec 5<cut-out
head -c 1000 <&5 >/dev/null
truncate -s 0 cut-input
cat <&5 >/dev/null
exec 5<&-
wait $pid; rc=$?
check "an input truncated under dedup: exit 1, not a signal ($rc)" [ "$rc" -eq 1 ]
check "an input truncated under dedup: one line saying so" \
  bash -c "[ \$(wc -l <cut-err) -eq 1 ] && grep -q 'truncated while this run was reading it' cut-err"
fi

# 7. Names at the length limit, and merge with a single filter.
name=$(printf 'n%.0s' $(seq 1 248)).sbloom   # 255 bytes, the limit of most file systems
"$bin" build --quiet -o "$name" more 2>err; rc=$?
check "a 255-byte filter name can be saved" bash -c "[ $rc -eq 0 ] && [ -f '$name' ]"
"$bin" add --quiet "$name" keys; rc=$?
check "and saved again" [ $rc -eq 0 ]
"$bin" merge -o one.sbloom real.sbloom 2>err; rc=$?
check "merge with one FILTER is a usage error" bash -c "[ $rc -eq 2 ] && [ ! -e one.sbloom ]"

# 8. Leftover temporary files: named by info and by writing commands, removed by info --clean.
: >real.sbloom.tmp.AbC123
: >.sbloom-tmp.XyZ789
"$bin" info real.sbloom >/dev/null 2>err
check "info names a leftover temporary file" grep -q 'real.sbloom.tmp.AbC123 is left over' err
check "info names a leftover short-named temporary file" grep -q '.sbloom-tmp.XyZ789 is left over' err
"$bin" add real.sbloom more 2>err >/dev/null
check "add names it too" grep -q 'real.sbloom.tmp.AbC123 is left over' err
"$bin" info --clean real.sbloom >/dev/null 2>err
check "info --clean removes them" bash -c "[ ! -e real.sbloom.tmp.AbC123 ] && [ ! -e .sbloom-tmp.XyZ789 ] && grep -q removed err"
check "nothing else in the directory is a temporary file" bash -c "! ls -a | grep -q '\.tmp\.\|sbloom-tmp'"

# 10. SIMDBLOOM_ISA naming something unusable: exit 1 from every command, naming the variable.
SIMDBLOOM_ISA=bogus "$bin" --version >out 2>err; rc=$?
check "SIMDBLOOM_ISA=bogus --version: exit 1, names the variable and the usable sets" bash -c "[ $rc -eq 1 ] && grep -q 'SIMDBLOOM_ISA=bogus: unknown instruction set (usable: .*scalar' err && [ ! -s out ]"
usable=$("$bin" --version | sed 's/.*available: \(.*\))/\1/')
for isa in avx2 avx512 neon; do
  case " $usable " in
    *" $isa "*) ;;
    *) SIMDBLOOM_ISA=$isa "$bin" dedup --quiet </dev/null 2>err; rc=$?
       check "SIMDBLOOM_ISA=$isa where unusable: exit 1, says what is lacking" bash -c "[ $rc -eq 1 ] && grep -q \"SIMDBLOOM_ISA=$isa: this .* lacks\" err" ;;
  esac
done

# The --shared file under a hostile neighbour: truncated while a worker has it mapped (a SIGBUS
# there), or replaced (cp + mv over it). Each ends with exit 1 and one line saying which, never a
# crash; the lines of the run are recovered by a rerun on a new file. Workers hold their input
# open (a FIFO) while the file is changed.
export SIMDBLOOM_CLAIMS_DIR=$tmp
echo x | "$bin" dedup --quiet --shared probe.sbloom --expect 1k >/dev/null 2>err
if grep -q "not supported by this build or host" err; then
  skip "big-endian host: dedup --shared refuses (as documented), its hostile cases not run"
else
  seq 1 20000 | sed 's|^|https://example.org/shared/|' >shared-keys
  shared_hostile() { # NAME ACTION: a worker over shared-keys, ACTION run after its first half
    rm -f sh.sbloom* sh-fifo; mkfifo sh-fifo
    timeout 60 "$bin" dedup --quiet --shared sh.sbloom --expect 100k <sh-fifo >sh-out 2>sh-err &
    local pid=$!
    exec 4>sh-fifo
    head -n 10000 shared-keys >&4
    for _ in $(seq 400); do [ "$(wc -l <sh-out)" -ge 10000 ] && break; sleep 0.025; done
    bash -c "$2"
    tail -n +10001 shared-keys >&4 2>/dev/null
    exec 4>&-
    wait "$pid"
  }
  shared_hostile truncated "truncate -s 4096 sh.sbloom"; rc=$?
  check "--shared file truncated mid-run: exit 1, not a signal ($rc)" [ "$rc" -eq 1 ]
  check "--shared file truncated mid-run: one line saying so" \
    bash -c "[ \$(wc -l <sh-err) -eq 1 ] && grep -q 'truncated by another process' sh-err"
  cp sh-out sh-first
  rm -f sh.sbloom
  timeout 60 "$bin" dedup --quiet --shared sh.sbloom --expect 100k shared-keys >sh-again
  check "after the truncation, a rerun on a new file: nothing lost" \
    bash -c "sort -u sh-first sh-again | cmp -s - <(sort -u shared-keys)"
  shared_hostile corrupted "printf 'garbage-garbage-garbage-garbage' | dd of=sh.sbloom bs=1 seek=0 conv=notrunc status=none; '$bin' dedup --quiet --shared sh.sbloom --expect 100k </dev/null >/dev/null 2>sh-second; echo \$? >sh-second-rc"; rc=$?
  check "--shared header overwritten mid-run: a worker starting then refuses, one line ($(cat sh-second-rc))" \
    bash -c "[ \$(cat sh-second-rc) -eq 1 ] && [ \$(wc -l <sh-second) -eq 1 ]"
  check "--shared header overwritten mid-run: the running worker ends well ($rc), rewriting the header" \
    bash -c "[ $rc -eq 0 ] && '$bin' info sh.sbloom >/dev/null 2>&1"
  check "--shared header overwritten mid-run: the file holds every line, each written once" \
    bash -c "[ \$('$bin' query --quiet --absent sh.sbloom shared-keys | wc -l) -eq 0 ] && sort sh-out | cmp -s - <(sort -u shared-keys)"
  shared_hostile replaced "'$bin' build --quiet --expect 100k -o other.sbloom shared-keys && mv other.sbloom sh.sbloom"; rc=$?
  check "--shared file replaced mid-run: exit 1 ($rc)" [ "$rc" -eq 1 ]
  check "--shared file replaced mid-run: one line saying so" \
    bash -c "[ \$(wc -l <sh-err) -eq 1 ] && grep -q 'replaced or removed by another process' sh-err"
fi

finish
