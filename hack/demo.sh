#!/usr/bin/env bash
# make demo: linerate end to end on this machine, as root, with no NIC and no existing cluster —
#   1. tools and images (hack/build-images.sh: manager + tester, no container engine),
#   2. a single-node Kubernetes cluster (hack/cluster-up.sh) with Multus,
#   3. linerate installed with its Helm chart,
#   4. a real IPsec gateway pair in network namespaces (hack/dut/ipsec-gateway-up.sh: two strongSwan
#      gateways, IKEv2, AES-256-GCM, ESP in UDP) and host-device NetworkAttachmentDefinitions for its two
#      tester-side interfaces,
#   5. config/samples/throughput-test-demo.yaml applied and followed, its RFC 2544 results printed.
# It leaves everything up to explore; `make demo-down` (hack/demo-down.sh) removes it all.
#
#   DEMO_STATE=/var/tmp/linerate-demo   where the state lives (demo-down finds it there)
#   DEMO_TEST=config/samples/throughput-test-demo.yaml
#   DEMO_TIMEOUT=1800                   seconds to wait for the test
#   DEMO_DUT=ipsec                      or router (a plain forwarding namespace, fast)
#   DEMO_EXCLUSIVE_CPUS=1               the tester gets a CPU of its own (the kubelet's static CPU manager;
#                                       this script, the cluster and, on 2 CPUs, the DUT keep to CPU 0); 0:
#                                       every process shares every CPU
#   DEMO_DAEMON_CPU_SHARES=128          the cluster daemons' cpu weight beside the DUT (cluster-up.sh)
set -euo pipefail
export LR_STATE=${DEMO_STATE:-/var/tmp/linerate-demo}
export LR_DUT=${DEMO_DUT_NAME:-lrdemo}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib/bringup.sh
. "$here/lib/bringup.sh"
test_file=${DEMO_TEST:-$LR_ROOT/config/samples/throughput-test-demo.yaml}
timeout=${DEMO_TIMEOUT:-1800}   # the test took 10-16 min on a 2-vCPU host (2026-11-29): the gateways decide
dut_kind=${DEMO_DUT:-ipsec}

lr_require_root
mkdir -p "$LR_STATE"
lr_deps
lr_images
export LR_EXCLUSIVE_CPUS=${DEMO_EXCLUSIVE_CPUS:-1}
[ "$(nproc --all)" -ge 2 ] || LR_EXCLUSIVE_CPUS=0
# the cluster's daemons yield CPU 0 to the gateways (an eighth of a process's weight): the DUT's capacity is
# then its own, as on a testbed where the DUT is a machine of its own
[ "$LR_EXCLUSIVE_CPUS" = 1 ] && export LR_DAEMON_CPU_SHARES=${DEMO_DAEMON_CPU_SHARES:-128}
lr_cluster_up
# kubectl, helm and the checks below run on the system's CPU too, never on the tester's (pinned after the
# cluster is up: a first run builds Kubernetes on every CPU)
[ "$LR_EXCLUSIVE_CPUS" = 1 ] && taskset -p -c 0 $$ >/dev/null
lr_operator_install
name=$(kubectl create --dry-run=client -o jsonpath='{.metadata.name}' -f "$test_file")
lr_delete_test "$name"
if ! lr_dut_up "$dut_kind"; then
	lr_die "the $dut_kind DUT did not come up (DEMO_DUT=router runs the demo against a plain forwarding namespace)"
fi
lr_log "proving the DUT forwards (and, for IPsec, encrypts): hack/dut/check.sh $LR_DUT"
bash "$LR_ROOT/hack/dut/check.sh" "$LR_DUT" | sed 's/^/    /'
lr_nads
lr_log "kubectl apply -f ${test_file#"$LR_ROOT"/}"
# the sample reads the CPU of the gateways' cgroup by the default DUT name: another name (DEMO_DUT_NAME) has
# its own
# shellcheck disable=SC2016 # $1 and $2 are the inner shell's
dut_cgroup=$(bash -c '. "$1" && dut_cgroup "$2"' sh "$LR_ROOT/hack/dut/lib.sh" "$LR_DUT")
sed "s|/linerate-dut/lrdemo\b|$dut_cgroup|" "$test_file" | kubectl apply -n "$LR_TEST_NS" -f -
lr_log "following it (kubectl get traffictests -w; at most ${timeout}s)"
if ! lr_follow "$name" "$timeout"; then
	cat >&2 <<MSG

The demo stopped before the end of the test (after $(($(date +%s) - lr_t0)) s). What is up stays up:
    source $LR_STATE/cluster/env; kubectl describe traffictest $name; kubectl get pods -o wide
    make demo-down     # remove everything
MSG
	exit 1
fi
lr_results "$name"
# the HTML report with every plot and trial, from the results ConfigMaps, as a cluster user makes it
report_dir=$LR_STATE/report
mkdir -p "$LR_STATE/bin"
(cd "$LR_ROOT" && go build -o "$LR_STATE/bin/linerate" ./cmd/linerate)
ln -sf linerate "$LR_STATE/bin/kubectl-linerate"
lr_log "kubectl linerate report $name -n $LR_TEST_NS -o $report_dir   # the HTML report, from the results ConfigMaps"
PATH=$LR_STATE/bin:$PATH kubectl linerate report "$name" -n "$LR_TEST_NS" -o "$report_dir" | sed 's/^/    /'

cm=$(kubectl get traffictest "$name" -n "$LR_TEST_NS" -o jsonpath='{.status.resultsConfigMap}')
dut_state=${DUT_STATE_ROOT:-/var/tmp/linerate-dut}/$LR_DUT
sas="ip netns exec $LR_DUT-r tc -s qdisc               # the DUT's counters"
[ "$dut_kind" = ipsec ] && sas="swanctl --list-sas --uri unix://$dut_state/gw-a/charon.vici   # the tunnel's SA counters"
cat <<MSG

Done in $(($(date +%s) - lr_t0)) s. The cluster, linerate and the DUT stay up:
    source $LR_STATE/cluster/env                  # KUBECONFIG and kubectl for this cluster
    kubectl get traffictests                      # phase, progress, headline, verdict
    kubectl get traffictest $name -o yaml         # status.results: every table
    kubectl get configmap ${cm:-$name-results} -o yaml
        # results.json, progress.json and every trial in trials.jsonl.gz; it outlives the tester pod
    PATH=$LR_STATE/bin:\$PATH kubectl linerate report $name -o $report_dir
        # the HTML report ($report_dir/index.html); make install-kubectl-plugin puts the plugin on your PATH
    kubectl -n $LR_NS port-forward svc/linerate-controller-manager-metrics-service 8080:8080 &
    curl -s localhost:8080/metrics | grep ^linerate_   # the results as Prometheus gauges
    $sas
    make demo-down                                # remove everything
Not on this machine? The demo imported its images; 'make push REGISTRY=<your registry>/linerate TAG=v1' pushes both
and the chart, and prints the helm install line (docs/getting-started.md#images).
MSG
