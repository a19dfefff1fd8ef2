#!/usr/bin/env bash
# Builds the release, run by `make release`: for each architecture
# (GOARCH amd64, arm64, ppc64le; static, cross-built), into RELEASE_OUT
# (default dist):
#
#   tripleo-agent_<version>_<debarch>.deb             build-deb.sh
#   tripleo-agent-<upstream>-<revision>.<rpmarch>.rpm build-rpm.sh
#   tripleo-agent-<upstream>-linux-<goarch>.tar.gz    make install PREFIX=/usr STRIP=1
#                                                     under one directory of that name
#   tripleo-agent-<upstream>-linux-<goarch>.spdx.json the binary's SBOM (tools/sbom)
#
# then SHA256SUMS over those twelve files. Every artefact reproduces: the
# version and SOURCE_DATE_EPOCH come from packaging/version.sh alone, the
# binaries are built with -trimpath, and the archives have fixed owners,
# modes, mtimes and order (packaging/README.md, "Release"). Environment:
#
#   RELEASE_OUT     output directory (default: dist, under the checkout)
#   VERSION         as packaging/version.sh takes it (default: from git)
#   DEB_MAINTAINER  the .deb's Maintainer, RPM_PACKAGER the .rpm's Packager
#                   (make release passes its MAINTAINER to both)
#   MAKE, GO        the make and go to run
#
# Prints the artefacts' paths, SHA256SUMS last.
set -euo pipefail
umask 022
export LC_ALL=C

here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
cd "$top"

MAKE=${MAKE:-make}
GO=${GO:-go}
OUT=${RELEASE_OUT:-dist}
ARCHES="amd64 arm64 ppc64le"

# VERSION and SOURCE_DATE_EPOCH, one fact for every artefact: exported, so
# that the package builds and the installs below link the same version.
. "$here/version.sh"
export VERSION SOURCE_DATE_EPOCH
. "$here/stage.sh"
upstream=$(version_upstream "$VERSION")

mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/tripleo-agent-release.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The SBOM writer, from the bench's module (tools/; its go.mod reaches the
# agent's internal/spdx, with or without go.work).
"$GO" -C "$top/tools" build -trimpath -o "$work/sbom" ./sbom

# publish FILE NAME: FILE becomes $OUT/NAME whole (rename in place).
publish() { mv -f "$1" "$OUT/$2"; }

artefacts=()
for goarch in $ARCHES; do
	echo "release: $goarch" >&2
	# One build directory for the architecture's three stagings (stage.sh).
	bin=$work/bin-$goarch
	deb=$(GOARCH=$goarch STAGE_BIN="$bin" DEB_OUT="$work/out" MAKE="$MAKE" GO="$GO" bash "$here/build-deb.sh")
	publish "$deb" "${deb##*/}"
	artefacts+=("${deb##*/}")

	rpm=$(GOARCH=$goarch STAGE_BIN="$bin" RPM_OUT="$work/out" MAKE="$MAKE" GO="$GO" bash "$here/build-rpm.sh")
	publish "$rpm" "${rpm##*/}"
	artefacts+=("${rpm##*/}")

	# The tarball: make install's tree under one directory named as the
	# archive, for images with neither dpkg nor rpm.
	name=tripleo-agent-$upstream-linux-$goarch
	stage=$work/tar-$goarch
	mkdir -p "$stage"
	GOARCH=$goarch stage_tree "$stage/$name" "$bin"
	# Modes whatever the umask and the checkout's: directories and
	# executables 0755, other files 0644 (links are 0777 on Linux).
	find "$stage" -type d -exec chmod 0755 {} +
	find "$stage" -type f -perm /111 -exec chmod 0755 {} +
	find "$stage" -type f ! -perm /111 -exec chmod 0644 {} +
	# POSIX (pax) format, entries sorted by name, root's numeric owner,
	# every mtime SOURCE_DATE_EPOCH, no atime or ctime, and extended
	# headers named without tar's process id; gzip without a name or time.
	tar --create --format=posix --sort=name --owner=0 --group=0 --numeric-owner \
		--mtime="@$SOURCE_DATE_EPOCH" \
		--pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
		--directory="$stage" "$name" | gzip -9n >"$work/$name.tar.gz"
	publish "$work/$name.tar.gz" "$name.tar.gz"
	artefacts+=("$name.tar.gz")

	# Its SBOM: the agent's binary the tarball holds (the packages hold the
	# same; test/release checks it). usr/bin/os-apply-config, built from
	# the same module and commit, links a part of the same modules.
	"$work/sbom" -binary "$stage/$name/usr/bin/tripleo-agent" -name "$name" -version "$upstream" \
		-created "$SOURCE_DATE_EPOCH" -o "$work/$name.spdx.json"
	publish "$work/$name.spdx.json" "$name.spdx.json"
	artefacts+=("$name.spdx.json")
done

# SHA256SUMS: the artefacts of this run, sorted, as sha256sum writes them
# (sha256sum -c SHA256SUMS in RELEASE_OUT checks them).
mapfile -t sorted < <(printf '%s\n' "${artefacts[@]}" | sort)
(cd "$OUT" && sha256sum -- "${sorted[@]}") >"$work/SHA256SUMS"
publish "$work/SHA256SUMS" SHA256SUMS

for a in "${sorted[@]}" SHA256SUMS; do
	echo "$OUT/$a"
done
