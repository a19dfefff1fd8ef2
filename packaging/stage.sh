#!/usr/bin/env bash
# What every package build does alike, sourced by build-deb.sh,
# build-rpm.sh and release.sh after version.sh: the architecture's name in
# each format, and make install's tree staged for a package.

# package_arch FORMAT GOARCH prints the architecture's name in FORMAT
# (deb, rpm, go), or fails for an architecture the release does not build.
package_arch() {
	case $1:$2 in
	deb:amd64 | deb:arm64 | rpm:ppc64le | go:amd64 | go:arm64 | go:ppc64le) printf '%s' "$2" ;;
	deb:ppc64le) printf ppc64el ;;
	rpm:amd64) printf x86_64 ;;
	rpm:arm64) printf aarch64 ;;
	*) return 1 ;;
	esac
}

# stage_tree STAGE BIN lays out make install PREFIX=/usr STRIP=1 (-s -w,
# as dh_strip leaves a binary) for GOARCH under STAGE, building in BIN (a
# directory of its own, not the checkout's bin/, which tests running at
# the same time may be executing); a native build must run. build-deb.sh
# and build-rpm.sh pass STAGE_BIN as BIN when it is set: release.sh gives
# the .deb, the .rpm and the tarball of an architecture one, so that the
# go build of the second and third finds its binary up to date and does
# not link it again (the same bytes: the build is reproducible).
stage_tree() {
	"${MAKE:-make}" -s --no-print-directory -C "$top" install GOARCH="$GOARCH" \
		DESTDIR="$1" PREFIX=/usr BIN="$2" STRIP=1 >&2
	# (A cross-built one runs under qemu in make cross-test.)
	if [ "$GOARCH" = "$("${GO:-go}" env GOHOSTARCH)" ]; then
		"$1/usr/bin/os-collect-config" --help >/dev/null || {
			echo "${0##*/}: the staged binary does not run" >&2
			return 1
		}
	fi
}
