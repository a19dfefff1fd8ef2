#!/usr/bin/env bash
# Builds tripleo-agent-<Version>-<Release>.<arch>.rpm from `make install
# PREFIX=/usr STRIP=1` with rpmbuild -bb and packaging/rpm/tripleo-agent.spec
# (Debian's rpm is enough: no source package, no systemd-rpm-macros). Run
# by `make rpm`; the environment:
#
#   VERSION        the version (default: packaging/version.sh's, from git);
#                  Version is its upstream part, Release its revision
#   GOARCH         amd64, arm64 or ppc64le (x86_64, aarch64, ppc64le);
#                  default the host's
#   RPM_OUT        output directory (default: dist, under the checkout)
#   RPM_PACKAGER   Packager and the changelog's signature, "Name <address>"
#                  (required: make rpm passes its MAINTAINER variable)
#   MAKE           the make that runs the install target
#
# SOURCE_DATE_EPOCH (version.sh: the commit's time) dates the build and
# every file, so the same tree and version give the same bytes.
# Prints the path of the package.
set -euo pipefail
umask 022

here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
cd "$top"

MAKE=${MAKE:-make}
OUT=${RPM_OUT:-dist}
PACKAGER=${RPM_PACKAGER:-}
. "$here/stage.sh"
GOARCH=${GOARCH:-$("${GO:-go}" env GOARCH)}
ARCH=$(package_arch rpm "$GOARCH") || { echo "build-rpm: no RPM architecture for GOARCH=$GOARCH" >&2; exit 1; }
export GOARCH

die() { echo "build-rpm: $*" >&2; exit 1; }

command -v rpmbuild >/dev/null || die "no rpmbuild (Debian: apt-get install rpm)"

# VERSION and SOURCE_DATE_EPOCH (packaging/version.sh).
. "$here/version.sh"
RPM_VERSION=$(version_upstream "$VERSION")
RPM_RELEASE=$(version_revision "$VERSION")
# rpm's Version and Release take no "-" (nor ":", an epoch is not carried).
case $RPM_VERSION$RPM_RELEASE in *[!A-Za-z0-9.+~^_]*) die "not an RPM version: $RPM_VERSION-$RPM_RELEASE" ;; esac

# One "Name <address>", as build-deb.sh asks of the Maintainer; % is
# refused too (rpm would expand it as a macro).
printf '%s' "$PACKAGER" | grep -Eq '^[^<>,|&\\%]+ <[^<>@ %]+@[^<> %]+>$' ||
	die "MAINTAINER is not \"Name <address>\": '$PACKAGER' (make rpm MAINTAINER=\"Jane Doe <jane@example.org>\")"

work=$(mktemp -d "${TMPDIR:-/tmp}/tripleo-agent-rpm.XXXXXX")
trap 'rm -rf "$work"' EXIT
stage=$work/stage
build=$work/bin
install -d -m 0755 "$stage"
stage_tree "$stage" "${STAGE_BIN:-$build}"

grep -qx 'ExecStart=/usr/bin/os-collect-config' "$stage/usr/lib/systemd/system/os-collect-config.service" ||
	die "the unit's ExecStart is not /usr/bin/os-collect-config"

# The documentation as Fedora lays it out (%doc, %license; not
# compressed): the README, this directory's as README.RPM, docs/*.md
# under docs/ and the example configuration.
doc=$stage/usr/share/doc/tripleo-agent
install -d "$doc/docs" "$doc/examples" "$stage/usr/share/licenses/tripleo-agent"
install -m 0644 "$top/LICENSE" "$stage/usr/share/licenses/tripleo-agent/LICENSE"
install -m 0644 "$top/README.md" "$doc/README.md"
install -m 0644 "$here/README.md" "$doc/README.RPM"
install -m 0644 "$top"/docs/*.md "$doc/docs/"
install -m 0644 "$top/examples/os-collect-config.conf" "$doc/examples/os-collect-config.conf"

# The operator's configuration, %ghost: an empty stand-in whose
# attributes (0644, as RDO's os-collect-config declared the file) are
# all the package says of it; the spec's %verify leaves its content and
# mode to the operator.
install -d "$stage/etc"
: >"$stage/etc/os-collect-config.conf"

find "$stage" -type d -exec chmod 0755 {} +
find "$stage" -type f -perm /111 -exec chmod 0755 {} +
find "$stage" -type f ! -perm /111 -exec chmod 0644 {} +

# The paths an image built with the Python agent's elements may hold
# outside any package, as build-deb.sh lists its diversions and with
# the same names (packaging/README.md, "What a swap leaves"): every file
# under /usr/libexec and the unit.
moves=$work/moves
(cd "$stage" && find usr/libexec usr/lib/systemd/system ! -type d -printf '/%p\n') | LC_ALL=C sort |
	while IFS= read -r path; do
		case $path in
		*[!A-Za-z0-9/._+-]*) die "a path the scriptlets cannot move as they read it: '$path'" ;;
		/usr/libexec/os-apply-config/templates/*)
			printf '%s /usr/libexec/os-apply-config/templates.distrib/%s\n' "$path" "${path#/usr/libexec/os-apply-config/templates/}" ;;
		*) printf '%s %s.distrib\n' "$path" "$path" ;;
		esac
	done >"$moves"
grep -q '^/usr/lib/systemd/system/os-collect-config.service ' "$moves" || die "the unit is not in the moves"

spec=$work/tripleo-agent.spec
sed -e '/^@MOVES@$/{' -e "r $moves" -e 'd' -e '}' "$here/rpm/tripleo-agent.spec" >"$spec"
! grep -qx '@MOVES@' "$spec" || die "@MOVES@ is left in the spec"

find "$stage" -newermt "@$SOURCE_DATE_EPOCH" -print0 | xargs -0r touch -h -d "@$SOURCE_DATE_EPOCH"

# A topdir of its own, and no ~/.rpmmacros of the builder's: the same
# macros on every machine. --nodeps: Debian has none of the build
# requirements' packages (there are none but rpm itself).
commit=$(GIT_OPTIONAL_LOCKS=0 git describe --tags --always 2>/dev/null || echo 'an unknown commit')
HOME=$work rpmbuild -bb --nodeps --quiet \
	--target "$ARCH-linux" \
	--define "_topdir $work/top" \
	--define "_tmppath $work/tmp" \
	--define "_rpmdir $work/rpms" \
	--define "_build_name_fmt %%{NAME}-%%{VERSION}-%%{RELEASE}.%%{ARCH}.rpm" \
	--define "tripleo_version $RPM_VERSION" \
	--define "tripleo_release $RPM_RELEASE" \
	--define "tripleo_stage $stage" \
	--define "tripleo_packager $PACKAGER" \
	--define "tripleo_date $(LC_ALL=C date -u -d "@$SOURCE_DATE_EPOCH" '+%a %b %d %Y')" \
	--define "tripleo_commit $commit" \
	"$spec" >&2

rpm=tripleo-agent-$RPM_VERSION-$RPM_RELEASE.$ARCH.rpm
[ -f "$work/rpms/$rpm" ] || die "rpmbuild wrote no $rpm: $(ls "$work/rpms" 2>/dev/null)"
mkdir -p "$OUT"
mv -f "$work/rpms/$rpm" "$OUT/$rpm"
echo "$OUT/$rpm"
