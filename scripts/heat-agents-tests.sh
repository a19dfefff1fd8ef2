#!/usr/bin/env bash
# Runs openstack/heat-agents' own subprocess tests (tests/test_*.py) against
# our installed tree: the tests are run as they are, with only the
# expressions that compute the programs' paths (the hooks' install.d
# scripts, the os-refresh-config scripts) rewritten by sed to point into
# `make install DESTDIR=<tmp> PREFIX=/usr`. Prints one line per test module
# and a total; exits 1 when a test expected to pass fails (KNOWN lists the
# rows that fail for a known reason, reported but not counted).
#
#   HEAT_AGENTS=<a checkout of openstack/heat-agents> scripts/heat-agents-tests.sh
#
# AGENT_ROOT=<dir> uses a tree already installed there (/ for the machine's
# own) instead of building one; PYTHON picks the interpreter (Debian's, with
# testtools, fixtures and yaml); MODULES=<names> runs only those modules;
# KEEP=1 keeps the work directory (its path is printed) with each module's
# full log.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
: "${HEAT_AGENTS:?set HEAT_AGENTS to a checkout of openstack/heat-agents}"
PYTHON=${PYTHON:-/usr/bin/python3}
MAKE=${MAKE:-make}
if [ ! -f "$HEAT_AGENTS/tests/common.py" ]; then
  echo "heat-agents-tests: $HEAT_AGENTS/tests/common.py: not a heat-agents checkout" >&2
  exit 2
fi
if ! "$PYTHON" -c 'import testtools, fixtures, yaml' 2>/dev/null; then
  echo "heat-agents-tests: $PYTHON lacks testtools, fixtures or yaml (apt-get install python3-testtools python3-fixtures python3-yaml)" >&2
  exit 2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/heat-agents-tests.XXXXXX")
if [ "${KEEP:-}" = 1 ]; then
  echo "heat-agents-tests: work directory $work"
else
  trap 'rm -rf "$work"' EXIT
fi

root=${AGENT_ROOT:-}
if [ -z "$root" ]; then
  root=$work/root
  if ! "$MAKE" -s -C "$repo" install DESTDIR="$root" PREFIX=/usr BIN="$work/bin" GO="${GO:-go}" >"$work/install.log" 2>&1; then
    cat "$work/install.log" >&2
    echo "heat-agents-tests: make install failed" >&2
    exit 2
  fi
fi
root=${root%/}
hooks=$root/usr/libexec/heat-config/hooks
configure=$root/usr/libexec/os-refresh-config/configure.d

# A copy, so the checkout is left as it is.
cp -a "$HEAT_AGENTS/." "$work/heat-agents"
tests=$work/heat-agents/tests

# The path expressions, and nothing else. Three spellings occur:
#   relative_path(__file__, '..', 'heat-config-X/install.d/hook-X.py')
#   relative_path(__file__, '..', 'heat-config/os-refresh-config/configure.d/55-heat-config')
# with the os-refresh-config path sometimes split in two literals or two
# arguments ('heat-config-docker-cmd/', 'os-refresh-config/...').
sed -z -i \
  -e "s#self\.relative_path(\s*__file__,\s*'\.\.',\s*'heat-config-\([a-z-]*\)/install\.d/hook-\1\.py')#'$hooks/\1'#g" \
  -e "s#self\.relative_path(\s*__file__,\s*'\.\.',\s*'heat-config[a-z-]*/\(',\s*'\)\?os-refresh-config/configure\.d/\('\s*'\)\?\([0-9a-z-]*\)')#'$configure/\3'#g" \
  "$tests"/test_*.py
# A path expression the rewrite missed would run the reference's Python
# program and pass for the wrong reason: refuse.
if missed=$(grep -l -z -P "relative_path\(\s*__file__,\s*'\.\.'" "$tests"/test_*.py); then
  echo "heat-agents-tests: a program path was not rewritten in: $missed" >&2
  exit 2
fi

# Our programs first on PATH: the apply-config hook runs os-apply-config,
# 55-heat-config runs heat-config-notify, by name.
export PATH=$root/usr/bin:$PATH
# 50-heat-config-docker-cmd notes there that the node has had a docker-cmd
# deployment (default /var/lib/heat-config/docker-cmd.seen): the work
# directory's, not the machine's.
export HEAT_DOCKER_CMD_SEEN=$work/docker-cmd.seen

# Modules, each with the program of ours it needs (a hook group, or an
# os-refresh-config script); none: it needs no program of ours.
all_modules=(
  test_heat_config:configure/55-heat-config
  test_heat_config_notify:bin/heat-config-notify
  test_hook_script:hook/script
  test_hook_puppet:hook/puppet
  test_hook_ansible:hook/ansible
  test_hook_hiera:hook/hiera
  test_hook_json_file:hook/json-file
  test_hook_apply_config:hook/apply-config
  test_hook_docker_cmd:hook/docker-cmd
  test_hook_docker_compose:hook/docker-compose
  test_hook_cfn_init:hook/cfn-init
  test_hook_salt:hook/salt
  test_hook_chef:hook/chef
  test_hook_kubelet:hook/kubelet
  test_heat_config_docker_compose:configure/50-heat-config-docker-compose
  test_heat_config_kubelet:configure/50-heat-config-kubelet
)

# Rows that fail for a known reason, with it: reported, not counted.
# Format: module.Class.test<TAB>reason
KNOWN=${KNOWN_FILE:-$repo/scripts/heat-agents-known.txt}

# Modules that load the reference's Python program in-process (import or
# importlib) and mock its internals: there is no path to point at a binary.
declare -A inprocess=(
  [test_hook_chef]="loads hook-chef.py as a Python module and mocks subprocess.Popen"
  [test_hook_kubelet]="imports hook-kubelet.py as a Python module and calls its functions"
)

selected=${MODULES:-}
begin=$SECONDS
status=0
printf '%-34s %6s %6s %7s %6s %5s  %s\n' module passed failed skipped known secs note
tot_p=0 tot_f=0 tot_s=0 tot_k=0
for entry in "${all_modules[@]}"; do
  module=${entry%%:*} need=${entry#*:}
  if [ -n "$selected" ] && [[ " $selected " != *" $module "* ]]; then continue; fi
  note=
  if [ "$module" = test_hook_salt ] && ! "$PYTHON" -c 'import salt' 2>/dev/null && ! command -v salt-call >/dev/null; then
    # Its rows run a real Salt (and upstream skips all three of them).
    note="cannot run here: salt library missing"
  fi
  [ -n "$note" ] || case "$need" in
    hook/*) [ -e "$hooks/${need#hook/}" ] || note="no hook: ${need#hook/} is not in the tree" ;;
    configure/*) [ -e "$configure/${need#configure/}" ] || note="no hook: configure.d/${need#configure/} is not in the tree" ;;
    bin/*) [ -e "$root/usr/$need" ] || note="no program: $need is not in the tree" ;;
  esac
  if [ -z "$note" ] && [ -n "${inprocess[$module]:-}" ]; then
    note="cannot run against a binary: ${inprocess[$module]}"
  fi
  if [ -z "$note" ] && [ "$module" = test_heat_config_notify ]; then
    # The module imports heat-config-notify as a Python module and mocks
    # requests, keystoneclient and heatclient in it: an adapter of ours
    # stands in for it, runs our binary, and replays what the binary sent
    # to a local server as calls on those mocks.
    rm -f "$tests/heat_config_notify.py"
    cp "$repo/scripts/heat-agents-notify-adapter.py" "$tests/heat_config_notify.py"
  fi
  if [ -n "$note" ]; then
    printf '%-34s %6s %6s %7s %6s %5s  %s\n' "$module" - - - - - "$note"
    continue
  fi
  start=$SECONDS
  out=$(cd "$work/heat-agents" && HEAT_AGENTS_KNOWN="$KNOWN" HEAT_AGENTS_NOTIFY="$root/usr/bin/heat-config-notify" \
    timeout 900 "$PYTHON" "$repo/scripts/heat-agents-run.py" "tests.$module" 2>"$work/$module.log") || true
  out=$(sed -n '/^==== heat-agents-run$/,$p' <<<"$out" | tail -n +2)
  read -r p f s k <<<"${out%%$'\n'*}"
  if [ -z "${p:-}" ] || [ -z "${k:-}" ]; then
    printf '%-34s %6s %6s %7s %6s %5s  %s\n' "$module" - ERROR - - - "the runner failed (log: $work/$module.log)"
    tail -n 20 "$work/$module.log" | sed 's/^/    /'
    status=1
    continue
  fi
  printf '%-34s %6d %6d %7d %6d %5d\n' "$module" "$p" "$f" "$s" "$k" $((SECONDS - start))
  tail -n +2 <<<"$out" | sed 's/^/    /'
  tot_p=$((tot_p + p)) tot_f=$((tot_f + f)) tot_s=$((tot_s + s)) tot_k=$((tot_k + k))
  [ "$f" -eq 0 ] || status=1
done
printf '%-34s %6d %6d %7d %6d %5d\n' total "$tot_p" "$tot_f" "$tot_s" "$tot_k" $((SECONDS - begin))
exit $status
