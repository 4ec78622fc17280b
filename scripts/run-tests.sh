#!/bin/bash
# Run the whole test suite (or the meson test arguments given, e.g.
# --suite tcg), after bringing everything up to date as bootstrap.sh does
# (without the demo).  Ends with "N passed, N failed, N skipped".
set -uo pipefail

. "$(dirname "$0")/lib.sh"

"$RVPA_ROOT/scripts/bootstrap.sh" --no-demo || die "bootstrap failed"
meson test -C "$RVPA_BUILD" --print-errorlogs "$@"
status=$?
log=$RVPA_BUILD/meson-logs/testlog.json
[ -f "$log" ] || die "meson test left no $log"
/usr/bin/python3 - "$log" <<'PY'
import json, sys
counts = {"passed": 0, "failed": 0, "skipped": 0}
for line in open(sys.argv[1]):
    r = json.loads(line)["result"]
    if r in ("OK", "EXPECTEDFAIL"):
        counts["passed"] += 1
    elif r == "SKIP":
        counts["skipped"] += 1
    else:
        counts["failed"] += 1
print("{passed} passed, {failed} failed, {skipped} skipped".format(**counts))
PY
exit $status
