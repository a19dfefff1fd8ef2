#!/usr/bin/env bash
# stages.sh TOOL GOAL...: runs TOOL GOAL for each goal in turn, as
# `TOOL GOAL...` would (make builds its goals in order), and prints each
# goal's time at the end, pass or fail. .ci/run runs the README's test
# command through it.
set -uo pipefail
tool=$1
shift
times=()
start=$SECONDS
report() {
	echo "stages: time of each"
	for line in "${times[@]}"; do echo "  $line"; done
	printf "  %-12s %5d s\n" total $((SECONDS - start))
}
trap report EXIT
for goal in "$@"; do
	t0=$SECONDS
	if "$tool" "$goal"; then
		times+=("$(printf '%-12s %5d s' "$goal" $((SECONDS - t0)))")
	else
		times+=("$(printf '%-12s %5d s FAILED' "$goal" $((SECONDS - t0)))")
		exit 1
	fi
done
