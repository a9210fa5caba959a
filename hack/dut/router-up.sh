#!/usr/bin/env bash
# router-up.sh NAME [--rate RATE] [--drop-one-in N] — a fast DUT with known truth: a forwarding namespace
# between the tester ports NAME-w and NAME-e (198.18.1.1/24 and 198.19.1.1/24), optionally shaped with tbf
# (RATE in tc syntax, e.g. 20mbit, per direction) and/or dropping exactly every Nth packet with nftables.
# Prints "west=NAME-w east=NAME-e". Idempotent; router-down.sh NAME removes it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
name=${1:?usage: router-up.sh NAME [--rate RATE] [--drop-one-in N]}
shift
rate='' drop=''
while [ $# -gt 0 ]; do
	case $1 in
	--rate) rate=$2; shift 2 ;;
	--drop-one-in) drop=$2; shift 2 ;;
	*) dut_die "unknown option $1" ;;
	esac
done
[ "$(id -u)" = 0 ] || dut_die "run as root (network namespaces)"
if [ -n "$drop" ] && ! command -v nft >/dev/null; then bash "$here/install-deps.sh"; fi
dut_router_up "$name" "$rate" "$drop"
