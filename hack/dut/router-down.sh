#!/usr/bin/env bash
# router-down.sh NAME — removes the DUT router-up.sh NAME created. Idempotent.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
dut_teardown "${1:?usage: router-down.sh NAME}"
