# shellcheck shell=bash
# shellcheck disable=SC2034  # used by the scripts that source this file
# Settings of the e2e lab (test/e2e/lab). Every setting is an env var.
# Ports differ from the usual OpenStack ones so that the lab can run next
# to other things on a developer's machine; everything binds 127.0.0.1 (or a
# unix socket). State, configuration, logs and PID files live under E2E_DIR.

E2E_DIR=${E2E_DIR:-/var/tmp/tripleo-agent-e2e}
E2E_HOST=127.0.0.1
E2E_KEYSTONE_PORT=${E2E_KEYSTONE_PORT:-17000}
E2E_HEAT_PORT=${E2E_HEAT_PORT:-17004}
E2E_CFN_PORT=${E2E_CFN_PORT:-17008}
E2E_SWIFT_PORT=${E2E_SWIFT_PORT:-17080}
E2E_SWIFT_STORAGE_PORT=${E2E_SWIFT_STORAGE_PORT:-17200}  # object; container +1, account +2
E2E_ZAQAR_PORT=${E2E_ZAQAR_PORT:-17088}
E2E_ZAQAR_WS_PORT=${E2E_ZAQAR_WS_PORT:-17090}            # its notification server: +1
E2E_AMQP_PORT=${E2E_AMQP_PORT:-17672}
E2E_DIST_PORT=${E2E_DIST_PORT:-17673}
E2E_EPMD_PORT=${E2E_EPMD_PORT:-17369}                    # a private epmd we can stop
E2E_REGION=RegionOne
E2E_WAIT=${E2E_WAIT:-180}        # seconds, per readiness wait
E2E_DEBUG=${E2E_DEBUG:-false}
# Lab-only credentials (nothing here is reachable from outside 127.0.0.1).
# The service password ends up in zaqar's swift:// URI: no @ : / ? #.
ADMIN_PW=e2e-admin-secret
DEMO_PW=e2e-demo-secret
SERVICE_PW=e2e-service-secret
DOMAIN_ADMIN_PW=e2e-domain-secret
DB_PW=e2e-db-secret

KEYSTONE_URL="http://$E2E_HOST:$E2E_KEYSTONE_PORT"
HEAT_URL="http://$E2E_HOST:$E2E_HEAT_PORT"
CFN_URL="http://$E2E_HOST:$E2E_CFN_PORT"
SWIFT_URL="http://$E2E_HOST:$E2E_SWIFT_PORT"
ZAQAR_URL="http://$E2E_HOST:$E2E_ZAQAR_PORT"
ZAQAR_WS_URL="ws://$E2E_HOST:$E2E_ZAQAR_WS_PORT"

PIDDIR=$E2E_DIR/pids
LOGDIR=$E2E_DIR/log
ETCDIR=$E2E_DIR/etc
DATADIR=$E2E_DIR/data
DBSOCK=$E2E_DIR/mysql/mysqld.sock
# python3 on PATH may be a pyenv shim without Debian's OpenStack libraries
PY=/usr/bin/python3

# the services, in start order (down stops them in reverse)
SERVICES=(rabbitmq epmd mariadb keystone heat-engine heat-api heat-api-cfn
          swift-object swift-container swift-account swift-proxy
          zaqar zaqar-websocket)

log() { printf '[e2e-lab %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# alive NAME: pids/NAME.pid names a live, non-zombie process whose command
# line still contains pids/NAME.match (guards against PID reuse).
alive() {
  local pid pat st
  pid=$(cat "$PIDDIR/$1.pid" 2>/dev/null) || return 1
  [ -n "$pid" ] || return 1
  st=$(sed -E 's/^.*\) (.).*$/\1/' "/proc/$pid/stat" 2>/dev/null) || return 1
  [ "$st" != Z ] || return 1
  pat=$(cat "$PIDDIR/$1.match" 2>/dev/null || true)
  [ -z "$pat" ] || tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$pat"
}

listening() { [ -n "$(ss -Hltn "sport = :$1" 2>/dev/null)" ]; }
port_pid() { ss -Hltnp "sport = :$1" 2>/dev/null | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -1; }
