#!/usr/bin/env bash
# Builds tripleo-agent_<version>_<arch>.deb from `make install PREFIX=/usr`
# with plain dpkg-deb (no debhelper), laid out and scripted as
# dh_installsystemd would. Run by `make deb`; the environment:
#
#   VERSION        the Debian version (default: packaging/version.sh's, from git)
#   DEB_OUT        output directory (default: dist, under the checkout)
#   DEB_MAINTAINER the Maintainer field, "Name <address>" (required: make deb
#                  passes its MAINTAINER variable, where the default is)
#   MAKE           the make that runs the install target
#
# Prints the path of the package.
set -euo pipefail
umask 022

here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
cd "$top"

MAKE=${MAKE:-make}
OUT=${DEB_OUT:-dist}
MAINTAINER=${DEB_MAINTAINER:-}
# GOARCH picks the architecture (cross-built, make build's CROSS); the
# package's is Debian's name for it.
. "$here/stage.sh"
GOARCH=${GOARCH:-$("${GO:-go}" env GOARCH)}
ARCH=$(package_arch deb "$GOARCH") || { echo "build-deb: no Debian architecture for GOARCH=$GOARCH" >&2; exit 1; }
export GOARCH

die() { echo "build-deb: $*" >&2; exit 1; }

# VERSION and SOURCE_DATE_EPOCH (packaging/version.sh).
. "$here/version.sh"

# Debian's Maintainer: one "Name <address>" (no comma, which would make
# it a list); |, & and \ are refused too, as the control file is
# written with sed.
printf '%s' "$MAINTAINER" | grep -Eq '^[^<>,|&\\]+ <[^<>@ ]+@[^<> ]+>$' ||
	die "MAINTAINER is not \"Name <address>\": '$MAINTAINER' (make deb MAINTAINER=\"Jane Doe <jane@example.org>\")"

stage=$(mktemp -d "${TMPDIR:-/tmp}/tripleo-agent-deb.XXXXXX")
build=$(mktemp -d "${TMPDIR:-/tmp}/tripleo-agent-debbin.XXXXXX")
trap 'rm -rf "$stage" "$build"' EXIT
chmod 0755 "$stage"
stage_tree "$stage" "${STAGE_BIN:-$build}"

# Debian 12 still ships units under /lib/systemd/system (/usr-merge moratorium).
install -d "$stage/lib/systemd/system"
mv "$stage/usr/lib/systemd/system/os-collect-config.service" "$stage/lib/systemd/system/"
rmdir -p --ignore-fail-on-non-empty "$stage/usr/lib/systemd/system"
grep -qx 'ExecStart=/usr/bin/os-collect-config' "$stage/lib/systemd/system/os-collect-config.service" ||
	die "the unit's ExecStart is not /usr/bin/os-collect-config"

doc=$stage/usr/share/doc/tripleo-agent
install -d "$doc"
install -m 0644 "$here/copyright" "$doc/copyright"
# The documentation as dh_installdocs and dh_installexamples lay it out,
# compressed as dh_compress does (files over 4 KiB, gzip -9n): the
# README, this directory's as README.Debian, docs/*.md and the example
# configuration.
install -m 0644 "$top/README.md" "$doc/README.md"
install -m 0644 "$here/README.md" "$doc/README.Debian"
install -d "$doc/docs" "$doc/examples"
install -m 0644 "$top"/docs/*.md "$doc/docs/"
install -m 0644 "$top/examples/os-collect-config.conf" "$doc/examples/os-collect-config.conf"
find "$doc" -type f -size +4k ! -name copyright -exec gzip -9n {} +
{
	printf 'tripleo-agent (%s) unstable; urgency=medium\n\n' "$VERSION"
	printf '  * Built from %s.\n' "$(git describe --tags --always 2>/dev/null || echo 'an unknown commit')"
	printf '  * See the git history for the changes.\n\n'
	printf ' -- %s  %s\n' "$MAINTAINER" "$(date -u -R -d "@$SOURCE_DATE_EPOCH")"
} | gzip -9n >"$doc/changelog.Debian.gz"
if [ -s "$here/lintian-overrides" ]; then
	install -d "$stage/usr/share/lintian/overrides"
	install -m 0644 "$here/lintian-overrides" "$stage/usr/share/lintian/overrides/tripleo-agent"
fi

# Modes as dh_fixperms leaves them: directories 0755, files 0755 or 0644.
find "$stage" -type d -exec chmod 0755 {} +
find "$stage" -type f -perm /111 -exec chmod 0755 {} +
find "$stage" -type f ! -perm /111 -exec chmod 0644 {} +

# The diversions (packaging/README.md, "What a swap leaves"): every file
# under /usr/libexec (os-refresh-config's scripts, heat-config's hooks,
# os-apply-config's templates) and the unit, which an image built with the
# Python agent's elements may hold outside any package, one "path
# diverted-name" line each for the maintainer scripts. The name is
# dpkg-divert's default, path.distrib, which dib-run-parts, 55-heat-config
# and systemd never take, but for the templates: os-apply-config renders
# every file under its template root whatever its name (heat-config.distrib
# would become a second copy of the deployments, credentials included), so
# they wait under templates.distrib beside that root.
divlist=$build/diversions
(cd "$stage" && find usr/libexec lib/systemd/system ! -type d -printf '/%p\n') | LC_ALL=C sort |
	while IFS= read -r path; do
		case $path in
		*[!A-Za-z0-9/._+-]*) die "a path the maintainer scripts cannot divert as they read it: '$path'" ;;
		/usr/libexec/os-apply-config/templates/*)
			printf '%s /usr/libexec/os-apply-config/templates.distrib/%s\n' "$path" "${path#/usr/libexec/os-apply-config/templates/}" ;;
		*) printf '%s %s.distrib\n' "$path" "$path" ;;
		esac
	done >"$divlist"
grep -q '^/lib/systemd/system/os-collect-config.service ' "$divlist" || die "the unit is not in the diversions"

install -d "$stage/DEBIAN"
for s in preinst postinst prerm postrm; do
	sed -e '/^@DIVERSIONS@$/{' -e "r $divlist" -e 'd' -e '}' "$here/$s" >"$stage/DEBIAN/$s"
	! grep -q '@DIVERSIONS@' "$stage/DEBIAN/$s" || die "$s: @DIVERSIONS@ is left"
	chmod 0755 "$stage/DEBIAN/$s"
done
(cd "$stage" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z | xargs -0r md5sum) \
	>"$stage/DEBIAN/md5sums"
chmod 0644 "$stage/DEBIAN/md5sums"
# Installed-Size as dpkg-gencontrol counts it: KiB per file, rounded up,
# and 1 for every other entry.
size=$(cd "$stage" && find . -path ./DEBIAN -prune -o -printf '%y %s\n' |
	awk '$1 == "f" { k += int(($2 + 1023) / 1024); next } { k += 1 } END { print k }')
sed -e "s|@VERSION@|$VERSION|" -e "s|@MAINTAINER@|$MAINTAINER|" -e "s|@INSTALLED_SIZE@|$size|" \
	-e "s|^Architecture: .*|Architecture: $ARCH|" "$here/control.in" >"$stage/DEBIAN/control"
chmod 0644 "$stage/DEBIAN/control"

find "$stage" -newermt "@$SOURCE_DATE_EPOCH" -print0 | xargs -0r touch -h -d "@$SOURCE_DATE_EPOCH"

mkdir -p "$OUT"
deb=$OUT/tripleo-agent_${VERSION#*:}_$ARCH.deb
dpkg-deb --root-owner-group --build "$stage" "$deb" >&2
echo "$deb"
