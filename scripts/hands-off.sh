#!/usr/bin/env bash
# Runs a command (a test run) and fails when it changed one of the
# machine's own paths that the agent's programs write on a node: tests
# must point every program at their own roots (t.TempDir, NODECONFIG_ROOT,
# OS_COLLECT_CONFIG_STATUS_DIR, DESTDIR...). A path is compared by its
# tree's names, types, modes, sizes and times before and after, so a file
# created, replaced or removed there shows.
#
#   scripts/hands-off.sh -- COMMAND [ARG...]
#
# Exits with the command's status, or 1 naming the paths it touched.
set -uo pipefail

[ "${1:-}" = -- ] && shift
[ $# -gt 0 ] || { echo "usage: hands-off.sh -- COMMAND [ARG...]" >&2; exit 2; }

paths=(
	/run/tripleo-agent /run/os-collect-config /run/heat-config
	/var/lib/os-collect-config /var/lib/heat-config /var/cache/heat-config
	/etc/os-collect-config.conf /etc/hosts /etc/sysctl.d /etc/sysconfig
	/etc/os-net-config /etc/udev/rules.d /etc/puppet/hieradata
)

snapshot() {
	local p
	for p in "${paths[@]}"; do
		if [ -e "$p" ] || [ -L "$p" ]; then
			find "$p" -xdev -printf '%p %y %m %s %T@\n' 2>/dev/null | LC_ALL=C sort
		else
			echo "$p absent"
		fi
	done
}

before=$(snapshot)
"$@"
status=$?
after=$(snapshot)
if [ "$before" != "$after" ]; then
	echo "hands-off: the run changed the machine's own files (a test wrote outside its root):" >&2
	diff <(echo "$before") <(echo "$after") | grep '^[<>]' | sed 's/^/hands-off:   /' >&2
	exit 1
fi
exit "$status"
