#!/usr/bin/env bash
# Stops the local cluster of hack/cluster-up.sh and removes everything it made: it deletes the pods first (so
# CNI DEL hands host-device interfaces back to the host), stops only the processes whose PIDs cluster-up
# recorded (and the containerd shims of its own containerd), unmounts what was mounted under STATE_DIR,
# deletes the network namespaces and the bridge it created, restores nr_hugepages and ip_forward, removes the
# hard-coded directories that did not exist before, and finally STATE_DIR itself.
#
#   hack/cluster-down.sh STATE_DIR        KEEP_LOGS=DIR keeps a copy of the logs
set -uo pipefail
ST=$(realpath -m "${1:?usage: hack/cluster-down.sh STATE_DIR}")
[ -d "$ST/pids" ] || { echo "cluster-down: $ST is not a cluster-up state directory (nothing to do)"; exit 0; }
log() { printf 'cluster-down: %s\n' "$*"; }
# shellcheck source=lib/netns-dir.sh
. "$(dirname "$0")/lib/netns-dir.sh"
t0=$(date +%s.%N)
# shellcheck source=/dev/null # written by cluster-up.sh
source "$ST/env" 2>/dev/null || true
export KUBECONFIG="$ST/kubeconfig"

alive() { kill -0 "$1" 2>/dev/null && [ "$(ps -o stat= -p "$1" | cut -c1)" != Z ]; }
# ours NAME PID: the PID still is the process cluster-up started (same start time), not a reuse of its PID
ours() { [ ! -f "$ST/pids/$1.start" ] || [ "$(awk '{print $22}' "/proc/$2/stat" 2>/dev/null)" = "$(cat "$ST/pids/$1.start")" ]; }
stop() { # stop NAME [GRACE]: TERM the recorded PID, KILL it after GRACE seconds (default 30)
  local pid grace=${2:-30}; pid=$(cat "$ST/pids/$1" 2>/dev/null) || return 0
  if alive "$pid" && ours "$1" "$pid"; then
    kill "$pid" 2>/dev/null
    for _ in $(seq 1 $((grace * 5))); do alive "$pid" || break; sleep 0.2; done
    alive "$pid" && { log "$1 ($pid) still running ${grace} s after SIGTERM: SIGKILL"; kill -9 "$pid"; }
  fi
  rm -f "$ST/pids/$1" "$ST/pids/$1.start"
}

# 1. pods away while the kubelet and CNI still run: the sandbox teardown runs CNI DEL
if [ -n "$(cat "$ST/pids/kubelet" 2>/dev/null)" ] && alive "$(cat "$ST/pids/kubelet")" && ours kubelet "$(cat "$ST/pids/kubelet")"; then
  kubectl delete deploy,rs,sts,ds,jobs,pods --all -A --grace-period=3 --wait=true --timeout=60s >/dev/null 2>&1 || true
  for _ in $(seq 1 50); do
    # every sandbox stopped (so its CNI DEL ran); stopped containers may stay until the kubelet's GC
    ctr --address "$ST/containerd/containerd.sock" -n k8s.io tasks ls 2>/dev/null | grep -q RUNNING || break
    sleep 0.2
  done
fi
# 2. the processes cluster-up started, the node first
for p in kubelet kube-scheduler kube-controller-manager apiserver-relay; do stop "$p"; done
CTR=(ctr --address "$ST/containerd/containerd.sock" -n k8s.io)
if [ -S "$ST/containerd/containerd.sock" ]; then
  for t in $("${CTR[@]}" tasks ls -q 2>/dev/null); do "${CTR[@]}" tasks kill -s KILL "$t" >/dev/null 2>&1; done
  sleep 0.5
  for t in $("${CTR[@]}" tasks ls -q 2>/dev/null); do "${CTR[@]}" tasks rm -f "$t" >/dev/null 2>&1; done
fi
stop containerd
# The API server's graceful shutdown drains requests for up to a minute (measured: over 30 s with no client
# left); nothing of its state outlives this script, so it gets 3 s.
stop apiserver 3; stop etcd
# containerd shims outlive containerd by design; ours are the ones naming our containerd's socket
for pid in $(pgrep -f "containerd-shim-runc-v2 .*-address $ST/containerd/containerd.sock" 2>/dev/null); do
  log "killing leftover shim $pid"; kill -9 "$pid" 2>/dev/null
done
# 3. mounts under STATE_DIR (pod volumes, hugetlbfs, rootfs overlays, sandbox netns), deepest first
while read -r m; do
  umount "$m" 2>/dev/null || umount -l "$m"
done < <(awk -v s="$ST/" 'index($5, s) == 1 {print $5}' /proc/self/mountinfo | sort -r)
# network namespaces of our sandboxes that CNI DEL / containerd did not remove: those named in our Multus
# cache or our containerd's metadata, and the sandbox namespaces (cni-*) made since cluster-up's first run that
# no process uses any more: only one such cluster runs at a time, its processes are gone by now, and a live
# sandbox of any other runtime holds its pause process. Never one that was there before us.
ours_ns=$(grep -rhoa 'cni-[0-9a-f]\{8\}-[0-9a-f]\{4\}-[0-9a-f]\{4\}-[0-9a-f]\{4\}-[0-9a-f]\{12\}' \
              "$ST/cni/multus-cache" "$ST/containerd/root" 2>/dev/null | sort -u)
if [ -f "$ST/preexisting" ] && [ -d /run/netns ]; then
  while read -r f; do
    grep -qx "$f" "$ST/preexisting" && continue
    [ -n "$(ip netns pids "${f##*/}" 2>/dev/null)" ] || ours_ns+=$'\n'"${f##*/}"
  done < <(find /run/netns -maxdepth 1 -name 'cni-*' -newer "$ST/preexisting" 2>/dev/null)
fi
for ns in $(echo "$ours_ns" | sort -u); do
  [ -e "/run/netns/$ns" ] || continue
  log "removing leftover network namespace $ns"
  # (a copy mounted below the directory's self-mount keeps the file busy: it goes with the directory)
  umount "/run/netns/$ns" 2>/dev/null || umount -l "/run/netns/$ns" 2>/dev/null; rm -f "/run/netns/$ns" 2>/dev/null
done
# 4. the bridge, sysctls, hugepages
if [ -f "$ST/bridge" ]; then ip link del "$(cat "$ST/bridge")" 2>/dev/null; fi
[ -f "$ST/ip_forward.prev" ] && cat "$ST/ip_forward.prev" > /proc/sys/net/ipv4/ip_forward
[ -f "$ST/hugepages.prev" ] && cat "$ST/hugepages.prev" > /proc/sys/vm/nr_hugepages
# 5. the kubelet's cgroups (empty once the pods are gone) and the hard-coded directories, if they are new
for c in /sys/fs/cgroup/*/kubepods; do
  [ -d "$c" ] && [ -f "$ST/preexisting" ] || continue
  grep -qx "$c" "$ST/preexisting" 2>/dev/null && continue
  find "$c" -depth -type d -exec rmdir {} \; 2>/dev/null
done
# the daemons' cpu cgroup (DAEMON_CPU_SHARES), empty now that they are stopped
if [ -f "$ST/daemon-cgroup" ]; then
  cg=$(cat "$ST/daemon-cgroup")
  if [ ! -d "$cg" ] || rmdir "$cg"; then
    rm -f "$ST/daemon-cgroup"
    # (a v2 controller cluster-up enabled: refused while another group still uses it, then left as it is)
    if [ -f "$ST/daemon-cgroup.enabled-cpu" ]; then
      echo -cpu > /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null || log "the cpu controller stays enabled at the cgroup root (in use)"
      rm -f "$ST/daemon-cgroup.enabled-cpu"
    fi
  else
    log "WARNING: $cg is not empty; left in place"
  fi
fi
# (without the record of what existed before, remove nothing: cluster-up stopped before making it).
# What is mounted below such a directory goes first (rm -rf cannot remove a mount point, and would leave the
# directory half-removed); /run/netns only when no namespace but our dead sandboxes' is left in it (a DUT's is
# removed after us, and the bring-up removes the directory then: hack/lib/bringup.sh).
for d in /run/containerd /var/lib/kubelet /var/log/containers /var/log/pods /var/lib/cni /run/netns /etc/cni /opt/cni; do
  [ -e "$d" ] && [ -f "$ST/preexisting" ] || continue
  grep -qx "$d" "$ST/preexisting" 2>/dev/null && continue
  if [ "$d" = /run/netns ]; then lr_remove_netns_dir; continue; fi
  while read -r m; do
    umount "$m" 2>/dev/null || umount -l "$m"
  done < <(awk -v s="$d" '$5 == s || index($5, s "/") == 1 {print $5}' /proc/self/mountinfo | sort -r)
  rm -rf "$d"
done
# 6. the state directory, unless something is still mounted below it
if awk -v s="$ST/" 'index($5, s) == 1 {found=1} END {exit !found}' /proc/self/mountinfo; then
  log "ERROR: still mounted under $ST; not removing it"; exit 1
fi
if [ -n "${KEEP_LOGS:-}" ]; then mkdir -p "$KEEP_LOGS" && cp -r "$ST/logs/." "$KEEP_LOGS/" && log "logs kept in $KEEP_LOGS"; fi
rm -rf "$ST"
log "down in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}') s; nr_hugepages=$(cat /proc/sys/vm/nr_hugepages)"
