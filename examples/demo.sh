#!/bin/sh
# make demo: the whole chain, once, on the bundled example node:
#   os-collect-config --one-time (local collector over examples/node/metadata)
#     -> os-refresh-config (examples/node/refresh: configure.d, post-configure.d)
#       -> os-apply-config (examples/node/templates) into a scratch root
# then shows what was written. Nothing outside the scratch directory is
# touched.
set -eu
bin=$(cd "${1:-bin}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tripleo-demo.XXXXXX")
mkdir -p "$scratch/local" "$scratch/root"
cp "$here"/node/metadata/*.json "$scratch/local/"

export DEMO_BIN="$bin" DEMO_TEMPLATES="$here/node/templates" DEMO_ROOT="$scratch/root"
export OS_REFRESH_CONFIG_BASE_DIR="$here/node/refresh"
run_chain() {
  "$bin/os-collect-config" --config-file /dev/null --one-time \
    --cachedir "$scratch/cache" --backup-cachedir "$scratch/backup" \
    --local-path "$scratch/local" \
    -c "$bin/os-refresh-config --lockfile $scratch/orc.lock" local
}

echo "== os-collect-config --one-time -> os-refresh-config -> os-apply-config"
run_chain
echo
echo "== cache ($scratch/cache)"
ls -l "$scratch/cache" | tail -n +2
echo
echo "== files written under $scratch/root"
(cd "$scratch/root" && find . -type f -printf '%M %u:%g %6s  %p\n' | sort -k4)
echo
echo "== etc/nova/nova.conf (first lines)"
head -12 "$scratch/root/etc/nova/nova.conf"
echo
echo "== a second pass: nothing changed, so nothing runs"
run_chain 2>&1 | tail -3
echo "(no output above: os-collect-config saw no change)"
