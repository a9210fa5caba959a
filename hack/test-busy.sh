#!/usr/bin/env bash
# make test-busy: `make test` beside busy loops for the whole run (two by default: one per CPU of a 2-CPU
# machine, at nice 0), as a tester meets a shared node. Every test must pass or skip with evidence (the
# trials the tester spoiled, each for a fault a host short of CPU explains); none may fail that passes on a
# quiet machine. Run it for every change that touches the engine or the runner.
#   BUSY_LOOPS=2   how many busy loops
#   BUSY_NICE=0    their nice value
set -euo pipefail
cd "$(dirname "$0")/.."
loops=${BUSY_LOOPS:-2}
pids=()
stop_loops() {
	for pid in "${pids[@]}"; do
		kill "$pid" 2>/dev/null || true
	done
	wait "${pids[@]}" 2>/dev/null || true
}
trap stop_loops EXIT
for _ in $(seq "$loops"); do
	nice -n "${BUSY_NICE:-0}" sh -c 'while :; do :; done' &
	pids+=("$!")
done
echo "test-busy: $loops busy loops (PIDs ${pids[*]}, nice ${BUSY_NICE:-0}) beside make test"
start=$(date +%s)
make test "$@"
echo "test-busy: make test passed beside $loops busy loops in $(($(date +%s) - start)) s"
