#!/usr/bin/env bash
# The public headers (simdbloom.h, simdbloom_redis.h) compile cleanly, with strict warnings as errors, as C99, C11 and C17 and as
# C++11 to C++20: what a user's build may throw at it. Each unit includes it and uses its inline
# helpers, so they are compiled too.
#   header_test.sh INCLUDE_DIR CC [CXX]
set -uo pipefail
inc=$1 cc=$2 cxx=${3:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/use.c" <<'SRC'
#include "simdbloom.h"
#include "simdbloom.h" /* twice: the include guard */
#include "simdbloom_redis.h"
int main(void)
{
    sbloom_redis_options ropts = sbloom_redis_options_init();
    sbloom_redis_plan rplan = sbloom_redis_plan_init();
    sbloom_redis_info rinfo = sbloom_redis_info_init();
    sbloom_plan plan = sbloom_plan_init();
    sbloom_stats stats = sbloom_stats_init();
    sbloom_layout layout = SBLOOM_LAYOUT_COUNTING512;
    unsigned flags = SBLOOM_OPEN_VERIFY | SBLOOM_OPEN_WRITE;
    sbloom_t *filter = NULL;
    if (plan.size == 0 || stats.size == 0 || layout != SBLOOM_LAYOUT_COUNTING512 || flags != 3u)
        return 1;
    if (ropts.size == 0 || rplan.size == 0 || rinfo.size == 0 || SBLOOM_REDIS_E_PLAN >= 0)
        return 1;
    if (sbloom_add_hash(filter, 1u) != SBLOOM_E_NULL || sbloom_contains_hash(filter, 2u) != SBLOOM_E_NULL)
        return 1; /* the inline single-key calls, compiled under these warnings too */
    return SIMDBLOOM_VERSION_NUMBER > 0 && sbloom_version_string() ? 0 : 1;
}
SRC
cp "$tmp/use.c" "$tmp/use.cc"
passed=0 failed=0
run() { # description, command...
  local what=$1; shift
  if "$@" >"$tmp/out" 2>&1; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1)); echo "FAIL: $what"; cat "$tmp/out"
  fi
}
common=(-Wall -Wextra -Wpedantic -Werror -Wshadow -Wconversion -Wsign-conversion -Wcast-qual
        -Wundef -I "$inc" -c -o /dev/null)
for std in c99 c11 c17; do
  run "$cc -std=$std" "$cc" -std=$std "${common[@]}" -Wstrict-prototypes -Wmissing-prototypes \
    -Wdeclaration-after-statement "$tmp/use.c"
done
# The inline single-key calls' AVX2 form, where the compiler targets x86.
if echo | "$cc" -mavx2 -dM -E - 2>/dev/null | grep -q __AVX2__; then
  run "$cc -std=c11 -mavx2" "$cc" -std=c11 -mavx2 "${common[@]}" -Wstrict-prototypes \
    -Wmissing-prototypes -Wdeclaration-after-statement "$tmp/use.c"
  if [ -n "$cxx" ]; then
    run "$cxx -std=c++17 -mavx2" "$cxx" -std=c++17 -mavx2 "${common[@]}" -Wold-style-cast \
      -Wzero-as-null-pointer-constant "$tmp/use.cc"
  fi
fi
if [ -n "$cxx" ]; then
  for std in c++11 c++14 c++17 c++20; do
    run "$cxx -std=$std" "$cxx" -std=$std "${common[@]}" -Wold-style-cast \
      -Wzero-as-null-pointer-constant "$tmp/use.cc"
  done
else
  echo "SKIP: no C++ compiler given, C++ checks not run"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
