#!/usr/bin/env bash
# A whole single-node Kubernetes cluster on this machine, on 127.0.0.1, without downloads or a container
# engine: etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kubelet built from the Go module
# proxy (hack/build-k8s.sh), containerd 1.6 + runc + the CNI plugins extracted from Debian's packages (not
# installed), Multus (hack/build-multus.sh) as the node's CNI with the bridge plugin as the default network,
# and 2 MiB hugepages reserved for the node. Needs root.
#
#   hack/cluster-up.sh STATE_DIR        then: source STATE_DIR/env   (KUBECONFIG=STATE_DIR/kubeconfig, PATH
#                                       with kubectl v1.37 and ctr); ~10 s when the binaries are cached
#   IMAGES="a.tar b.tar" hack/cluster-up.sh STATE_DIR   also imports image tarballs (hack/build-images.sh)
#   hack/cluster-down.sh STATE_DIR      stops it and removes everything it made
#
# Idempotent: a second run starts only what is not running and imports IMAGES again. Everything it starts,
# mounts and creates is recorded in STATE_DIR; hack/cluster-down.sh STATE_DIR undoes exactly that.
# One cluster per machine (fixed ports on 127.0.0.1, /var/lib/kubelet, /run/containerd): it refuses to start
# while another one runs. Pods get extra interfaces from NetworkAttachmentDefinitions (k8s.cni.cncf.io/v1)
# through Multus; CNI plugins available: bridge, host-device, macvlan, ipvlan, ptp, vlan, host-local, static,
# ... (Debian's containernetworking-plugins). Give each NAD a single plugin, not a "plugins" list (see below).
#
#   HUGEPAGES      2 MiB pages the node reserves (default 512 = 1 GiB; the previous value is restored on down)
#   K8S_BIN        the Kubernetes binaries (default bin/k8s/$K8S_VERSION-linux-amd64, built when missing)
#   SANDBOX_IMAGE  the pause image (default linerate.dev/pause:v1, built by cmd/imagebuilder when missing)
#   PLAIN_HTTP_REGISTRIES  "HOST:PORT ..." registries the node's containerd pulls from over plain HTTP, e.g.
#                  hack/registry.sh's 127.0.0.1:25000 (hack/e2e.sh): a hosts.toml each in
#                  STATE_DIR/containerd/certs.d (containerd's config_path). Read when containerd starts.
#   EXCLUSIVE_CPUS=1  the kubelet's static CPU manager, as a testbed node runs it (docs/testbed.md): CPU 0 is
#                  the system's (the kubelet reserves the lowest whole CPU; the cluster's daemons are pinned to
#                  it), and a Guaranteed pod that asks for whole CPUs, the tester, gets the others to itself.
#                  Without it every process shares every CPU. Read when the kubelet starts (a change of policy
#                  drops the kubelet's cpu_manager_state, which it refuses to reuse under another policy).
#   DAEMON_CPU_SHARES=N  the cluster's daemons (and what they spawn outside the pods) in a cpu cgroup of
#                  their own, linerate-cluster, weighted N (cgroup v1 cpu.shares; 1024 is a process's weight
#                  at nice 0): a DUT that shares their CPU then runs first, and what it forwards is its own
#                  capacity, not what the API server left it. Removed by cluster-down. Read when each daemon
#                  starts.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ST=$(realpath -m "${1:?usage: hack/cluster-up.sh STATE_DIR}")
K8S_VERSION=${K8S_VERSION:-1.37.2}
K8S_BIN=$(realpath -m "${K8S_BIN:-$ROOT/bin/k8s/$K8S_VERSION-linux-amd64}")
CACHE=${LINERATE_CACHE:-$HOME/.cache/linerate}
HUGEPAGES=${HUGEPAGES:-512}
SANDBOX_IMAGE=${SANDBOX_IMAGE:-linerate.dev/pause:v1}
POD_CIDR=10.244.0.0/24 POD_GW=10.244.0.1 SVC_CIDR=10.96.0.0/24 SVC_API_IP=10.96.0.1
BRIDGE=lrcni0
# Ports on 127.0.0.1, away from the defaults so a real cluster or envtest on the same machine does not clash.
ETCD_PORT=22379 ETCD_PEER_PORT=22380 API_PORT=26443 KCM_PORT=20257 SCHED_PORT=20259 KUBELET_PORT=20250 KUBELET_HEALTHZ=20248
# Paths that containerd 1.6 and the kubelet use whatever they are told: cluster-down removes those it created.
HARDCODED=(/run/containerd /var/lib/kubelet /var/log/containers /var/log/pods /var/lib/cni /run/netns /etc/cni /opt/cni)

log() { printf 'cluster-up: %s\n' "$*"; }
[ "$(id -u)" = 0 ] || { echo "cluster-up: needs root (containerd, runc, network namespaces, hugepages)" >&2; exit 1; }
# One cluster at a time on a machine (fixed ports, /var/lib/kubelet, /run/containerd): refuse to start next to
# another one rather than half-start and tangle with it. Our own processes (a re-run) are fine.
ours() { local pid; pid=$(cat "$ST/pids/$1" 2>/dev/null) && kill -0 "$pid" 2>/dev/null &&
         [ "$(awk '{print $22}' "/proc/$pid/stat")" = "$(cat "$ST/pids/$1.start" 2>/dev/null)" ]; }
for pp in apiserver:$API_PORT etcd:$ETCD_PORT etcd:$ETCD_PEER_PORT kubelet:$KUBELET_PORT; do
  if ! ours "${pp%%:*}" && ss -Hltn "sport = :${pp#*:}" | grep -q .; then
    echo "cluster-up: 127.0.0.1:${pp#*:} is in use (another hack/cluster-up.sh cluster? only one can run on a machine):" >&2
    ss -Hltnp "sport = :${pp#*:}" >&2; exit 1
  fi
done
mkdir -p "$ST"/{logs,pids,cni/net.d,cni/multus.d,cni/bin,cni/ipam,cni/multus-cache,containerd,kubelet-root,kubelet-pki,manifests,pods-logs,runc,bin}
# A process is ours when its PID and its start time (field 22 of /proc/PID/stat) are those we recorded: a PID
# reused by another process after ours died is never taken for ours (nor killed by cluster-down).
starttime() { awk '{print $22}' "/proc/$1/stat" 2>/dev/null; }
running() {
  local pid; pid=$(cat "$ST/pids/$1" 2>/dev/null) && kill -0 "$pid" 2>/dev/null &&
    [ "$(ps -o stat= -p "$pid" | cut -c1)" != Z ] && [ "$(starttime "$pid")" = "$(cat "$ST/pids/$1.start" 2>/dev/null)" ]
}
EXCLUSIVE_CPUS=${EXCLUSIVE_CPUS:-0}
pin=()
# the daemons stay off the CPUs the kubelet hands out whole (their containers' processes are moved into the
# pods' cpusets when runc attaches them, whatever CPU the daemon that spawned them ran on)
[ "$EXCLUSIVE_CPUS" = 1 ] && pin=(taskset -c 0)
if [ -n "${DAEMON_CPU_SHARES:-}" ]; then
  # recorded before it is made, so that cluster-down removes it whatever fails after
  if [ -d /sys/fs/cgroup/cpu ] && [ -f /sys/fs/cgroup/cpu/cpu.shares ]; then
    cg=/sys/fs/cgroup/cpu/linerate-cluster
    echo "$cg" > "$ST/daemon-cgroup"
    mkdir -p "$cg" && echo "$DAEMON_CPU_SHARES" > "$cg/cpu.shares"
  elif grep -qw cpu /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
    cg=/sys/fs/cgroup/linerate-cluster
    echo "$cg" > "$ST/daemon-cgroup"
    if ! grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control; then
      touch "$ST/daemon-cgroup.enabled-cpu" # cluster-down gives the controller back
      echo +cpu > /sys/fs/cgroup/cgroup.subtree_control
    fi
    # cgroup v2's weight: 100 is v1's 1024
    mkdir -p "$cg" && echo $(( (DAEMON_CPU_SHARES * 100 + 1023) / 1024 )) > "$cg/cpu.weight"
  else
    echo "cluster-up: DAEMON_CPU_SHARES: no cpu cgroup controller on this machine" >&2; exit 1
  fi
  # shellcheck disable=SC2016 # $1 is the inner sh's argument; exec keeps the PID that start() records
  pin+=(sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$cg")
fi
start() { # start NAME CMD...: runs CMD in the background (unless NAME already runs), its PID in pids/NAME
  local n=$1; shift
  if running "$n"; then return 0; fi
  "${pin[@]}" "$@" > "$ST/logs/$n.log" 2>&1 &
  echo $! > "$ST/pids/$n"
  starttime $! > "$ST/pids/$n.start"
}
waitfor() { # waitfor WHAT SECONDS CMD...
  local what=$1 secs=$2; shift 2
  for _ in $(seq 1 $((secs * 5))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
  echo "cluster-up: timed out after ${secs}s waiting for $what (logs in $ST/logs)" >&2; return 1
}
t0=$(date +%s.%N)

# --- first run only: remember what existed before us, so that cluster-down removes only what we made
if [ ! -f "$ST/preexisting" ]; then
  for d in "${HARDCODED[@]}"; do [ -e "$d" ] && echo "$d"; done > "$ST/preexisting.tmp" || true
  for c in /sys/fs/cgroup/*/kubepods; do [ -e "$c" ] && echo "$c"; done >> "$ST/preexisting.tmp" || true
  # the namespaces already there are never taken for leftovers of ours
  for n in /run/netns/*; do [ -e "$n" ] && echo "$n"; done >> "$ST/preexisting.tmp" || true
  mv "$ST/preexisting.tmp" "$ST/preexisting"
fi
[ -f "$ST/hugepages.prev" ] || cat /proc/sys/vm/nr_hugepages > "$ST/hugepages.prev"
[ -f "$ST/ip_forward.prev" ] || cat /proc/sys/net/ipv4/ip_forward > "$ST/ip_forward.prev"

# --- binaries: Kubernetes (cached machine-wide), Multus, containerd/runc/CNI plugins from Debian, our helpers
need=()
for c in etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl; do [ -x "$K8S_BIN/$c" ] || need+=("$c"); done
[ ${#need[@]} -eq 0 ] || bash "$ROOT/hack/build-k8s.sh" "$K8S_BIN" kubelet kube-scheduler kube-controller-manager kubectl
bash "$ROOT/hack/build-multus.sh" "$ST/cni/bin" >/dev/null
DEBS=(containerd runc containernetworking-plugins)
# the cache directory is named after the candidate versions, so a Debian point release extracts afresh
DEBROOT=$CACHE/node-debs/$(apt-cache policy "${DEBS[@]}" 2>/dev/null | awk '/Candidate:/{print $2}' | paste -sd_ | sed 's/[~+:]/-/g')
if [ ! -x "$DEBROOT/root/usr/bin/containerd" ]; then
  log "extracting ${DEBS[*]} from Debian's packages into $DEBROOT"
  rm -rf "$DEBROOT" && mkdir -p "$DEBROOT/debs"
  # (as root, apt would warn that its _apt sandbox user cannot write here: download as root, quietly)
  (cd "$DEBROOT/debs" && apt-get download -q -o APT::Sandbox::User=root "${DEBS[@]}" >/dev/null)
  for f in "$DEBROOT"/debs/*.deb; do dpkg-deb -x "$f" "$DEBROOT/root.tmp"; done
  mv "$DEBROOT/root.tmp" "$DEBROOT/root"
fi
for p in "$DEBROOT"/root/usr/lib/cni/*; do ln -sfn "$p" "$ST/cni/bin/$(basename "$p")"; done
(cd "$ROOT" && CGO_ENABLED=0 go build -trimpath -o "$ST/bin/apiserver-relay" ./hack/apiserver-relay)
export PATH="$DEBROOT/root/usr/bin:$DEBROOT/root/usr/sbin:$K8S_BIN:$PATH"
# written now, not at the end: cluster-down needs its kubectl and ctr even when this run fails half-way
cat > "$ST/env" <<ENV
export KUBECONFIG="$ST/kubeconfig"
export PATH="$K8S_BIN:$DEBROOT/root/usr/bin:\$PATH"
export CONTAINERD_ADDRESS="$ST/containerd/containerd.sock" CONTAINERD_NAMESPACE=k8s.io
ENV

# --- hugepages: reserved before the kubelet starts, which reads the node's hugepages capacity at start
if [ "$(cat /proc/sys/vm/nr_hugepages)" -lt "$HUGEPAGES" ]; then
  echo "$HUGEPAGES" > /proc/sys/vm/nr_hugepages
  got=$(cat /proc/sys/vm/nr_hugepages)
  [ "$got" -ge "$HUGEPAGES" ] || log "WARNING: asked for $HUGEPAGES hugepages of 2 MiB, the kernel gave $got (memory fragmented?)"
fi

# --- the pod bridge, made here (not by the bridge plugin at the first pod) so it can also carry the
# kubernetes Service's IP: pods reach the apiserver through apiserver-relay on $SVC_API_IP:443.
if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
  ip link add "$BRIDGE" type bridge
  echo "$BRIDGE" > "$ST/bridge"
fi
ip addr replace "$POD_GW/24" dev "$BRIDGE"
ip addr replace "$SVC_API_IP/32" dev "$BRIDGE"
ip link set "$BRIDGE" up

# --- containerd
cat > "$ST/containerd/config.toml" <<TOML
version = 2
root = "$ST/containerd/root"
state = "$ST/containerd/state"
[grpc]
  address = "$ST/containerd/containerd.sock"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$SANDBOX_IMAGE"
  # no CAP_SYS_RESOURCE here: runc would fail to set oom_score_adj=-998 on the pause container
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$ST/cni/bin"
    conf_dir = "$ST/cni/net.d"
    max_conf_num = 1
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
    runtime_type = "io.containerd.runc.v2"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
      BinaryName = "$DEBROOT/root/usr/sbin/runc"
      Root = "$ST/runc"
      SystemdCgroup = false
TOML
# Registries reached over plain HTTP: one hosts.toml each, naming its http:// endpoint for pull and resolve.
if [ -n "${PLAIN_HTTP_REGISTRIES:-}" ]; then
  rm -rf "$ST/containerd/certs.d"
  for r in $PLAIN_HTTP_REGISTRIES; do
    mkdir -p "$ST/containerd/certs.d/$r"
    printf 'server = "http://%s"\n[host."http://%s"]\n  capabilities = ["pull", "resolve"]\n' "$r" "$r" > "$ST/containerd/certs.d/$r/hosts.toml"
    log "containerd pulls from http://$r (plain HTTP)"
  done
  printf '[plugins."io.containerd.grpc.v1.cri".registry]\n  config_path = "%s"\n' "$ST/containerd/certs.d" >> "$ST/containerd/config.toml"
fi
# The node's CNI is Multus; its default ("cluster") network is the bridge below. Extra networks come from
# NetworkAttachmentDefinitions named in a pod's k8s.v1.cni.cncf.io/networks annotation.
# A single plugin, not a conflist (no portmap, so no hostPort): Multus 4.3's thin plugin re-serialises a
# conflist delegate on DEL and drops every field it does not know (the IPAM ranges among them), so the
# bridge's DEL failed ("no IP ranges specified") and every pod hung in Terminating. NADs have the same
# limitation: give them one plugin each.
rm -f "$ST/cni/multus.d/10-bridge.conflist"
cat > "$ST/cni/multus.d/10-bridge.conf" <<JSON
{"cniVersion": "1.0.0", "name": "linerate-lab", "type": "bridge", "bridge": "$BRIDGE", "isGateway": true, "ipMasq": false,
 "ipam": {"type": "host-local", "dataDir": "$ST/cni/ipam", "ranges": [[{"subnet": "$POD_CIDR", "gateway": "$POD_GW"}]],
          "routes": [{"dst": "0.0.0.0/0"}]}}
JSON
cat > "$ST/cni/net.d/00-multus.conf" <<JSON
{"cniVersion": "1.0.0", "name": "multus-cni-network", "type": "multus",
 "kubeconfig": "$ST/multus.kubeconfig", "clusterNetwork": "$ST/cni/multus.d/10-bridge.conf",
 "confDir": "$ST/cni/multus.d", "cniDir": "$ST/cni/multus-cache", "binDir": "$ST/cni/bin",
 "logFile": "$ST/logs/multus.log", "logLevel": "${MULTUS_LOG_LEVEL:-error}"}
JSON
CTR=(ctr --address "$ST/containerd/containerd.sock" -n k8s.io)
# A run killed before cluster-down leaves containerd's socket behind: a file is no proof that it listens, so
# a stale one goes before the start and the wait asks containerd itself.
running containerd || rm -f "$ST/containerd/containerd.sock" "$ST/containerd/containerd.sock.ttrpc"
start containerd containerd --config "$ST/containerd/config.toml"
waitfor containerd 30 "${CTR[@]}" version

# --- images: the pause image (built here unless given), then IMAGES
if ! "${CTR[@]}" images ls -q | grep -qx "$SANDBOX_IMAGE"; then
  if [ ! -f "$ST/pause.tar" ]; then
    (cd "$ROOT" && CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$ST/bin/pause" ./images/pause &&
      go run ./cmd/imagebuilder pause --pause "$ST/bin/pause" --tag "$SANDBOX_IMAGE" --out "$ST/pause.tar")
  fi
  "${CTR[@]}" images import "$ST/pause.tar" >/dev/null
fi
for t in ${IMAGES:-}; do log "importing $t"; "${CTR[@]}" images import "$t" >/dev/null; done

# --- control plane
[ -f "$ST/sa.key" ] || openssl genrsa -out "$ST/sa.key" 2048 2>/dev/null
if [ ! -f "$ST/tokens.csv" ]; then
  ADMIN_TOKEN=$(openssl rand -hex 16) MULTUS_TOKEN=$(openssl rand -hex 16)
  printf '%s,admin,admin,system:masters\n%s,linerate-lab:multus,linerate-lab:multus\n' "$ADMIN_TOKEN" "$MULTUS_TOKEN" > "$ST/tokens.csv"
  chmod 600 "$ST/tokens.csv"
fi
kubeconfig() { # kubeconfig USER TOKEN
  cat <<KC
apiVersion: v1
kind: Config
clusters: [{name: linerate-lab, cluster: {server: "https://127.0.0.1:$API_PORT", certificate-authority: "$ST/apiserver-certs/apiserver.crt"}}]
users: [{name: $1, user: {token: $2}}]
contexts: [{name: linerate-lab, context: {cluster: linerate-lab, user: $1}}]
current-context: linerate-lab
KC
}
kubeconfig admin "$(awk -F, '$2=="admin"{print $1}' "$ST/tokens.csv")" > "$ST/kubeconfig"
kubeconfig multus "$(awk -F, '$2=="linerate-lab:multus"{print $1}' "$ST/tokens.csv")" > "$ST/multus.kubeconfig"
chmod 600 "$ST/kubeconfig" "$ST/multus.kubeconfig"
export KUBECONFIG="$ST/kubeconfig"

start etcd etcd --name linerate-lab --data-dir "$ST/etcd-data" \
  --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
  --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
  --initial-cluster "linerate-lab=http://127.0.0.1:$ETCD_PEER_PORT"
# --endpoint-reconciler-type=none: the kubernetes Service would otherwise point at 127.0.0.1, which no pod
# can reach; pods dial $SVC_API_IP:443 and apiserver-relay forwards it (the self-signed cert names that IP).
start apiserver kube-apiserver --etcd-servers="http://127.0.0.1:$ETCD_PORT" --bind-address=127.0.0.1 --advertise-address=127.0.0.1 \
  --secure-port=$API_PORT --endpoint-reconciler-type=none --kubelet-preferred-address-types=Hostname \
  --cert-dir="$ST/apiserver-certs" --token-auth-file="$ST/tokens.csv" --authorization-mode=Node,RBAC --allow-privileged=true \
  --service-cluster-ip-range=$SVC_CIDR --service-account-issuer=https://kubernetes.default.svc \
  --service-account-key-file="$ST/sa.key" --service-account-signing-key-file="$ST/sa.key"
waitfor kube-apiserver 90 kubectl get --raw /readyz
start apiserver-relay "$ST/bin/apiserver-relay" -listen "$SVC_API_IP:443" -to "127.0.0.1:$API_PORT"
K=(--kubeconfig="$ST/kubeconfig" --authentication-kubeconfig="$ST/kubeconfig" --authorization-kubeconfig="$ST/kubeconfig" --bind-address=127.0.0.1 --leader-elect=false)
start kube-controller-manager kube-controller-manager "${K[@]}" --secure-port=$KCM_PORT \
  --service-account-private-key-file="$ST/sa.key" --root-ca-file="$ST/apiserver-certs/apiserver.crt" \
  --use-service-account-credentials=false --service-cluster-ip-range=$SVC_CIDR
start kube-scheduler kube-scheduler "${K[@]}" --secure-port=$SCHED_PORT
kubectl apply --server-side -f "$ROOT/hack/cluster/network-attachment-definition-crd.yaml" >/dev/null

# --- kubelet (cgroup v1 here: failCgroupV1=false; containerd 1.6 lacks the RuntimeConfig call, so the
# kubelet uses cgroupDriver as given)
cat > "$ST/kubelet-config.yaml" <<KCFG
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: $KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $KUBELET_HEALTHZ
containerRuntimeEndpoint: unix://$ST/containerd/containerd.sock
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
authentication: {anonymous: {enabled: true}, webhook: {enabled: false}}
authorization: {mode: AlwaysAllow}
staticPodPath: $ST/manifests
podLogsDir: $ST/pods-logs
evictionHard: {}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
KCFG
if [ "$EXCLUSIVE_CPUS" = 1 ]; then
  # 1 millicore reserved rounds up to one whole CPU, the lowest, under the static policy; allocatable keeps
  # the rest (reservedSystemCPUs would take a whole CPU's worth off allocatable, and a 2-CPU node could not
  # then fit a 1-CPU tester next to the manager)
  printf 'cpuManagerPolicy: static\nkubeReserved: {cpu: 1m}\n' >> "$ST/kubelet-config.yaml"
  policy=static
else
  policy=none
fi
if ! running kubelet && [ -f "$ST/kubelet-root/cpu_manager_state" ] &&
   ! grep -q "\"policyName\":\"$policy\"" "$ST/kubelet-root/cpu_manager_state"; then
  rm -f "$ST/kubelet-root/cpu_manager_state"
fi
# The node's name and the address the apiserver dials for logs/exec/port-forward is 127.0.0.1 (Hostname, as
# --kubelet-preferred-address-types says); its InternalIP is the pod bridge's address, because the kubelet
# refuses a loopback --node-ip and would otherwise guess one from the default route.
start kubelet kubelet --config="$ST/kubelet-config.yaml" --kubeconfig="$ST/kubeconfig" --root-dir="$ST/kubelet-root" \
  --cert-dir="$ST/kubelet-pki" --hostname-override=127.0.0.1 --node-ip=$POD_GW
node_ready() { kubectl get node 127.0.0.1 -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' | grep -qx True; }
waitfor "the node to be Ready" 120 node_ready
waitfor "the default ServiceAccount" 60 kubectl -n default get serviceaccount default
huge=$(kubectl get node 127.0.0.1 -o jsonpath='{.status.allocatable.hugepages-2Mi}')
log "Ready in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}') s: node 127.0.0.1 (hugepages-2Mi allocatable: ${huge:-none})"
log "kubeconfig: $ST/kubeconfig"
log "use it with: source $ST/env   (KUBECONFIG, and PATH with kubectl $K8S_VERSION and ctr)"
