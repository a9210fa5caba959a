#!/usr/bin/env bash
# make demo-down: removes what hack/demo.sh brought up — the cluster first (its pods hand the tester ports
# back to the host), then the DUT, then the state directory. Idempotent.
#   DEMO_STATE=/var/tmp/linerate-demo
set -euo pipefail
export LR_STATE=${DEMO_STATE:-/var/tmp/linerate-demo}
export LR_DUT=${DEMO_DUT_NAME:-lrdemo}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib/bringup.sh
. "$here/lib/bringup.sh"
lr_require_root
lr_teardown
# The DUT's own state (hack/dut) outlives a lost $LR_STATE: remove it by name too (idempotent).
bash "$LR_ROOT/hack/dut/ipsec-gateway-down.sh" "$LR_DUT"
bash "$LR_ROOT/hack/dut/router-down.sh" "$LR_DUT"
lr_assert_clean
