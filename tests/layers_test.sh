#!/usr/bin/env bash
# The library's layers (docs/ARCHITECTURE.md), read from the code itself: api -> modes -> object
# -> core -> os -> base. Fails when
#   - a file includes a header of a higher layer (from the sources), or
#   - a file calls a function defined in a higher layer, or two files call each other in a loop
#     (from the compiled objects: each file's undefined symbols against the others' definitions).
# A call through a mode's table is a function pointer, not a symbol: it is how the layers below
# reach a mode's operation.
#   layers_test.sh NM OBJECT_DIR SOURCE_DIR   (OBJECT_DIR: CMake's .../simdbloom_objects.dir)
set -uo pipefail
nm=$1 objects=$2 source=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
check() { # check DESCRIPTION FAILURES-FILE
  if [ -s "$2" ]; then
    failed=$((failed + 1))
    echo "FAIL: $1:"
    sed 's/^/  /' "$2"
  else
    passed=$((passed + 1))
  fi
}
# The layer of a file of src/ (0: not a library layer), in awk: rank(path). One awk program a
# check (no process a file or a call: forks are what cost time on a slow VM).
rank_awk='function rank(p) {
  if (p ~ /^src\/api\//) return 6; if (p ~ /^src\/modes\//) return 5; if (p ~ /^src\/object\./) return 4
  if (p ~ /^src\/core\//) return 3; if (p ~ /^src\/os\//) return 2; if (p ~ /^src\/base\//) return 1
  return 0
}'

# 1. Includes: every quoted include of a library file resolved against its directory.
cd "$source" || exit 2
files=$(find src/api src/modes src/object.* src/core src/os src/base -type f | sort)
# FILE:#include "NAME" lines; NAME resolved against FILE's directory (".." and "." folded)
# shellcheck disable=SC2086 # the file names hold no spaces
grep -oHE '^#include "[^"]+"' $files | awk "$rank_awk"'
{
  f = substr($0, 1, index($0, ":") - 1); inc = $0; sub(/^[^:]*:#include "/, "", inc); sub(/"$/, "", inc)
  dir = f; sub(/\/[^\/]*$/, "", dir)
  n = split(dir "/" inc, part, "/"); depth = 0
  for (i = 1; i <= n; i++) {
    if (part[i] == "." || part[i] == "") continue
    if (part[i] == "..") { if (depth > 0) depth--; continue }
    kept[++depth] = part[i]
  }
  target = kept[1]; for (i = 2; i <= depth; i++) target = target "/" kept[i]
  if (rank(target) > rank(f)) print f " includes " target
}' >"$tmp/up_includes"
check "includes from a lower layer to a higher one" "$tmp/up_includes"
cd - >/dev/null || exit 2

# 2. Calls: symbols each object defines and needs (one nm over them all: NM -A names the object
# on each line, "OBJECT:ADDRESS T SYMBOL" or "OBJECT:   U SYMBOL").
list=()
while IFS= read -r -d '' o; do
  file=${o#"$objects"/}
  file=${file%.o}
  case "$file" in src/*) ;; *) continue ;; esac
  [ -f "$source/$file" ] || continue # an object left from a file since removed
  list+=("$o")
done < <(find "$objects" -name '*.o' -print0)
count=${#list[@]}
# shellcheck disable=SC2016 # awk's own $ fields
source_of='function source_of(line) { line = substr(line, 1, index(line, ":") - 1)
  return substr(line, length(prefix) + 2, length(line) - length(prefix) - 3) }'
if [ "$count" -gt 0 ]; then
  "$nm" -A --defined-only "${list[@]}" |
    awk -v prefix="$objects" "$source_of"'$(NF - 1) ~ /^[TDBR]$/ {print $NF, source_of($0)}' >"$tmp/defined"
  "$nm" -A --undefined-only "${list[@]}" |
    awk -v prefix="$objects" "$source_of"'{print source_of($0), $NF}' >"$tmp/needed"
fi
if [ "$count" -ge 20 ]; then passed=$((passed + 1)); else
  failed=$((failed + 1)); echo "FAIL: only $count objects of src/ under $objects"; fi
sort -u "$tmp/defined" >"$tmp/defined.s"
# caller callee, for every symbol one file needs and another defines
awk 'NR == FNR {at[$1] = $2; next} ($2 in at) && at[$2] != $1 {print $1, at[$2]}' \
  "$tmp/defined.s" "$tmp/needed" | sort -u >"$tmp/calls"
awk "$rank_awk"'rank($2) > rank($1) {print $1 " calls up into " $2}' "$tmp/calls" >"$tmp/up_calls"
check "calls from a lower layer to a higher one" "$tmp/up_calls"
tsort "$tmp/calls" >/dev/null 2>"$tmp/loops"
check "files that call each other in a loop" "$tmp/loops"
echo "$(wc -l <"$tmp/calls") calls between $count files of src/"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
