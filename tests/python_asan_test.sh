#!/usr/bin/env bash
# The Python module under AddressSanitizer: built with clang -fsanitize=address,undefined against
# the sanitizer build's libsimdbloom.a, loaded into Debian's (uninstrumented) python3 with clang's
# ASan runtime preloaded, and the tests of the module's thread races run: batches without the
# GIL beside set_concurrent, save, copy, to_bytes and close (python/tests/test_habits.py).
#   python_asan_test.sh SOURCE_DIR SANITIZED_STATIC_LIBRARY
src=$1 lib=$2
python=/usr/bin/python3
runtime=$(clang -print-file-name=libclang_rt.asan-x86_64.so 2>/dev/null)
[ -f "$runtime" ] || { echo "SKIP: no clang ASan runtime (apt-get install libclang-rt-14-dev)"; exit 77; }
"$python" -c "import pytest, setuptools" 2>/dev/null || { echo "SKIP: no pytest or setuptools"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$src/python" "$work/python"
rm -rf "$work/python/build" "$work/python"/*.egg-info
cd "$work/python" || exit 1
CC=clang LDSHARED="clang -shared" CFLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -g" \
  LDFLAGS="-fsanitize=address,undefined" SIMDBLOOM_SOURCE_DIR=$src SIMDBLOOM_STATIC_LIB=$lib \
  "$python" setup.py -q build_ext --inplace >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
# (Python itself leaks by design: leaks are not what this run looks for)
LD_PRELOAD=$runtime ASAN_OPTIONS=detect_leaks=0:abort_on_error=0 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  "$python" -m pytest -q -p no:cacheprovider tests/test_habits.py \
  -k "mode_changes or checkpoints or close_waits or pickle or map_creates"
