#!/usr/bin/env bash
# Installs what the tests need on a Debian 12 machine: the Python reference
# programs (the differential tests' oracle) and a Go toolchain if there is
# none. Needs root for apt-get; does nothing when all is there already.
set -euo pipefail

# puppet and ansible-core: the hooks are tested against the real tools;
# lintian checks the Debian package (test/deb); rpm (rpmbuild), rpmlint,
# createrepo-c and dnf build, check and install the RPM (test/rpm,
# test/elements). podman (with runc: crun refuses this kind of machine's
# hybrid cgroups), docker-compose and heat-cfntools' cfn-init: the
# docker-cmd, docker-compose and cfn-init hooks are tested against the
# real tools; busybox-static is the one binary of the tests' container
# image (no registry is reachable). python3-yaml: scripts/apply-elements
# reads package-installs.yaml with it; dpkg-dev: test/elements indexes a
# local apt repository. qemu-user-static: make cross-test runs the arm64
# and ppc64le builds under qemu-aarch64-static and qemu-ppc64le-static (no
# binfmt_misc needed).
packages=(python3-os-apply-config python3-os-refresh-config python3-os-collect-config python3-dib-utils make gcc util-linux dosfstools puppet ansible-core lintian
          rpm rpmlint createrepo-c dnf
          podman runc conmon containernetworking-plugins docker-compose heat-cfntools busybox-static python3-yaml dpkg-dev
          qemu-user-static)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ! command -v go >/dev/null && [ ! -x /usr/local/go/bin/go ]; then
  missing+=(golang-go) # Go >= 1.21 fetches the toolchain go.mod asks for
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# promtool checks the metrics file (internal/metrics); it comes with the
# Prometheus server, whose service must not start on a test machine: a
# policy-rc.d that refuses every start (101) is in place only around this
# install. A machine that already has it (its service running or not) is
# left as it is.
if ! command -v promtool >/dev/null; then
  echo "install-deps: installing prometheus (for promtool; its service is not started)"
  export DEBIAN_FRONTEND=noninteractive
  policy=/usr/sbin/policy-rc.d saved=/usr/sbin/policy-rc.d.install-deps
  restore() { rm -f "$policy"; if [ -e "$saved" ]; then mv "$saved" "$policy"; fi; }
  if [ -e "$policy" ]; then mv "$policy" "$saved"; fi # the machine's own, put back after
  trap restore EXIT
  printf '#!/bin/sh\nexit 101\n' >"$policy"
  chmod 755 "$policy"
  [ ${#missing[@]} -gt 0 ] || apt-get update -qq
  apt-get install -y -qq --no-install-recommends prometheus >/dev/null
  restore
  trap - EXIT
fi
# The reference must be the version we claim compatibility with.
for p in python3-os-apply-config python3-os-refresh-config python3-os-collect-config; do
  ver=$(dpkg-query -W -f='${Version}' "$p")
  case "$ver" in 12.0.0*) ;; *) echo "install-deps: $p is $ver, want 12.0.0" >&2; exit 1 ;; esac
done
