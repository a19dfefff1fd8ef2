#!/usr/bin/env bash
# make cross-test: the unit tests (-short) of the packages that touch the
# system, cross-built for each of CROSS_ARCHES and run under Debian's
# qemu-user-static (go test -exec), then make demo's chain under qemu for
# each (test/cross). There is no binfmt_misc on the build machines: the
# emulator is named explicitly, and a test that starts its own binary
# again goes through it (internal/testkit/qemu, TRIPLEO_AGENT_QEMU).
# Prints the seconds each step took (docs/cross.md).
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
arches=${CROSS_ARCHES:-arm64 ppc64le}
pkgs=${CROSS_PKGS:?CROSS_PKGS: the packages to test}
declare -A emulated=([arm64]=aarch64 [ppc64le]=ppc64le) # as internal/testkit/qemu.Arches

for a in $arches; do
  q=${emulated[$a]:-}
  if [ -z "$q" ]; then
    echo "cross-test: no emulator known for GOARCH=$a" >&2
    exit 2
  fi
  if ! command -v "qemu-$q-static" >/dev/null; then
    echo "cross-test: qemu-$q-static is missing (make deps installs qemu-user-static)" >&2
    exit 1
  fi
done

total=$SECONDS
for a in $arches; do
  q=${emulated[$a]}
  start=$SECONDS
  echo "== cross-test: GOARCH=$a, the unit tests under qemu-$q-static"
  # As make build compiles (GOWORK=off, -trimpath): test/cross's cross
  # builds then reuse the packages compiled here.
  # shellcheck disable=SC2086 # one word per package
  GOWORK=off GOARCH=$a CGO_ENABLED=0 $GO test -trimpath -count=1 -short -timeout 5m -exec "env TRIPLEO_AGENT_QEMU=$q qemu-$q-static" $pkgs
  echo "== cross-test: GOARCH=$a: $((SECONDS - start)) s"
done
start=$SECONDS
echo "== cross-test: make demo's chain under qemu ($arches), compared with the native run"
CROSS_ARCHES="$arches" REQUIRE_CROSS=1 $GO test -count=1 -timeout 10m -v -run '^TestDemoChainUnderQemu$' ./test/cross/
echo "== cross-test: the chain: $((SECONDS - start)) s; in all $((SECONDS - total)) s"
