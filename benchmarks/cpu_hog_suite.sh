#!/usr/bin/env bash
# Run the whole test suite RUNS times in a row while another process keeps one core busy,
# stopping at the first failing run: a test that passes alone but fails here waits on a
# guessed time instead of an event, and is a defect.
#
#   benchmarks/cpu_hog_suite.sh [RUNS] [TEST ...]      # default: 10 runs of `tests`
#
# The hog is one Python process spinning for at most HOG_SECONDS (default 3600); the
# script kills it by its own PID when the runs end, however they end. Run it from the
# repository root. Each run's output goes to $TMPDIR/cpu_hog_suite.N.log.
set -uo pipefail
cd "$(dirname "$0")/.."

runs=${1:-10}
shift || true
tests=("${@:-tests}")
tmp=${TMPDIR:-/tmp}
hog_seconds=${HOG_SECONDS:-3600}

python -c "
import time
end = time.monotonic() + $hog_seconds
while time.monotonic() < end:
    for _ in range(100000):
        pass
" &
hog=$!
stop_hog() {
    kill "$hog" 2>/dev/null
    wait "$hog" 2>/dev/null
}
trap stop_hog EXIT

for run in $(seq 1 "$runs"); do
    log="$tmp/cpu_hog_suite.$run.log"
    started=$(date +%s)
    python -m twisted.trial --temp-directory="$tmp/cpu_hog_suite.trial" "${tests[@]}" \
        > "$log" 2>&1
    status=$?
    summary=$(tail -n 1 "$log")
    echo "run $run/$runs: $summary ($(( $(date +%s) - started )) s; log $log)"
    if [ "$status" -ne 0 ]; then
        echo "cpu_hog_suite: run $run failed; the failures:" >&2
        grep -E '^(\[FAIL\]|\[ERROR\])' -A 12 "$log" | head -n 60 >&2
        exit 1
    fi
done
echo "cpu_hog_suite: $runs runs passed under a CPU hog"
