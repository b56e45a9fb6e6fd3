#!/usr/bin/env bash
# The docs name every command and option the program has: each command `simdbloom --help` lists
# has a section in the man page and a line in the README's synopsis, and each option of its
# --help (in its usage lines, or a line describing it) appears in both (so a command or option added without its docs fails here).
# And the README's C example is examples/visited.c, as it is built and run by the tests.
#   docs_options_test.sh SIMDBLOOM README MANPAGE EXAMPLE
bin=$1 readme=$2 man=$3 example=$4
. "$(dirname "$0")/lib.sh"
# the man page with its escaped hyphens as plain ones
page=$(sed 's/\\-/-/g' "$man")
# the README's synopsis: the block under "## The command line"
synopsis=$(awk '/^## The command line/ { on = 1 } on && /^```sh/ { inblock = 1; next }
  inblock && /^```/ { exit } inblock { print }' "$readme")
commands=$("$bin" --help | awk '/^Commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }')
check "simdbloom --help lists commands" [ "$(echo "$commands" | wc -w)" -ge 10 ]
for c in $commands; do
  check "man page: a section for $c" grep -q "^\.SS $c\$" <<<"$page"
  check "README synopsis: simdbloom $c" grep -q "^simdbloom $c\b" <<<"$synopsis"
  # its options: those of its usage lines and of the lines that describe one ("  --name ...")
  for opt in $("$bin" "$c" --help | awk '
      /^Every command takes:/ { exit }
      /^usage: / { on = 1 } on && /^$/ { on = 0 }
      on { while (match($0, /--[a-z][a-z0-9-]*/)) { print substr($0, RSTART, RLENGTH); $0 = substr($0, RSTART + RLENGTH) } next }
      /^ +-/ && match($0, /--[a-z][a-z0-9-]*/) { print substr($0, RSTART, RLENGTH) }' | sort -u); do
    check "man page: $c $opt" grep -q -- "$opt" <<<"$page"
    check "README synopsis: $c $opt" \
      bash -c "awk -v c='$c' '\$1 == \"simdbloom\" { cur = \$2 } cur == c' <<<\"\$1\" | grep -q -- '$opt'" _ "$synopsis"
  done
done
for opt in --version --help; do
  check "README synopsis: simdbloom $opt" grep -q -- "simdbloom $opt" <<<"$synopsis"
done
# the options every command takes (after "Every command takes:" in each --help)
for opt in $("$bin" dedup --help | sed -n '/^Every command takes:/,$p' | grep -o -- '--[a-z][a-z-]*' | sort -u); do
  check "man page: $opt" grep -q -- "$opt" <<<"$page"
  check "README synopsis: $opt (every command)" grep -q -- "$opt" <<<"$synopsis"
done
check "the README's C example is $example" \
  cmp -s <(awk '/^```c$/ { on = 1; next } on && /^```$/ { exit } on' "$readme") "$example"
finish
