#!/usr/bin/env bash
# timed.sh LABEL CMD...: runs CMD and prints, after it, one line with
# LABEL, its time and how busy the machine's CPUs were meanwhile (from
# /proc/stat); CMD's exit status is kept. scripts/stages.sh sources it
# for cpu_ticks and busy_since.

# cpu_ticks prints the busy and the total ticks of all CPUs so far.
cpu_ticks() {
	local _ user nice system idle iowait rest v
	read -r _ user nice system idle iowait rest </proc/stat 2>/dev/null || { echo "0 0"; return; }
	local total=$((user + nice + system + idle + iowait))
	for v in $rest; do total=$((total + v)); done
	echo "$((total - idle - iowait)) $total"
}

# busy_since BUSY0 TOTAL0 prints the percentage of CPU time spent busy
# since that cpu_ticks.
busy_since() {
	local busy1 total1
	read -r busy1 total1 < <(cpu_ticks)
	if [ "$total1" -gt "$2" ]; then echo $(((busy1 - $1) * 100 / (total1 - $2))); else echo 0; fi
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	label=$1
	shift
	t0=$SECONDS
	read -r busy0 total0 < <(cpu_ticks)
	"$@"
	rc=$?
	printf 'timed: %-24s %5d s  CPU %3d%%%s\n' "$label" $((SECONDS - t0)) "$(busy_since "$busy0" "$total0")" "$([ $rc = 0 ] || echo " (exit $rc)")"
	exit $rc
fi
