#!/usr/bin/env bash
# Every batch form of the public header (a function that takes n keys: a `size_t n` parameter) is
# called by the batch-forms test, which checks it against its one-key form; a batch form added
# later fails here until that test covers it.
#   batch_forms_listed.sh HEADER TEST_SOURCE
set -uo pipefail
header=$1 test_source=$2
. "$(dirname "$0")/lib.sh"
# Each declaration on one line: from "SBLOOM_API" to the ";" that ends it.
forms=$(awk '/^SBLOOM_API/ {decl = ""; open = 1} open {decl = decl " " $0} open && /;/ {print decl; open = 0}' \
  "$header" | grep -E 'size_t n[,)]' | grep -oE 'sbloom_[a-z0-9_]+\(' | tr -d '(' | sort -u)
count=$(echo "$forms" | grep -c .)
check "the header declares batch forms ($count found)" [ "$count" -ge 12 ]
for form in $forms; do
  check "$form is called by $(basename "$test_source")" grep -qE "\\b$form\\(" "$test_source"
done
echo "batch forms: $(echo $forms)"
finish
