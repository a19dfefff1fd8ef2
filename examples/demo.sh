#!/bin/sh
# make demo: the whole chain, once, on the bundled example node:
#   os-collect-config --one-time (local collector over examples/node/metadata
#   and examples/node/deployments)
#     -> os-refresh-config (examples/node/refresh: configure.d, post-configure.d)
#       -> os-apply-config (examples/node/templates and the heat-config
#          element's template) into a scratch root
#       -> 55-heat-config: the deployment through the script hook
# then shows what was written, the deployment's result and
# tripleo-agent-status. Every path the programs write (cache, status
# record, heat-config's state, the hook's working directory) is inside the
# scratch directory, which is removed at the end unless KEEP=1. It needs
# no root.
set -eu
# os-collect-config refuses world-writable metadata files: a umask of 0
# must not turn the demo's copies into those.
umask 022
bin=$(cd "${1:-bin}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
for p in tripleo-agent os-collect-config os-refresh-config os-apply-config heat-config-notify tripleo-agent-status; do
  if [ ! -x "$bin/$p" ]; then
    echo "demo: $bin/$p is missing: run make build (or make demo)" >&2
    exit 1
  fi
done
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tripleo-demo.XXXXXX")
if [ "${KEEP:-}" = 1 ]; then
  trap 'echo; echo "KEEP=1: the scratch directory is kept: $scratch"' EXIT
else
  trap 'rm -rf "$scratch"' EXIT
fi
trap 'exit 130' INT
trap 'exit 143' TERM
mkdir -p "$scratch/local" "$scratch/root" "$scratch/templates" "$scratch/hooks"
cp "$here"/node/metadata/*.json "$here"/node/deployments/*.json "$scratch/local/"
# One template root, as make install lays it out: the node's templates and
# the heat-config element's (which writes the deployments file).
cp -R "$here/node/templates/." "$here/../elements/heat-config/os-apply-config/." "$scratch/templates/"
ln -s "$bin/tripleo-agent" "$scratch/hooks/script"

r=$scratch/root
export DEMO_BIN="$bin" DEMO_TEMPLATES="$scratch/templates" DEMO_ROOT="$r"
export OS_REFRESH_CONFIG_BASE_DIR="$here/node/refresh"
export OS_COLLECT_CONFIG_STATUS_DIR="$scratch/status"
export HEAT_SHELL_CONFIG="$r/var/run/heat-config/heat-config"
export HEAT_CONFIG_DEPLOYED="$r/var/lib/heat-config/deployed"
export HEAT_CONFIG_DEPLOYED_OLD="$r/var/run/heat-config/deployed"
export HEAT_CONFIG_HOOKS="$scratch/hooks"
export HEAT_CONFIG_NOTIFY="$bin/heat-config-notify"
export HEAT_SCRIPT_WORKING="$r/var/lib/heat-config/heat-config-script"
export HEAT_SCRIPT_OUTPUTS="$r/var/run/heat-config/heat-config-script"
run_chain() {
  "$bin/os-collect-config" --config-file /dev/null --one-time \
    --cachedir "$scratch/cache" --backup-cachedir "$scratch/backup" \
    --local-path "$scratch/local" \
    -c "$bin/os-refresh-config --lockfile $scratch/orc.lock" local
}

echo "== os-collect-config --one-time -> os-refresh-config -> os-apply-config, 55-heat-config"
run_chain
echo
echo "== cache ($scratch/cache)"
ls -l "$scratch/cache" | tail -n +2
echo
echo "== files written under $r"
(cd "$r" && find . -type f -printf '%M %u:%g %6s  %p\n' | sort -k4)
echo
echo "== etc/nova/nova.conf (first lines)"
head -12 "$r/etc/nova/nova.conf"
echo
echo "== the deployment: its state files (var/lib/heat-config/deployed)"
ls -l "$HEAT_CONFIG_DEPLOYED" | tail -n +2
echo
for f in "$HEAT_CONFIG_DEPLOYED"/*.notify.json; do
  echo "== its result, as signalled to Heat (${f#"$r/"})"
  cat "$f"
  echo
done
echo
echo "== tripleo-agent-status"
"$bin/tripleo-agent-status" || true
echo
echo "== a second pass: nothing changed, so nothing runs"
run_chain 2>&1 | tail -3
echo "(no output above: os-collect-config saw no change)"
