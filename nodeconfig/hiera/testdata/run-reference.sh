#!/bin/bash
# Runs the hiera element's 40-hiera-datafiles of a tripleo-puppet-elements
# checkout once, as root, in a private mount namespace where an empty
# directory is bound over /etc/puppet, with Debian's Python
# os-apply-config and jq (through fakebin/jq) on PATH.
# Usage: run-reference.sh CHECKOUT METADATA OUT
# OUT gets puppet/ (what the script left in /etc/puppet), stdout, stderr
# and status.
set -u
ref=$1 md=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out/puppet"
umask 022
rc=0
env -i PATH="$here/fakebin:/usr/bin:/bin" LANG=C.UTF-8 OS_CONFIG_FILES="$md" \
  unshare -m --propagation private bash -c 'mount --bind "$1" /etc/puppet && exec bash "$2"' _ \
  "$out/puppet" "$ref/elements/hiera/40-hiera-datafiles" >"$out/stdout" 2>"$out/stderr" || rc=$?
echo "$rc" >"$out/status"
