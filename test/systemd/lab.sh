#!/usr/bin/env bash
# A throw-away Debian 12 container whose PID 1 is a real systemd (with
# journald), booted with systemd-nspawn, for testing our units the way a
# golden image runs them. Used by systemd_test.go; usable by hand:
#
#   lab.sh check             can a lab run here? (else the reason, exit 3)
#   lab.sh rootfs            build the cached rootfs if missing
#   lab.sh up DIR [SEED]     boot a container whose state lives in DIR (made
#                            here); SEED is a tree copied over / before boot
#   lab.sh exec DIR CMD...   run CMD inside (every namespace of its PID 1)
#   lab.sh reboot DIR        power the container off and boot it again on
#                            the same root (its changes kept)
#   lab.sh down DIR          shut it down, unmount, remove DIR (idempotent)
#
# Environment:
#   LAB_OWNER_PID      up: a guard process runs `down DIR` when this process
#                      exits (the Go test passes its own PID, so an
#                      interrupted or timed-out test still cleans up)
#   LAB_KEEP=1         down: keep DIR (upper layer, journal, console.log)
#   LAB_CACHE_DIR      rootfs cache (default /var/cache/tripleo-agent-test)
#   LAB_ROOTFS         up: boot this root filesystem (read-only, under an
#                      overlay) instead of the cached one (a golden image)
#   LAB_NETWORK=host   up: share the host's network (127.0.0.1 included)
#                      instead of a private one
#   LAB_MIRROR         Debian mirror (default: the first in the apt sources)
#   LAB_BOOT_TIMEOUT   seconds to wait for the container's systemd (60)
#
# Works whether or not the host's PID 1 is systemd: without it, nspawn runs
# with --register=no --keep-unit in a cgroup of its own; with it, as a
# transient service with Delegate=yes (like systemd-nspawn@.service).
set -euo pipefail

SELF=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
SUITE=bookworm
# The rootfs: minbase + these, customised in build_rootfs. Bump the version
# whenever either changes: it names the cache entry.
PACKAGES=systemd,systemd-sysv,dbus,procps
ROOTFS_VERSION=1
CACHE_DIR=${LAB_CACHE_DIR:-/var/cache/tripleo-agent-test}
BASE_ROOTFS=$CACHE_DIR/rootfs-$SUITE-v$ROOTFS_VERSION
ROOTFS=${LAB_ROOTFS:-$BASE_ROOTFS}
BOOT_TIMEOUT=${LAB_BOOT_TIMEOUT:-60}
IN_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

log() { printf '[lab %s] %s\n' "$(date +%T)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

host_has_systemd() { [ -d /run/systemd/system ] && [ "$(cat /proc/1/comm 2>/dev/null)" = systemd ]; }

# Start time of a PID (guards against PID reuse).
starttime() { awk '{print $22}' "/proc/$1/stat" 2>/dev/null || true; }
alive() { [ -n "$1" ] && [ -n "$2" ] && [ "$(starttime "$1")" = "$2" ]; }

# Per-lab state: DIR/state/<name>.
get() { cat "$D/state/$1" 2>/dev/null || true; }
put() { printf '%s\n' "$2" >"$D/state/$1"; }

# ------------------------------------------------------------------ check
check() {
  [ "$(uname -s)" = Linux ] || { echo "not Linux" >&2; return 3; }
  [ "$(id -u)" = 0 ] || { echo "not root" >&2; return 3; }
  local cap
  cap=$(awk '/^CapEff:/{print $2}' /proc/self/status)
  (( (16#$cap >> 21) & 1 )) || { echo "no CAP_SYS_ADMIN (an unprivileged container?)" >&2; return 3; }
  [ -d /sys/fs/cgroup ] || { echo "no /sys/fs/cgroup" >&2; return 3; }
  command -v nsenter >/dev/null || { echo "no nsenter (util-linux)" >&2; return 3; }
  if ! command -v systemd-nspawn >/dev/null || ! command -v debootstrap >/dev/null; then
    command -v apt-get >/dev/null || { echo "systemd-nspawn/debootstrap missing and no apt-get to install them" >&2; return 3; }
  fi
  return 0
}

ensure_host_tools() {
  local missing=()
  command -v systemd-nspawn >/dev/null || missing+=(systemd-container)
  command -v debootstrap >/dev/null || missing+=(debootstrap)
  [ ${#missing[@]} -eq 0 ] && return
  log "installing host packages: ${missing[*]} (log: $CACHE_DIR/apt.log)"
  mkdir -p "$CACHE_DIR"
  local apt=(apt-get -o DPkg::Lock::Timeout=600 -q)
  export DEBIAN_FRONTEND=noninteractive
  if ! "${apt[@]}" install -y --no-install-recommends "${missing[@]}" >"$CACHE_DIR/apt.log" 2>&1; then
    # perhaps stale or missing package lists
    if ! { "${apt[@]}" update && "${apt[@]}" install -y --no-install-recommends "${missing[@]}"; } >>"$CACHE_DIR/apt.log" 2>&1; then
      tail -n 20 "$CACHE_DIR/apt.log" >&2
      die "could not install ${missing[*]}"
    fi
  fi
}

mirror() {
  if [ -n "${LAB_MIRROR:-}" ]; then printf '%s' "$LAB_MIRROR"; return; fi
  local u
  # deb822 sources, then one-line sources: the first non-security Debian URI.
  u=$({ grep -hsE '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{for(i=2;i<=NF;i++) print $i}'
        grep -hsE '^deb[[:space:]]' /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
          | awk '{for(i=2;i<=NF;i++) if ($i ~ /^(https?|file):/) {print $i; break}}'
      } | grep -E '/debian/?$' | grep -v security | head -n1 || true)
  [ -n "$u" ] || die "no Debian mirror in the apt sources; set LAB_MIRROR"
  printf '%s' "$u"
}

# ------------------------------------------------------------------ rootfs
build_rootfs() {
  local tmp=$BASE_ROOTFS.tmp.$$ m t0=$SECONDS
  m=$(mirror)
  log "building $BASE_ROOTFS: debootstrap --variant=minbase --include=$PACKAGES $SUITE from $m"
  rm -rf "$tmp"
  if ! debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$tmp" "$m" >"$CACHE_DIR/debootstrap.log" 2>&1; then
    tail -n 30 "$CACHE_DIR/debootstrap.log" >&2
    rm -rf --one-file-system "$tmp"
    die "debootstrap failed (log: $CACHE_DIR/debootstrap.log)"
  fi
  echo occ-lab >"$tmp/etc/hostname"
  : >"$tmp/etc/machine-id" # as in a golden image: a new machine-id per boot
  rm -f "$tmp/var/lib/dbus/machine-id"
  local u
  for u in console-getty.service getty@.service apt-daily.timer apt-daily-upgrade.timer \
    dpkg-db-backup.timer e2scrub_all.timer e2scrub_reap.service fstrim.timer; do
    ln -sf /dev/null "$tmp/etc/systemd/system/$u"
  done
  # Persistent journal: kept in DIR/upper with LAB_KEEP=1 (journalctl -D).
  mkdir -p "$tmp/var/log/journal" "$tmp/etc/systemd/journald.conf.d"
  printf '[Journal]\nStorage=persistent\n' >"$tmp/etc/systemd/journald.conf.d/10-lab.conf"
  rm -rf "$tmp/var/cache/apt/archives/"*.deb "$tmp/var/cache/apt/"*.bin "$tmp/var/lib/apt/lists/"*_Packages \
    "$tmp/var/lib/apt/lists/"*Release* "$tmp/var/log/"*.log
  mv "$tmp" "$BASE_ROOTFS"
  log "rootfs built in $((SECONDS - t0))s ($(du -sh "$BASE_ROOTFS" | cut -f1))"
}

ensure_rootfs() {
  mkdir -p "$CACHE_DIR"
  (
    flock 9 # one build at a time; the others wait and use it
    [ -d "$BASE_ROOTFS" ] || build_rootfs
  ) 9>"$CACHE_DIR/.lock"
}

# ------------------------------------------------------------------ up
# Our cgroups for nspawn when the host's PID 1 is not systemd (else nspawn's
# payload/ and supervisor/ would land in the root of each hierarchy).
cgroup_dirs() {
  local name=$1
  if [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; then
    echo "/sys/fs/cgroup/$name"
  else
    [ -d /sys/fs/cgroup/unified ] && echo "/sys/fs/cgroup/unified/$name"
    [ -d /sys/fs/cgroup/systemd ] && echo "/sys/fs/cgroup/systemd/$name"
  fi
  return 0
}

# Direct children of a PID, from /proc (no procps on the host needed).
children() {
  local f line rest
  for f in /proc/[0-9]*/stat; do
    read -r line <"$f" 2>/dev/null || continue
    rest=${line##*) }
    rest=${rest#* }
    [ "${rest%% *}" = "$1" ] || continue
    f=${f#/proc/}
    echo "${f%/stat}"
  done
}

up() {
  local seed=${1:-} name ns leader state t0=$SECONDS
  [ ! -e "$D" ] || [ -z "$(ls -A "$D")" ] || die "$D is not empty"
  check || die "cannot run here"
  mkdir -p "$D/state" "$D/upper" "$D/work" "$D/root"
  : >"$D/state/lab" # marks DIR as ours for down's rm -rf
  exec 8>"$D/state/lock"
  flock 8 # down waits for up
  # From here on anything started is stopped again, even if up fails or is
  # interrupted, and, with LAB_OWNER_PID, when the owner goes away.
  trap 'rc=$?; trap - EXIT; [ $rc = 0 ] || { log "up failed; cleaning up"; flock -u 8; down; }; exit $rc' EXIT
  trap 'exit 130' INT TERM HUP
  if [ -n "${LAB_OWNER_PID:-}" ]; then
    LAB_GUARD=1 setsid "$SELF" _guard "$D" "$LAB_OWNER_PID" "$(starttime "$LAB_OWNER_PID")" \
      </dev/null >>"$D/guard.log" 2>&1 8>&- &
    put guard.pid $!
    put guard.start "$(starttime $!)"
  fi
  ensure_host_tools
  ensure_rootfs
  [ -d "$ROOTFS/etc" ] || die "$ROOTFS is not a root filesystem"
  put network "${LAB_NETWORK:-private}"

  name=occlab-$(basename "$D" | tr -cd 'A-Za-z0-9' | tail -c 10)
  put name "$name"
  if mount -t overlay "overlay-$name" -o "lowerdir=$ROOTFS,upperdir=$D/upper,workdir=$D/work" "$D/root"; then
    put rootmode overlay
  else
    log "overlayfs failed; copying the rootfs"
    cp -a --reflink=auto "$ROOTFS/." "$D/root/"
    put rootmode copy
  fi
  if [ -n "$seed" ]; then # keep the image's directory modes (/, /etc, ...)
    tar -C "$seed" -cf - . | tar -C "$D/root" -xpf - --no-overwrite-dir
  fi

  boot
  log "up in $((SECONDS - t0))s"
}

# boot: start systemd-nspawn on DIR/root and wait until its systemd has
# booted (running or degraded).
boot() {
  local name ns leader state tb=$SECONDS
  name=$(get name)
  local nspawn=(systemd-nspawn --directory="$D/root" --machine="$name" --boot --register=no --keep-unit
    --link-journal=no --console=read-only)
  [ "$(get network)" = host ] || nspawn+=(--private-network)

  if host_has_systemd; then
    put mode systemd-run
    put unit "$name.service"
    systemd-run --quiet --unit="$name" --service-type=notify -p Delegate=yes -p KillMode=mixed \
      -p TimeoutStartSec="$BOOT_TIMEOUT" -p TimeoutStopSec=30 -p "StandardOutput=append:$D/console.log" \
      -p StandardError=inherit "${nspawn[@]}" --notify-ready=yes || die "systemd-run failed (journalctl -u $name)"
    ns=$(systemctl show -p MainPID --value "$name.service")
  else
    put mode direct
    cgroup_dirs "$name" >"$D/state/cgroups"
    (
      for d in $(cat "$D/state/cgroups"); do mkdir -p "$d" && echo "$BASHPID" >"$d/cgroup.procs"; done
      exec setsid "${nspawn[@]}" </dev/null >>"$D/console.log" 2>&1 8>&-
    ) &
    ns=$!
  fi
  for _ in $(seq 100); do
    [ "$(cat "/proc/$ns/comm" 2>/dev/null)" = systemd-nspawn ] && break
    sleep 0.05
  done
  [ "$(cat "/proc/$ns/comm" 2>/dev/null)" = systemd-nspawn ] || { tail -n 20 "$D/console.log" >&2; die "systemd-nspawn did not start"; }
  put nspawn.pid "$ns"
  put nspawn.start "$(starttime "$ns")"

  leader=
  for _ in $(seq 200); do # the container's PID 1: nspawn's child named systemd
    for c in $(children "$ns"); do [ "$(cat "/proc/$c/comm" 2>/dev/null)" = systemd ] && leader=$c; done
    [ -n "$leader" ] && break
    alive "$ns" "$(get nspawn.start)" || break
    sleep 0.05
  done
  [ -n "$leader" ] || { tail -n 30 "$D/console.log" >&2; die "the container's systemd did not appear"; }
  put leader.pid "$leader"
  put leader.start "$(starttime "$leader")"

  state=
  local deadline=$((SECONDS + BOOT_TIMEOUT))
  while [ $SECONDS -lt $deadline ]; do
    state=$(in_container systemctl is-system-running 2>/dev/null || true)
    case "$state" in running | degraded) break ;; esac
    alive "$ns" "$(get nspawn.start)" || { tail -n 30 "$D/console.log" >&2; die "nspawn exited during boot"; }
    sleep 0.2
  done
  case "$state" in
    running) ;;
    degraded) log "WARNING: the container is degraded:" && in_container systemctl --failed --no-legend >&2 || true ;;
    *) tail -n 30 "$D/console.log" >&2; die "not booted within ${BOOT_TIMEOUT}s (state: ${state:-unknown})" ;;
  esac
  log "$name is $state: PID 1 = host pid $leader, boot $((SECONDS - tb))s, root $D/root"
}

# reboot: power the container off (as down does) and boot it again, the
# same overlay and so the same disk.
reboot() {
  [ -f "$D/state/lab" ] || die "$D is not a lab"
  exec 8>>"$D/state/lock"
  flock 8
  poweroff
  boot
}


# ------------------------------------------------------------------ exec
in_container() {
  local l
  l=$(get leader.pid)
  alive "$l" "$(get leader.start)" || die "the container of $D is not running"
  nsenter --target "$l" --all -- /usr/bin/env -i PATH="$IN_PATH" LANG=C.UTF-8 TERM=dumb \
    SYSTEMD_PAGER=cat PAGER=cat SYSTEMD_COLORS=0 "$@"
}

# ------------------------------------------------------------------ down
# poweroff: stop the container (its systemd shuts down) and wait until its
# PID 1 is gone; the root stays mounted.
poweroff() {
  local ns l i
  ns=$(get nspawn.pid)
  if [ "$(get mode)" = systemd-run ]; then
    systemctl stop "$(get unit)" 2>/dev/null || true
    systemctl reset-failed "$(get unit)" 2>/dev/null || true
  elif alive "$ns" "$(get nspawn.start)"; then
    kill -TERM "$ns" 2>/dev/null || true # nspawn asks the container's systemd to power off
    for i in $(seq 300); do alive "$ns" "$(get nspawn.start)" || break; sleep 0.1; done
    if alive "$ns" "$(get nspawn.start)"; then
      log "no shutdown within 30s; SIGKILL to nspawn (pid $ns)"
      kill -KILL "$ns" 2>/dev/null || true
    fi
  fi
  l=$(get leader.pid)
  for i in $(seq 100); do alive "$l" "$(get leader.start)" || break; sleep 0.1; done
  if alive "$l" "$(get leader.start)"; then die "the container's PID 1 ($l) is still alive; $D left alone"; fi
}

down() {
  [ -f "$D/state/lab" ] || { log "nothing to do: $D is not a lab"; return 0; }
  exec 8>>"$D/state/lock"
  flock 8
  [ -f "$D/state/lab" ] || return 0 # another down was first
  local g name
  g=$(get guard.pid)
  if [ -z "${LAB_GUARD:-}" ] && alive "$g" "$(get guard.start)"; then kill "$g" 2>/dev/null || true; fi
  name=$(get name)
  poweroff
  if mountpoint -q "$D/root"; then umount -R "$D/root" 2>/dev/null || umount -R -l "$D/root"; fi
  for d in $(cat "$D/state/cgroups" 2>/dev/null); do
    [ -d "$d" ] && { find "$d" -depth -type d -exec rmdir {} + 2>/dev/null || true; }
    [ -d "$d" ] && log "WARNING: cgroup $d is not empty; left in place"
  done
  # nspawn refuses to remove this when /run is not a tmpfs
  [ -n "$name" ] && rm -rf "/run/systemd/nspawn/propagate/$name"
  if [ "${LAB_KEEP:-}" = 1 ]; then
    rm -f "$D/state/lab"
    log "kept $D (journal: journalctl -D $D/upper/var/log/journal)"
  else
    mountpoint -q "$D/root" && die "$D/root is still mounted"
    rm -rf --one-file-system "$D"
  fi
  log "${name:-lab} is down"
}

# The guard: `down` once the owner process has gone (it is in a session of
# its own, so a ^C to the test does not reach it).
guard() {
  trap '' INT HUP
  local owner=$1 start=$2
  while alive "$owner" "$start" && [ -f "$D/state/lab" ]; do sleep 1; done
  if [ -f "$D/state/lab" ]; then
    log "owner $owner is gone; taking the lab down"
    down
  fi
}

# ------------------------------------------------------------------ main
cmd=${1:-}
shift || true
case "$cmd" in
  check) check ;;
  rootfs)
    ensure_host_tools
    ensure_rootfs
    echo "$BASE_ROOTFS"
    ;;
  up | exec | reboot | down | _guard)
    [ $# -ge 1 ] || die "usage: lab.sh $cmd DIR ..."
    D=$(realpath -m "$1")
    shift
    case "$cmd" in
      up) up "$@" ;;
      exec)
        [ $# -ge 1 ] || die "usage: lab.sh exec DIR CMD..."
        in_container "$@"
        ;;
      reboot) reboot ;;
      down) down ;;
      _guard) guard "$@" ;;
    esac
    ;;
  *)
    sed -n '2,30p' "$0" >&2
    exit 2
    ;;
esac
