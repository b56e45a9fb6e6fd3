#!/usr/bin/env bash
# The claims journal of dedup --shared (src/cli/claims.c), a worker killed at each step of its
# protocol rather than at a time: the command's traced build kills itself at the 3rd pass of a
# step (SIMDBLOOM_TRACE_KILL=STEP:3, claims_step in src/cli/cli.h), then the same command runs
# again over the same input. Every distinct line comes out, and the repeats are exactly what the
# journal allows at that step:
#   intent, claimed  the journal holds the window's intent: at most a window (4,096) repeated
#   taken            it holds exactly what was claimed and not written: nothing repeated
#   output           it holds lines already written: those repeated, at least one, at most 4,096
#   written          it holds nothing: nothing repeated
# Then the journal outliving a rerun that never meets the lines it owes: a worker killed at
# "taken", a second worker over other lines (it adopts the journal and cannot pay it), then the
# first input again: every line still comes out once.
# usage: cli_journal_test.sh SIMDBLOOM_TRACED URL_STREAM
set -u
bin=$1 stream=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib.sh"
killed() { "$@"; } 2>/dev/null # (a command that kills itself: the shell's "Killed" not shown)

head -n 60000 "$stream" >"$tmp/in" # about 72% repeats: windows hold lines of earlier ones
awk '!seen[$0]++' "$tmp/in" | sort >"$tmp/distinct"
distinct=$(wc -l <"$tmp/distinct")

for step in intent claimed taken output written; do
  export SIMDBLOOM_CLAIMS_DIR=$tmp/journal-$step
  mkdir -p "$SIMDBLOOM_CLAIMS_DIR"
  f=$tmp/$step.sbloom
  SIMDBLOOM_TRACE_KILL=$step:3 killed "$bin" dedup --quiet --shared "$f" --expect 1M "$tmp/in" \
    >"$tmp/$step.1"
  rc=$?
  check "killed at '$step' (3rd window): by SIGKILL" [ "$rc" -eq 137 ]
  "$bin" dedup --quiet --shared "$f" "$tmp/in" >"$tmp/$step.2"
  check "'$step': the rerun succeeds" [ $? -eq 0 ]
  check "'$step': every distinct line came out" \
    cmp -s "$tmp/distinct" <(sort -u "$tmp/$step.1" "$tmp/$step.2")
  repeats=$(($(cat "$tmp/$step.1" "$tmp/$step.2" | wc -l) - distinct))
  case $step in
  taken | written) check "'$step': nothing repeated ($repeats)" [ "$repeats" -eq 0 ] ;;
  output) check "'$step': the window written once more ($repeats: 1 to 4096)" \
    [ "$repeats" -ge 1 -a "$repeats" -le 4096 ] ;;
  *) check "'$step': at most a window repeated ($repeats)" [ "$repeats" -le 4096 ] ;;
  esac
  check "'$step': no journal left" [ -z "$(ls -A "$SIMDBLOOM_CLAIMS_DIR")" ]
done

# A debt the next run cannot pay: it keeps the journal for the run after.
export SIMDBLOOM_CLAIMS_DIR=$tmp/journal-debt
mkdir -p "$SIMDBLOOM_CLAIMS_DIR"
head -n 30000 "$tmp/in" >"$tmp/a"
awk 'NR == FNR { a[$0]; next } !($0 in a)' "$tmp/a" "$tmp/in" >"$tmp/b" # none of a's lines
f=$tmp/debt.sbloom
SIMDBLOOM_TRACE_KILL=taken:3 killed "$bin" dedup --quiet --shared "$f" --expect 1M "$tmp/a" >"$tmp/d1"
check "debt: the first worker killed at 'taken'" [ $? -eq 137 ]
"$bin" dedup --shared "$f" "$tmp/b" >"$tmp/d2" 2>"$tmp/d2.err"
check "debt: a worker over other lines succeeds" [ $? -eq 0 ]
check "debt: ... and says it keeps looking for the lines it owes" \
  grep -q "were not in this input; the next run keeps looking for them" "$tmp/d2.err"
check "debt: ... and keeps the journal" [ -n "$(ls -A "$SIMDBLOOM_CLAIMS_DIR")" ]
"$bin" dedup --quiet --shared "$f" "$tmp/a" >"$tmp/d3"
check "debt: the first input again: every line of both came out once" \
  cmp -s "$tmp/distinct" <(sort "$tmp/d1" "$tmp/d2" "$tmp/d3")
check "debt: paid, the journal is gone" [ -z "$(ls -A "$SIMDBLOOM_CLAIMS_DIR")" ]
finish
