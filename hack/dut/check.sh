#!/usr/bin/env bash
# check.sh NAME — proves a DUT from this folder forwards between its tester ports, and for the IPsec pair
# that it really encrypts: the tester ports are lent to two temporary namespaces with the tester's
# addresses, pings cross the DUT (small, and 1472 B that must fragment to fit the tunnel), tcpdump shows
# the ESP-in-UDP packets on the link between the gateways, and swanctl shows the SA's packet counters.
# The ports go back to the root namespace afterwards, even on failure. Exit status 0 only if all passed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
name=${1:?usage: check.sh NAME}
dut_check_name "$name"
dir=$(dut_state_dir "$name")
[ -f "$dir/kind" ] || dut_die "no DUT named $name (no $dir/kind)"
kind=$(cat "$dir/kind")
bash "$here/install-deps.sh"
tw=chk$$w te=chk$$e
pcap=$(mktemp) tcpdump_pid=
cleanup() {
	[ -n "$tcpdump_pid" ] && kill "$tcpdump_pid" 2>/dev/null || true
	ip -n "$tw" link set "$name-w" netns 1 2>/dev/null || true
	ip -n "$te" link set "$name-e" netns 1 2>/dev/null || true
	ip netns del "$tw" 2>/dev/null || true
	ip netns del "$te" 2>/dev/null || true
	ip link set "$name-w" up 2>/dev/null || true
	ip link set "$name-e" up 2>/dev/null || true
	rm -f "$pcap"
}
trap cleanup EXIT
for s in w e; do
	ns=chk$$$s
	ip netns add "$ns"
	ip link set "$name-$s" netns "$ns"
	ip -n "$ns" link set "$name-$s" up
done
ip -n "$tw" addr add "$DUT_WEST_TESTER/24" dev "$name-w"
ip -n "$tw" route add default via "$DUT_WEST_GW"
ip -n "$te" addr add "$DUT_EAST_TESTER/24" dev "$name-e"
ip -n "$te" route add default via "$DUT_EAST_GW"

if [ "$kind" = ipsec ]; then
	ip netns exec "$name-gwa" tcpdump -ni xlink -U -w "$pcap" udp port 4500 2>/dev/null &
	tcpdump_pid=$!
	sleep 1
fi
echo "== ping $DUT_WEST_TESTER -> $DUT_EAST_TESTER through $kind DUT $name"
ip netns exec "$tw" ping -c 3 -i 0.2 -W 2 "$DUT_EAST_TESTER"
echo "== 1500 B IP packets (fragmented where the DUT's MTU is smaller)"
ip netns exec "$tw" ping -c 2 -i 0.2 -W 2 -s 1472 -M dont "$DUT_EAST_TESTER" | tail -2
if [ "$kind" = ipsec ]; then
	sleep 0.5
	kill "$tcpdump_pid"
	wait "$tcpdump_pid" 2>/dev/null || true
	tcpdump_pid=
	echo "== packets on the link between the gateways (xlink in $name-gwa)"
	tcpdump -nr "$pcap" 2>/dev/null | grep -v isakmp | head -8
	esp=$(tcpdump -nr "$pcap" 2>/dev/null | grep -c "UDP-encap: ESP" || true)
	plain=$(tcpdump -nr "$pcap" 2>/dev/null | grep -c ICMP || true)
	echo "   $esp ESP-in-UDP packets, $plain plaintext ICMP packets"
	[ "$esp" -ge 10 ] && [ "$plain" = 0 ] || dut_die "the traffic between the gateways is not ESP"
	echo "== SAs (gw-a)"
	swanctl --list-sas --uri "unix://$dir/gw-a/charon.vici" 2>/dev/null
fi
echo "== $name: OK"
