#!/usr/bin/env bash
# make test-e2e: the e2e suite (test/e2e, build tag e2e) against a real local cluster — the same bring-up as
# `make demo` (hack/lib/bringup.sh) with a fast DUT of known truth instead of the IPsec pair: a forwarding
# namespace that shapes each direction to E2E_DUT_RATE with tbf, so the measured throughput can be checked
# against what the DUT really does. 5 Mbit/s (10,400 frames/s at 64 B, 413 at 1518 B) stays below what a
# 1-CPU tester pod sends on a 2-core machine, so the DUT, not the tester, is what is measured. Everything is torn down at the end, whatever happened (KEEP=1 keeps it).
# Unlike the demo, linerate is installed the way a real cluster installs it: both images and the chart are
# pushed to a registry on the loopback (hack/registry.sh, make push), the chart is installed from oci://, and
# the node's containerd pulls the images from there by name; nothing is imported
# (TestImagesArePulledByNameFromTheRegistry).
#
#   E2E_STATE=/var/tmp/linerate-e2e   E2E_DUT_RATE=5mbit   E2E_RUN=regexp (go test -run)   KEEP=1
#   E2E_ARTIFACTS=DIR   where a failed run's logs, events and objects go (default under /var/tmp/linerate-e2e-artifacts)
#   E2E_REGISTRY_ADDR=127.0.0.1:25000   the registry's address
set -euo pipefail
export LR_STATE=${E2E_STATE:-/var/tmp/linerate-e2e}
export LR_DUT=${E2E_DUT_NAME:-lre2e}
export LR_REGISTRY_ADDR=${E2E_REGISTRY_ADDR:-127.0.0.1:25000}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib/bringup.sh
. "$here/lib/bringup.sh"
rate=${E2E_DUT_RATE:-5mbit}

lr_require_root
mkdir -p "$LR_STATE"
# A failed run keeps its logs, events and objects in E2E_ARTIFACTS; the teardown must leave the machine as it
# was (lr_assert_clean), or the run fails.
artifacts=${E2E_ARTIFACTS:-/var/tmp/linerate-e2e-artifacts/$(date -u +%Y%m%dT%H%M%SZ)}
teardown() {
	rc=$?
	if [ "$rc" != 0 ]; then
		lr_artifacts "$artifacts"
		cp "$LR_STATE/registry/registry.log" "$LR_STATE/push.log" "$artifacts/" 2>/dev/null || true
	fi
	if [ "${KEEP:-0}" = 1 ]; then
		echo "KEEP=1: left up; remove with: E2E_STATE=$LR_STATE bash hack/e2e.sh --down" >&2
	else
		lr_registry_down
		lr_teardown
		lr_assert_clean || rc=1
	fi
	exit $rc
}
if [ "${1:-}" = --down ]; then
	lr_registry_down
	lr_teardown
	exit 0
fi
trap teardown EXIT
trap 'exit 130' INT TERM

lr_deps
lr_images
lr_registry_up
lr_push
# Pushed, the tarballs leave $LR_STATE/images, which lr_cluster_up imports from: the node has to pull linerate
# from the registry. The registry test compares their digests with what the node pulled.
rm -rf "$LR_STATE/pushed-images"
mv "$LR_STATE/images" "$LR_STATE/pushed-images"
PLAIN_HTTP_REGISTRIES=$LR_REGISTRY_ADDR lr_cluster_up
lr_operator_install_from_registry
LR_DUT_ARGS="--rate $rate" lr_dut_up router
bash "$LR_ROOT/hack/dut/check.sh" "$LR_DUT" >/dev/null || lr_die "the DUT does not forward"
lr_nads

# tbf's rate in bit/s, for the test's known truth (tc syntax: 20mbit, 500kbit, 1gbit).
bps=$(echo "$rate" | awk '{ v = $0 + 0; u = tolower($0); sub(/^[0-9.]+/, "", u)
	m = (u == "gbit") ? 1e9 : (u == "mbit") ? 1e6 : (u == "kbit") ? 1e3 : (u == "bit" || u == "") ? 1 : -1
	if (m < 0) exit 1; printf "%d", v * m }') || lr_die "E2E_DUT_RATE: want e.g. 20mbit"

# the router's cgroup (empty: the kernel forwards), whose CPU the tests read (spec.dut.cpu)
# shellcheck disable=SC2016 # $1 and $2 are the inner shell's
dut_cgroup=$(bash -c '. "$1" && dut_cgroup "$2"' sh "$LR_ROOT/hack/dut/lib.sh" "$LR_DUT")
lr_log "go test -tags e2e ./test/e2e/ -v"
cd "$LR_ROOT"
KUBECONFIG=$LR_STATE/cluster/kubeconfig \
	E2E_KUBECTL=$(command -v kubectl) \
	E2E_TEST_YAML=$LR_ROOT/config/samples/throughput-test-demo.yaml \
	E2E_NAMESPACE=$LR_TEST_NS \
	E2E_OPERATOR_NAMESPACE=$LR_NS \
	E2E_HELM_RELEASE=$LR_RELEASE \
	E2E_DUT_TBF_BPS=$bps \
	E2E_DUT_PORTS="$LR_WEST_IF,$LR_EAST_IF" \
	E2E_DUT_CGROUP="$dut_cgroup" \
	E2E_REGISTRY=$LR_REGISTRY \
	E2E_IMAGE_TAG=$LR_IMAGE_TAG \
	E2E_PUSHED=$LR_STATE/pushed.txt \
	E2E_PUSHED_IMAGES=$LR_STATE/pushed-images \
	E2E_REGISTRY_LOG=$LR_STATE/registry/registry.log \
	E2E_CRANE=$LR_ROOT/bin/crane \
	E2E_HELM=$(command -v helm) \
	E2E_CTR=$(command -v ctr) \
	E2E_CONTAINERD_ADDRESS=$LR_STATE/cluster/containerd/containerd.sock \
	go test -tags e2e -count=1 -timeout 60m ./test/e2e/ -v ${E2E_RUN:+-run "$E2E_RUN"}
lr_log "e2e passed"
