#!/usr/bin/env bash
# per_isa.sh ISA PROBE... -- TEST...: runs TEST with SIMDBLOOM_ISA=ISA, after PROBE (test_isa_forced,
# under the same environment) confirms that ISA is the one that runs. Exit 77 (ctest's skip) with
# the probe's SKIP line when this CPU cannot run ISA.
set -u
isa=$1; shift
probe=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do probe+=("$1"); shift; done
shift
export SIMDBLOOM_ISA=$isa
"${probe[@]}"
rc=$?
[ $rc -eq 0 ] || exit $rc
exec "$@"
