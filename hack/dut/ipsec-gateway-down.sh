#!/usr/bin/env bash
# ipsec-gateway-down.sh NAME — removes what ipsec-gateway-up.sh NAME created: its two charons (by the PIDs
# it recorded), its namespaces and veths, its state directory. Idempotent.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
name=${1:?usage: ipsec-gateway-down.sh NAME}
dut_check_name "$name"
dut_teardown "$name"
