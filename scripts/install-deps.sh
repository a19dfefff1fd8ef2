#!/usr/bin/env bash
# Installs what the tests need on a Debian 12 machine: the Python reference
# programs (the differential tests' oracle) and a Go toolchain if there is
# none. Needs root for apt-get; does nothing when all is there already.
set -euo pipefail

# puppet and ansible-core: the hooks are tested against the real tools;
# lintian checks the Debian package (test/deb).
packages=(python3-os-apply-config python3-os-refresh-config python3-os-collect-config python3-dib-utils make gcc util-linux dosfstools puppet ansible-core lintian)
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
# The reference must be the version we claim compatibility with.
for p in python3-os-apply-config python3-os-refresh-config python3-os-collect-config; do
  ver=$(dpkg-query -W -f='${Version}' "$p")
  case "$ver" in 12.0.0*) ;; *) echo "install-deps: $p is $ver, want 12.0.0" >&2; exit 1 ;; esac
done
