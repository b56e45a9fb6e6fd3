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
# rank PATH: the layer of a file of src/ (0: not a library layer)
rank() {
  case "$1" in
  src/api/*) echo 6 ;; src/modes/*) echo 5 ;; src/object.*) echo 4 ;; src/core/*) echo 3 ;;
  src/os/*) echo 2 ;; src/base/*) echo 1 ;; *) echo 0 ;;
  esac
}

# 1. Includes: every quoted include of a library file resolved against its directory.
cd "$source" || exit 2
files=$(find src/api src/modes src/object.* src/core src/os src/base -type f | sort)
for f in $files; do
  from=$(rank "$f")
  for inc in $(grep -oE '^#include "[^"]+"' "$f" | sed 's/^#include "//; s/"$//'); do
    target=$(realpath -m --relative-to=. "$(dirname "$f")/$inc")
    to=$(rank "$target")
    [ "$to" -gt "$from" ] && echo "$f includes $target"
  done
done >"$tmp/up_includes"
check "includes from a lower layer to a higher one" "$tmp/up_includes"
cd - >/dev/null || exit 2

# 2. Calls: symbols each object defines and needs.
count=0
while IFS= read -r -d '' o; do
  file=${o#"$objects"/}
  file=${file%.o}
  case "$file" in src/*) ;; *) continue ;; esac
  [ -f "$source/$file" ] || continue # an object left from a file since removed
  "$nm" --defined-only "$o" | awk -v f="$file" '$2 ~ /^[TDBR]$/ {print $3, f}' >>"$tmp/defined"
  "$nm" --undefined-only "$o" | awk -v f="$file" '{print f, $NF}' >>"$tmp/needed"
  count=$((count + 1))
done < <(find "$objects" -name '*.o' -print0)
if [ "$count" -ge 20 ]; then passed=$((passed + 1)); else
  failed=$((failed + 1)); echo "FAIL: only $count objects of src/ under $objects"; fi
sort -u "$tmp/defined" >"$tmp/defined.s"
# caller callee, for every symbol one file needs and another defines
awk 'NR == FNR {at[$1] = $2; next} ($2 in at) && at[$2] != $1 {print $1, at[$2]}' \
  "$tmp/defined.s" "$tmp/needed" | sort -u >"$tmp/calls"
while read -r caller callee; do
  [ "$(rank "$callee")" -gt "$(rank "$caller")" ] && echo "$caller calls up into $callee"
done <"$tmp/calls" >"$tmp/up_calls"
check "calls from a lower layer to a higher one" "$tmp/up_calls"
tsort "$tmp/calls" >/dev/null 2>"$tmp/loops"
check "files that call each other in a loop" "$tmp/loops"
echo "$(wc -l <"$tmp/calls") calls between $count files of src/"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
