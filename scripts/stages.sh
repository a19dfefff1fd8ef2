#!/usr/bin/env bash
# stages.sh TOOL GOAL...: runs TOOL GOAL for each goal in turn, as
# `TOOL GOAL...` would (make builds its goals in order), and prints each
# goal's time at the end, pass or fail, with how busy the machine's CPUs
# were meanwhile (from /proc/stat: a stage far from 100% waits on
# something, and could share the machine with another). .ci/run runs
# the README's test command through it.
set -uo pipefail
tool=$1
shift

. "$(dirname "$0")/timed.sh"

times=()
start=$SECONDS
report() {
	echo "stages: time of each, and how busy the CPUs were"
	for line in "${times[@]}"; do echo "  $line"; done
	printf '  %-12s %5d s\n' total $((SECONDS - start))
}
trap report EXIT
for goal in "$@"; do
	t0=$SECONDS
	read -r busy0 total0 < <(cpu_ticks)
	status=
	"$tool" "$goal" || status=" FAILED"
	pct=$(busy_since "$busy0" "$total0")
	times+=("$(printf '%-12s %5d s  CPU %3d%%%s' "$goal" $((SECONDS - t0)) "$pct" "$status")")
	[ -z "$status" ] || exit 1
done
