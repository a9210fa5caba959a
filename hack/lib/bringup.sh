# shellcheck shell=bash
# The bring-up shared by hack/demo.sh (make demo) and hack/e2e.sh (make test-e2e): the project's tools and
# images, a local single-node cluster (hack/cluster-up.sh), linerate installed with its Helm chart, a DUT in
# network namespaces (hack/dut/) and Multus host-device NetworkAttachmentDefinitions that hand the DUT's
# tester-side interfaces to the tester pod. Source it after setting:
#
#   LR_STATE   the state directory (cluster in $LR_STATE/cluster, images in $LR_STATE/images)
#   LR_DUT     the DUT's name (hack/dut/: at most 10 characters)
#
# and call the lr_* functions. Every step is idempotent, so a second `make demo` reuses what is up.

LR_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
LR_NS=${LR_NS:-linerate-system}          # the operator's namespace
LR_TEST_NS=${LR_TEST_NS:-default}        # where the TrafficTests and tester pods run
LR_RELEASE=${LR_RELEASE:-linerate}       # the Helm release
LR_NAD_PREFIX=${LR_NAD_PREFIX:-linerate-demo}
LR_MANAGER_IMG=${LR_MANAGER_IMG:-linerate.dev/manager:dev}
LR_TESTER_IMG=${LR_TESTER_IMG:-linerate.dev/tester:dev}
LR_API_PORT=26443                        # hack/cluster-up.sh's kube-apiserver port
# shellcheck source=netns-dir.sh
. "$LR_ROOT/hack/lib/netns-dir.sh"

lr_t0=$(date +%s)
lr_log() { printf '\033[1m==> [%4ss] %s\033[0m\n' "$(($(date +%s) - lr_t0))" "$*" >&2; }
lr_die() { printf 'error: %s\n' "$*" >&2; exit 1; }

lr_require_root() { [ "$(id -u)" = 0 ] || lr_die "run as root: the cluster and the DUT need network namespaces, mounts and hugepages"; }

# lr_machine_state: what a bring-up may leave behind on this machine, one "kind value" a line, sorted:
# network namespaces, network interfaces of the root namespace, mounts of the kinds we make (network
# namespaces, hugetlbfs, overlays, anything below the hard-coded cluster directories), the kubelet's cgroups,
# those directories themselves, the hugepage reservation and processes that name our state directory.
lr_machine_state() {
	# (each probe may find nothing: under set -e a loop's or pipeline's non-zero status must not end the caller)
	local c d
	ip netns list 2>/dev/null | awk '{print "netns", $1}' || true
	ip -o link show 2>/dev/null | awk -F': ' '{sub(/@.*/, "", $2); print "link", $2}' || true
	awk '$9 == "nsfs" || $9 == "hugetlbfs" || $9 == "overlay" || $5 ~ "^(/run/netns|/run/containerd|/var/lib/kubelet|/var/lib/cni)" {print "mount", $5}' /proc/self/mountinfo
	for c in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/kubepods* /sys/fs/cgroup/*/linerate-cluster /sys/fs/cgroup/linerate-cluster; do
		if [ -e "$c" ]; then echo "cgroup $c"; fi
	done
	for d in /run/containerd /var/lib/kubelet /var/log/containers /var/log/pods /var/lib/cni /run/netns /etc/cni /opt/cni; do
		if [ -e "$d" ]; then echo "dir $d"; fi
	done
	echo "nr_hugepages $(cat /proc/sys/vm/nr_hugepages)"
	# processes naming our state directory or the DUT's (containerd and its shims, the kubelet, etcd, charon);
	# shells are left out: this script and its subshells name the state directory too
	{ pgrep -af -- "($LR_STATE|${DUT_STATE_ROOT:-/var/tmp/linerate-dut}/$LR_DUT)(/| |$)" 2>/dev/null || true; } |
		awk '$2 !~ /(^|\/)(ba)?sh$/ {$1 = ""; print "process" $0}'
}

# lr_baseline: the machine's state before the first bring-up of $LR_STATE (kept beside it, not in it: the
# teardown removes $LR_STATE). A second `make demo` over a running one keeps the first baseline.
lr_baseline() {
	[ -f "$LR_STATE.baseline" ] || lr_machine_state | sort -u >"$LR_STATE.baseline"
}

# lr_assert_clean: after lr_teardown, fails listing whatever the bring-up left that was not there before it
# (a namespace, mount, cgroup, interface, directory, hugepage or process of ours). Without a baseline (the
# bring-up never started) there is nothing to compare with.
lr_assert_clean() {
	[ -f "$LR_STATE.baseline" ] || return 0
	local left
	left=$(comm -13 "$LR_STATE.baseline" <(lr_machine_state | sort -u) | grep -v '^nr_hugepages ' || true)
	local hp_before hp_now
	hp_before=$(awk '$1 == "nr_hugepages" {print $2}' "$LR_STATE.baseline")
	hp_now=$(cat /proc/sys/vm/nr_hugepages)
	[ "$hp_before" = "$hp_now" ] || left+=$'
'"nr_hugepages $hp_now (was $hp_before)"
	rm -f "$LR_STATE.baseline"
	left=$(echo "$left" | sed '/^$/d')
	if [ -n "$left" ]; then
		echo "error: the teardown left these behind (not there before the bring-up):" >&2
		printf '    %s\n' "${left//$'\n'/$'\n'    }" >&2
		return 1
	fi
	lr_log "teardown left nothing behind (namespaces, interfaces, mounts, cgroups, directories, hugepages, processes)"
}

# lr_deps: the tools and packages the bring-up needs (each script is a no-op when things are there).
lr_deps() {
	lr_baseline
	lr_log "dependencies (Debian packages, helm; cached after the first run)"
	bash "$LR_ROOT/hack/dut/install-deps.sh"
	[ -x "$LR_ROOT/bin/helm" ] || bash "$LR_ROOT/hack/install-tools.sh" helm
	if [ -f "$LR_ROOT/hack/install-dataplane-deps.sh" ]; then
		bash "$LR_ROOT/hack/install-dataplane-deps.sh"
	fi
}

# lr_images: the manager and tester images as tarballs in $LR_STATE/images — the engine with `make engine`,
# then hack/build-images.sh (static Go binaries, cmd/imagebuilder; no container engine).
lr_images() {
	[ -f "$LR_ROOT/hack/build-images.sh" ] || lr_die "hack/build-images.sh is missing (it builds the images)"
	if [ -f "$LR_ROOT/dataplane/Makefile" ]; then
		lr_log "building the engine (make engine)"
		make -s -C "$LR_ROOT" engine
	fi
	lr_log "building the images (manager, tester) into $LR_STATE/images"
	mkdir -p "$LR_STATE/images"
	MANAGER_IMG=$LR_MANAGER_IMG TESTER_IMG=$LR_TESTER_IMG bash "$LR_ROOT/hack/build-images.sh" "$LR_STATE/images"
	[ -f "$LR_STATE/images/manager.tar" ] || lr_die "hack/build-images.sh wrote no manager image"
	if [ ! -f "$LR_STATE/images/tester.tar" ]; then
		# Go on: everything up to the tester pod can still be shown; lr_follow reports the missing image.
		echo "WARNING: no tester image: it needs ./cmd/linerate (the runner) and dataplane/build/linerate-engine (make engine); see the build-images messages above" >&2
	fi
}

lr_image_tars() { local f; for f in "$LR_STATE"/images/*.tar; do [ ! -e "$f" ] || printf '%s ' "$f"; done; }

# lr_cluster_up: the single-node cluster, with the images imported. Only one such cluster can run on a
# machine (fixed ports and kubelet paths): refuse when another state directory's cluster is up.
lr_cluster_up() {
	if ss -Hltn "sport = :$LR_API_PORT" | grep -q . && [ ! -f "$LR_STATE/cluster/kubeconfig" ]; then
		lr_die "a kube-apiserver of another local cluster listens on 127.0.0.1:$LR_API_PORT; bring that one down first"
	fi
	lr_log "cluster up (state in $LR_STATE/cluster)"
	IMAGES=$(lr_image_tars) EXCLUSIVE_CPUS=${LR_EXCLUSIVE_CPUS:-0} DAEMON_CPU_SHARES=${LR_DAEMON_CPU_SHARES:-} \
		bash "$LR_ROOT/hack/cluster-up.sh" "$LR_STATE/cluster"
	lr_env
}

# lr_env: KUBECONFIG and PATH (kubectl matching the server) of the cluster in $LR_STATE.
lr_env() {
	# shellcheck disable=SC1091
	. "$LR_STATE/cluster/env"
	export PATH="$LR_ROOT/bin:$PATH"
}

# lr_operator_install: linerate's chart (CRDs, operator) with the locally built images.
lr_operator_install() {
	lr_log "helm upgrade --install $LR_RELEASE charts/linerate -n $LR_NS"
	# The tarball's digest as a pod annotation: a rebuilt image (same tag) rolls the operator, an unchanged
	# one does not.
	local digest
	digest=$(sha256sum "$LR_STATE/images/manager.tar" | cut -c1-16)
	local extra
	read -ra extra <<<"${LR_HELM_ARGS:-}" # extra helm arguments, split on spaces
	local mrepo=${LR_MANAGER_IMG%:*} mtag=${LR_MANAGER_IMG##*:} trepo=${LR_TESTER_IMG%:*} ttag=${LR_TESTER_IMG##*:}
	helm upgrade --install "$LR_RELEASE" "$LR_ROOT/charts/linerate" -n "$LR_NS" --create-namespace \
		--set "image.repository=$mrepo,image.tag=$mtag,image.pullPolicy=Never" \
		--set "tester.image.repository=$trepo,tester.image.tag=$ttag,tester.image.pullPolicy=Never" \
		--set-string "podAnnotations.linerate\.dev/image-tarball=$digest" \
		--wait --timeout 5m "${extra[@]}" >"$LR_STATE/helm.log" 2>&1 || { cat "$LR_STATE/helm.log" >&2; lr_die "helm install failed"; }
	kubectl -n "$LR_NS" rollout status deploy --timeout=3m >/dev/null
	helm list -n "$LR_NS" --filter "^$LR_RELEASE\$" | sed 's/^/    /'
	echo "    (the chart's notes: $LR_STATE/helm.log)"
}

# lr_dut_up KIND: the DUT — "ipsec" (the strongSwan gateway pair) or "router" (a forwarding namespace).
# Sets LR_WEST_IF and LR_EAST_IF to its tester-side interfaces.
lr_dut_up() {
	local kind=$1 out
	lr_log "DUT: $kind ($LR_DUT)"
	case $kind in
	ipsec)
		# the gateways on a CPU the tester's engine does not run on: two machines' worth of separation on one
		# (hack/dut/ipsec-gateway-up.sh, DUT_CPUS). With exclusive CPUs (LR_EXCLUSIVE_CPUS=1) the tester has
		# CPU 1 to itself and CPU 0 is the system's: the gateways take the last CPU, or on a 2-CPU machine
		# share CPU 0 with the cluster's daemons at a higher priority (nice -5), so that the DUT's capacity
		# is its own and not the API server's leftovers. Otherwise the tester's engine takes the first CPU of
		# its cpuset (CPU 0) and the gateways the last.
		local last=$(($(nproc --all) - 1)) cpus nice=0
		cpus=$last
		if [ "${LR_EXCLUSIVE_CPUS:-0}" = 1 ] && [ "$last" -le 1 ]; then cpus=0 nice=-5; fi
		out=$(DUT_CPUS=${LR_DUT_CPUS:-$cpus} DUT_NICE=${LR_DUT_NICE:-$nice} bash "$LR_ROOT/hack/dut/ipsec-gateway-up.sh" "$LR_DUT")
		;;
	router)
		local args
		read -ra args <<<"${LR_DUT_ARGS:-}" # e.g. "--rate 5mbit"
		out=$(bash "$LR_ROOT/hack/dut/router-up.sh" "$LR_DUT" "${args[@]}")
		;;
	*) lr_die "unknown DUT kind $kind" ;;
	esac
	echo "$kind" >"$LR_STATE/dut-kind"
	echo "$LR_DUT" >"$LR_STATE/dut-name"
	LR_WEST_IF=$(echo "$out" | sed -n 's/.*west=\([^ ]*\).*/\1/p')
	LR_EAST_IF=$(echo "$out" | sed -n 's/.*east=\([^ ]*\).*/\1/p')
	[ -n "$LR_WEST_IF" ] && [ -n "$LR_EAST_IF" ] || lr_die "the DUT script printed no tester ports: $out"
}

lr_dut_down() {
	local kind name
	kind=$(cat "$LR_STATE/dut-kind" 2>/dev/null) || return 0
	name=$(cat "$LR_STATE/dut-name")
	case $kind in
	ipsec) bash "$LR_ROOT/hack/dut/ipsec-gateway-down.sh" "$name" ;;
	router) bash "$LR_ROOT/hack/dut/router-down.sh" "$name" ;;
	esac
	rm -f "$LR_STATE/dut-kind" "$LR_STATE/dut-name"
}

# lr_nads: one host-device NetworkAttachmentDefinition per tester port: Multus moves the interface into the
# tester pod while it runs and back to the host when the pod ends.
lr_nads() {
	lr_log "NetworkAttachmentDefinitions $LR_NAD_PREFIX-west ($LR_WEST_IF), $LR_NAD_PREFIX-east ($LR_EAST_IF)"
	local side dev
	for side in west east; do
		dev=$LR_WEST_IF
		[ $side = east ] && dev=$LR_EAST_IF
		kubectl apply -n "$LR_TEST_NS" -f - >/dev/null <<-YAML
			apiVersion: k8s.cni.cncf.io/v1
			kind: NetworkAttachmentDefinition
			metadata:
			  name: $LR_NAD_PREFIX-$side
			  annotations:
			    linerate.dev/dut: "$LR_DUT"
			spec:
			  config: '{"cniVersion": "0.3.1", "name": "$LR_NAD_PREFIX-$side", "type": "host-device", "device": "$dev"}'
		YAML
	done
}

# lr_delete_test NAME: delete an earlier run of a TrafficTest and wait until its tester pods are gone (they
# hold the DUT's ports).
lr_delete_test() {
	local name=$1
	kubectl get traffictest "$name" -n "$LR_TEST_NS" >/dev/null 2>&1 || return 0
	lr_log "deleting the earlier run of $name"
	kubectl delete traffictest "$name" -n "$LR_TEST_NS" --wait=true --timeout=2m
	for _ in $(seq 120); do
		[ -z "$(kubectl get pods -n "$LR_TEST_NS" -l "linerate.dev/traffictest=$name" -o name 2>/dev/null)" ] && return 0
		sleep 1
	done
	lr_die "the tester pods of $name did not go away"
}

# lr_wait_ports_home: wait until the DUT's tester ports are back in the root namespace (no tester pod holds
# them), so that a new test can start.
lr_wait_ports_home() {

	for _ in $(seq 120); do
		ip link show "$LR_WEST_IF" >/dev/null 2>&1 && ip link show "$LR_EAST_IF" >/dev/null 2>&1 && return 0
		sleep 1
	done
	lr_die "the tester ports $LR_WEST_IF/$LR_EAST_IF did not come back to the host"
}

# lr_follow NAME TIMEOUT_S: `kubectl get traffictest -w` until the test ends; fails on timeout. It looks at
# the phase and the tester pods every 5 s: each kubectl costs a tenth of a CPU-second, which on a small
# machine is taken from the cluster, the DUT or the tester.
lr_follow() {
	local name=$1 timeout=$2 phase watch_pid deadline
	kubectl get traffictest "$name" -n "$LR_TEST_NS" -w &
	watch_pid=$!
	phase=
	local why=
	deadline=$(($(date +%s) + timeout))
	while [ "$(date +%s)" -lt "$deadline" ]; do
		phase=$(kubectl get traffictest "$name" -n "$LR_TEST_NS" -o jsonpath='{.status.phase}' 2>/dev/null || true)
		case $phase in Succeeded | Failed) break ;; esac
		# A tester pod that cannot start will not finish the test: say why now rather than at the timeout.
		why=$(kubectl get pods -n "$LR_TEST_NS" -l "linerate.dev/traffictest=$name" -o jsonpath='{range .items[*]}{.metadata.name}{": "}{.status.containerStatuses[*].state.waiting.reason}{" "}{.status.containerStatuses[*].state.waiting.message}{"\n"}{end}' 2>/dev/null |
			grep -E "ErrImage|ImagePull|CreateContainer|InvalidImageName|CrashLoop" || true)
		[ -n "$why" ] && break
		sleep 5
	done
	if [ -n "$why" ]; then
		kill "$watch_pid" 2>/dev/null || true
		wait "$watch_pid" 2>/dev/null || true
		echo "the tester pod cannot run: $why" >&2
		return 1
	fi
	sleep 1
	kill "$watch_pid" 2>/dev/null || true
	wait "$watch_pid" 2>/dev/null || true
	case $phase in
	Succeeded | Failed) return 0 ;;
	*) echo "timed out after ${timeout}s in phase '${phase}'" >&2; return 1 ;;
	esac
}

# lr_results NAME: the result tables from the TrafficTest's status.
lr_results() {
	local name=$1 ns=$LR_TEST_NS
	echo
	kubectl get traffictest "$name" -n "$ns" -o wide
	echo
	echo "RFC 2544 throughput (NDR: no frame lost; PDR: at most the tolerated loss) — status.results.throughput"
	{
		echo "FRAME DIRECTION NDR_FPS NDR_L2_BIT/S NDR_%LINE PDR_FPS TRIALS TESTER_LIMITED UNDETERMINED BOUND_BY DUT_CORES_BUSY DUT_µS/1000_FRAMES"
		# fields are |-separated: an absent one (no PDR, not tester-limited) must not shift the others
		kubectl get traffictest "$name" -n "$ns" -o jsonpath='{range .status.results.throughput[*]}{.frameSize}{"|"}{.direction}{"|"}{.ndr.framesPerSecond}{"|"}{.ndr.l2BitsPerSecond}{"|"}{.ndr.percentOfLineRate}{"|"}{.pdr.framesPerSecond}{"|"}{.trials}{"|"}{.testerLimited}{"|"}{.undetermined}{"|"}{.boundBy}{"|"}{.dutCPU.coresBusy}{"|"}{.dutCPU.microsecondsPerThousandFrames}{"\n"}{end}' |
			awk -F'|' '{ if ($6 == "") $6 = "-"; if ($8 == "") $8 = "false"; $9 = ($9 == "" ? "-" : "yes"); for (i = 10; i <= 12; i++) if ($i == "") $i = "-"; print $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12 }'
	} | column -t
	if [ -n "$(kubectl get traffictest "$name" -n "$ns" -o jsonpath='{.status.results.latency[*].frameSize}')" ]; then
		echo
		echo "Latency (µs) at each load, in % of the throughput rate (100: the NDR, 0: the sparse probe) — status.results.latency"
		{
			echo "FRAME DIRECTION LOAD_%NDR RATE_FPS MIN MEAN P50 P99 MAX PERCENTILES_±"
			kubectl get traffictest "$name" -n "$ns" -o jsonpath='{range .status.results.latency[*]}{.frameSize}{"|"}{.direction}{"|"}{.percentOfNDR}{"|"}{.rate.framesPerSecond}{"|"}{.aggregate.minNs}{"|"}{.aggregate.meanNs}{"|"}{.aggregate.p50Ns}{"|"}{.aggregate.p99Ns}{"|"}{.aggregate.maxNs}{"|"}{.aggregate.resolutionNs}{"\n"}{end}' |
				awk -F'|' '{ if ($3 == "") $3 = "100"; for (i = 5; i <= 10; i++) $i = ($i == "" ? "-" : sprintf("%.3f", $i / 1000)); print $1, $2, $3, $4, $5, $6, $7, $8, $9, $10 }'
		} | column -t
	fi
	local notes verdict failures
	notes=$(kubectl get traffictest "$name" -n "$ns" -o jsonpath='{range .status.results.notes[*]}{"- "}{@}{"\n"}{end}')
	if [ -n "$notes" ]; then
		echo
		echo "What the tester wants you to know — status.results.notes"
		echo "$notes"
	fi
	verdict=$(kubectl get traffictest "$name" -n "$ns" -o jsonpath='{.status.verdict}')
	failures=$(kubectl get traffictest "$name" -n "$ns" -o jsonpath='{.status.failures}')
	echo
	echo "Verdict: ${verdict:-none} ${failures}"
}

# lr_teardown: everything in $LR_STATE — the cluster (pods first, so host-device gives the ports back),
# the DUT, the state directory.
# lr_artifacts DIR: what a failed run needs for its diagnosis, copied out of the cluster before the teardown
# removes it: the manager's and every tester pod's logs (current and previous container), the events and
# objects of the operator's and the tests' namespaces, the results ConfigMaps, and the node's kubelet and
# containerd logs. Best effort: a cluster that never came up leaves what exists.
lr_artifacts() {
	local dir=$1 ns pod
	mkdir -p "$dir"
	if [ -f "$LR_STATE/cluster/kubeconfig" ]; then
		export KUBECONFIG=$LR_STATE/cluster/kubeconfig
		for ns in "$LR_NS" "$LR_TEST_NS"; do
			kubectl get events -n "$ns" --sort-by=.lastTimestamp -o wide >"$dir/events-$ns.txt" 2>&1 || true
			kubectl get pods,traffictests,configmaps -n "$ns" -o yaml >"$dir/objects-$ns.yaml" 2>&1 || true
			for pod in $(kubectl get pods -n "$ns" -o name 2>/dev/null); do
				kubectl logs -n "$ns" "$pod" --all-containers --timestamps >"$dir/logs-$ns-${pod#pod/}.txt" 2>&1 || true
				kubectl logs -n "$ns" "$pod" --all-containers --timestamps --previous >"$dir/logs-$ns-${pod#pod/}.previous.txt" 2>/dev/null ||
					rm -f "$dir/logs-$ns-${pod#pod/}.previous.txt"
			done
		done
	fi
	cp "$LR_STATE"/cluster/logs/*.log "$dir/" 2>/dev/null || true
	echo "artifacts of the failed run: $dir" >&2
}

lr_teardown() {
	if [ -d "$LR_STATE/cluster" ]; then
		lr_log "cluster down ($LR_STATE/cluster)"
		bash "$LR_ROOT/hack/cluster-down.sh" "$LR_STATE/cluster" || echo "warning: cluster-down failed" >&2
	fi
	lr_log "DUT down"
	lr_dut_down
	rm -rf "$LR_STATE"
	# The DUT's namespaces were the last under /run/netns: if the bring-up made that directory, it goes now.
	if [ -f "$LR_STATE.baseline" ] && ! grep -qx 'dir /run/netns' "$LR_STATE.baseline"; then
		lr_remove_netns_dir
	fi
}

# --- A registry the cluster pulls linerate from by name, the way a real cluster does (hack/e2e.sh; make demo
# imports the tarballs instead). hack/registry.sh on the loopback, plain HTTP; its host:port is not one the
# images were built or imported under, so whatever the node runs from it was pulled from it.
LR_REGISTRY_ADDR=${LR_REGISTRY_ADDR:-127.0.0.1:25000}
LR_REGISTRY=${LR_REGISTRY:-$LR_REGISTRY_ADDR/linerate} # the images: $LR_REGISTRY/manager:$LR_IMAGE_TAG, .../tester
LR_IMAGE_TAG=${LR_IMAGE_TAG:-e2e}

# lr_registry_up: the registry, its blobs and log in $LR_STATE/registry.
lr_registry_up() {
	lr_log "registry on http://$LR_REGISTRY_ADDR (state in $LR_STATE/registry)"
	bash "$LR_ROOT/hack/registry.sh" up "$LR_STATE/registry" "$LR_REGISTRY_ADDR"
}

# lr_registry_down: stops it (before lr_teardown removes $LR_STATE, which holds its PID).
lr_registry_down() {
	[ ! -d "$LR_STATE/registry" ] || bash "$LR_ROOT/hack/registry.sh" down "$LR_STATE/registry"
}

# lr_push: lr_images' tarballs and the chart into the registry (hack/push.sh, what `make push` runs); what was
# pushed, with its digests, in $LR_STATE/pushed.txt.
lr_push() {
	lr_log "make push: $LR_REGISTRY/manager:$LR_IMAGE_TAG, $LR_REGISTRY/tester:$LR_IMAGE_TAG, oci://$LR_REGISTRY/charts/linerate"
	REGISTRY=$LR_REGISTRY TAG=$LR_IMAGE_TAG PUSHED_FILE=$LR_STATE/pushed.txt \
		bash "$LR_ROOT/hack/push.sh" "$LR_STATE/images" >"$LR_STATE/push.log" 2>&1 || { cat "$LR_STATE/push.log" >&2; lr_die "make push failed"; }
	sed 's/^/    /' "$LR_STATE/pushed.txt"
}

# lr_operator_install_from_registry: the pushed chart, from oci://, with its defaults: the pushed images.
lr_operator_install_from_registry() {
	local chart version extra
	chart=$(awk '$1 == "chart" {print $2}' "$LR_STATE/pushed.txt")
	[ -n "$chart" ] || lr_die "$LR_STATE/pushed.txt names no chart: run lr_push first"
	version=${chart##*:}
	chart=${chart%:*}
	read -ra extra <<<"${LR_HELM_ARGS:-}" # extra helm arguments, split on spaces
	lr_log "helm upgrade --install $LR_RELEASE $chart --version $version -n $LR_NS (no image values: the chart's are the registry's)"
	helm upgrade --install "$LR_RELEASE" "$chart" --version "$version" --plain-http -n "$LR_NS" --create-namespace \
		--wait --timeout 5m "${extra[@]}" >"$LR_STATE/helm.log" 2>&1 || { cat "$LR_STATE/helm.log" >&2; lr_die "helm install from $chart failed"; }
	kubectl -n "$LR_NS" rollout status deploy --timeout=3m >/dev/null
	helm list -n "$LR_NS" --filter "^$LR_RELEASE\$" | sed 's/^/    /'
}
