#!/usr/bin/env bash
# The Python module: installed with pip into a throwaway virtual environment (Debian's python3,
# offline: --no-build-isolation --no-index, the system's packages visible), then its pytest
# suite, and the Scrapy crawl tests where Scrapy is installed.
#   python_test.sh SOURCE_DIR STATIC_LIBRARY [REDIS_STATIC_LIBRARY]
# The module links the build tree's libsimdbloom.a (SIMDBLOOM_STATIC_LIB), and
# libsimdbloom-redis.a where built: setup.py builds them with CMake only when none is given.
# Everything happens in a temporary directory; Redis servers the tests start listen on loopback.
src=$1 lib=$2 redis_lib=${3:-}
python=/usr/bin/python3
"$python" -c "import venv, pytest, setuptools" 2>/dev/null ||
  { echo "SKIP: /usr/bin/python3 lacks venv, pytest or setuptools (apt-get install python3-venv python3-pytest python3-setuptools)"; exit 77; }
"$python" -c "import sysconfig, os; exit(not os.path.exists(os.path.join(sysconfig.get_paths()['include'], 'Python.h')))" ||
  { echo "SKIP: no Python.h (apt-get install python3-dev)"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$src/python" "$work/python"
rm -rf "$work/python/build" "$work/python"/*.egg-info
"$python" -m venv --system-site-packages "$work/env" || exit 1
SIMDBLOOM_SOURCE_DIR=$src SIMDBLOOM_STATIC_LIB=$lib SIMDBLOOM_REDIS_STATIC_LIB=$redis_lib \
  "$work/env/bin/pip" install --quiet --no-build-isolation --no-index "$work/python" || exit 1
cd "$work" || exit 1 # not the source folder: the installed module is the one imported
export SIMDBLOOM_SOURCE_DIR=$src # the crawl tests start Redis with ci/redis-cluster
"$work/env/bin/python" -m pytest -q -p no:cacheprovider "$work/python/tests" || exit 1
# The type stubs against the module (mypy's stubtest), and a call they must refuse.
if "$python" -c "import mypy.stubtest" 2>/dev/null; then
  "$work/env/bin/python" -m mypy.stubtest simdbloom._simdbloom || exit 1
  printf 'import simdbloom\nf = simdbloom.Filter(10, 1e-3)\nf.add_many(["a", b"b"])\n' >"$work/good.py"
  printf 'import simdbloom\nsimdbloom.Filter(10, 1e-3).add_many(5)\n' >"$work/bad.py"
  "$work/env/bin/python" -m mypy --no-incremental "$work/good.py" >/dev/null || { echo "FAIL: mypy refuses good calls"; exit 1; }
  ! "$work/env/bin/python" -m mypy --no-incremental "$work/bad.py" >/dev/null || { echo "FAIL: mypy takes add_many(5)"; exit 1; }
  echo "stubs: stubtest and mypy agree with the module"
fi
