#!/usr/bin/env bash
# The shared library exports the public API and nothing else: every defined dynamic symbol is an
# sbloom_ function or variable declared in the header, and every one the header declares is
# exported.
#   exports_test.sh NM LIBRARY HEADER [MIN_SYMBOLS]
set -uo pipefail
nm=$1 lib=$2 header=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$nm" -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' | sort -u >"$tmp/exported"
# Declarations: "SBLOOM_API <type> name(" (functions) and "SBLOOM_API extern <type> name;"
# (variables) at the start of a line.
{
  grep -oE '^SBLOOM_API [^(]*[ *](sbloom_[a-z0-9_]+)\(' "$header" | grep -oE 'sbloom_[a-z0-9_]+\($' |
    tr -d '('
  grep -oE '^SBLOOM_API extern [^;(]*[ *]sbloom_[a-z0-9_]+;' "$header" | grep -oE 'sbloom_[a-z0-9_]+;$' |
    tr -d ';'
} | sort -u >"$tmp/declared"
passed=0 failed=0
extra=$(comm -23 "$tmp/exported" "$tmp/declared")
missing=$(comm -13 "$tmp/exported" "$tmp/declared")
if [ -z "$extra" ]; then passed=$((passed + 1)); else
  failed=$((failed + 1)); echo "FAIL: exported but not public: $(echo $extra)"; fi
if [ -z "$missing" ]; then passed=$((passed + 1)); else
  failed=$((failed + 1)); echo "FAIL: declared but not exported: $(echo $missing)"; fi
n=$(wc -l <"$tmp/exported")
if [ "$n" -ge "${4:-50}" ]; then passed=$((passed + 1)); else
  failed=$((failed + 1)); echo "FAIL: only $n symbols exported (is this the library?)"; fi
echo "$n symbols exported, all public"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
