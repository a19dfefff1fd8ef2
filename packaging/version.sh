#!/usr/bin/env bash
# The package version, one fact for every artefact: sourced by
# build-deb.sh (and the other packaging scripts), or run to print it.
#
# VERSION set in the environment wins; else from git: a release tag
# vX.Y.Z gives X.Y.Z-1 (X.Y.Z+N.gHASH-1 N commits later); with no tag,
# 0.0~gitYYYYMMDD.HASH-1 (commit date); "+dirty" is added before the
# revision when tracked files have changes. The form is Debian's,
# [epoch:]upstream-revision; an RPM takes the upstream part as Version
# (rpm orders "~" as dpkg does) and the revision as Release.
#
# Sets SOURCE_DATE_EPOCH (the commit's time, unless set) and VERSION;
# version_upstream and version_revision split it.

# Read-only git calls: GIT_OPTIONAL_LOCKS=0 so that nothing refreshes the
# index of a checkout someone else is working in.
export GIT_OPTIONAL_LOCKS=0
if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
	SOURCE_DATE_EPOCH=$(git log -1 --format=%ct 2>/dev/null || date +%s)
fi
export SOURCE_DATE_EPOCH

default_version() {
	local d up dirty=
	if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then dirty=+dirty; fi
	if d=$(git describe --tags --match 'v[0-9]*' 2>/dev/null); then
		up=$(printf '%s' "${d#v}" | sed -E 's/-([0-9]+)-g([0-9a-f]+)$/+\1.g\2/')
	elif d=$(git rev-parse --short=7 HEAD 2>/dev/null); then
		up=0.0~git$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y%m%d).$d
	else
		up=0.0~unknown
	fi
	printf '%s%s-1' "$up" "$dirty"
}

# version_upstream 1:2.3~rc1-4 prints 2.3~rc1; version_revision prints 4
# (1 when there is none).
version_upstream() {
	local v=${1#*:}
	case $v in *-*) printf '%s' "${v%-*}" ;; *) printf '%s' "$v" ;; esac
}
version_revision() {
	local v=${1#*:}
	case $v in *-*) printf '%s' "${v##*-}" ;; *) printf 1 ;; esac
}

VERSION=${VERSION:-$(default_version)}
# Debian's rule: [epoch:]upstream[-revision], upstream starting with a digit.
if ! printf '%s' "$VERSION" | grep -Eq '^([0-9]+:)?[0-9][A-Za-z0-9.+~-]*$'; then
	echo "version: not a Debian version: $VERSION" >&2
	return 1 2>/dev/null || exit 1
fi

# Run rather than sourced: print it.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	printf '%s\n' "$VERSION"
fi
