#!/usr/bin/env bash
# expect_output.sh REGEX COMMAND...: runs COMMAND, shows its output, and passes only when it
# exits 0 AND its output (standard output and error together) matches the extended regular
# expression REGEX (which may span lines). ctest's PASS_REGULAR_EXPRESSION alone would pass a
# program that prints the expected text and then crashes.
set -u
regex=$1; shift
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
if [ $rc -ne 0 ]; then echo "expect_output: exit status $rc" >&2; exit 1; fi
if ! [[ $out =~ $regex ]]; then echo "expect_output: no match for: $regex" >&2; exit 1; fi
