#!/bin/bash
# Runs the os-net-config element's 20-os-net-config of a
# tripleo-image-elements checkout once, as root, in a private mount
# namespace: /etc is an overlay whose upper layer starts as the case's
# before/etc, the case's before/net is bound over /sys/class/net, and
# the fakes of fakebin are first on PATH, before Debian's Python
# os-apply-config.
# Usage: run-reference.sh CHECKOUT CASE_DIR OUT
# OUT gets upper/ (what changed in /etc; a removed file is a whiteout),
# log (the fakes' record), stdout, stderr, trace (set -x's) and status.
set -u
ref=$1 case=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out/upper" "$out/work" "$out/net"
[ -d "$case/before/etc" ] && cp -a "$case/before/etc/." "$out/upper/"
# git keeps no modes but the executable bit, and a checkout's depend on
# the umask: a case's files are 0644, as os-apply-config renders them,
# and its safe defaults file 0600 (as the Go side's copyTree makes them).
find "$out/upper" -type f -exec chmod 644 {} +
[ -f "$out/upper/os-net-config/dhcp_all_interfaces.yaml" ] && chmod 600 "$out/upper/os-net-config/dhcp_all_interfaces.yaml"
[ -d "$case/before/net" ] && cp -a "$case/before/net/." "$out/net/"
: >"$out/log"
vars=()
[ -f "$case/case.env" ] && mapfile -t vars <"$case/case.env"
umask 022
rc=0
# set -x's trace goes to a file of its own (BASH_XTRACEFD), so that the
# trace of a value with line breaks does not mingle with the messages.
env -i PATH="$here/fakebin:/usr/bin:/bin" LANG=C.UTF-8 OS_CONFIG_FILES="$case/metadata.json" BASH_XTRACEFD=3 \
  FAKE_LOG="$out/log" FAKE_IP_ADDR="$case/ip-addr" "${vars[@]}" \
  unshare -m --propagation private bash -c '
    mount -t overlay overlay -o "lowerdir=/etc,upperdir=$1/upper,workdir=$1/work" /etc &&
    mount --bind "$1/net" /sys/class/net &&
    exec bash "$2"' _ "$out" "$ref/elements/os-net-config/os-refresh-config/configure.d/20-os-net-config" \
  >"$out/stdout" 2>"$out/stderr" 3>"$out/trace" || rc=$?
echo "$rc" >"$out/status"
