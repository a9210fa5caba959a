# shellcheck shell=bash
# Shared helpers for the devices under test (DUTs) in network namespaces. Source it; it defines functions
# only. Every DUT has a NAME (at most 10 characters: it prefixes interface names, which the kernel limits to
# 15) and a state directory that records what it created, so that the matching -down script removes
# exactly that — its namespaces, its veths and the PIDs it started — and nothing else.
#
# Topology shared by every DUT here (RFC 2544 Appendix C addresses, as the TrafficTest defaults):
#
#   NAME-w (root ns, tester west)  --  west 198.18.1.1/24 [ DUT ] east 198.19.1.1/24  --  NAME-e (root ns, tester east)
#
# The tester-side ends NAME-w / NAME-e stay in the root namespace without addresses: a tester drives them
# with af_packet (`linerate run`), or Multus' host-device plugin moves them into a tester pod.

# Not under /run: each charon gets its own /run, which would hide it.
DUT_STATE_ROOT=${DUT_STATE_ROOT:-/var/tmp/linerate-dut}
DUT_WEST_GW=${DUT_WEST_GW:-198.18.1.1}
DUT_EAST_GW=${DUT_EAST_GW:-198.19.1.1}
DUT_WEST_TESTER=${DUT_WEST_TESTER:-198.18.1.2}
DUT_EAST_TESTER=${DUT_EAST_TESTER:-198.19.1.2}

dut_log() { echo "dut: $*" >&2; }
dut_die() { echo "dut: error: $*" >&2; exit 1; }

dut_check_name() {
	[[ $1 =~ ^[a-z][a-z0-9]{0,9}$ ]] || dut_die "name '$1': want 1-10 characters [a-z0-9], starting with a letter"
}

dut_state_dir() { echo "$DUT_STATE_ROOT/$1"; }

# dut_cgroup NAME: the cgroup the DUT's processes run in, as /proc/<pid>/cgroup names it: a TrafficTest's
# spec.dut.cpu.cgroup reads their CPU time there (the demo's sample names /linerate-dut/lrdemo).
dut_cgroup() { echo "/linerate-dut/$1"; }

# dut_cgroup_dirs NAME: its directories, one per hierarchy that accounts CPU time (v2: one; v1: cpu and
# cpuacct, which may be one mount).
dut_cgroup_dirs() {
	local cg
	cg=$(dut_cgroup "$1")
	if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
		echo "/sys/fs/cgroup$cg"
	else
		echo "/sys/fs/cgroup/cpu$cg /sys/fs/cgroup/cpuacct$cg"
	fi
}

# dut_cgroup_make DIR NAME: make the DUT's cgroup (idempotent) and record it for teardown; prints the
# cgroup.procs files a process writes its PID to, to join it.
dut_cgroup_make() {
	local dir=$1 name=$2 d procs=""
	for d in $(dut_cgroup_dirs "$name"); do
		mkdir -p "$d" || dut_die "cannot make the DUT's cgroup $d"
		grep -qxF "$d" "$dir/cgroups" 2>/dev/null || echo "$d" >>"$dir/cgroups"
		procs="$procs $d/cgroup.procs"
	done
	echo "$procs"
}

# dut_netns_add DIR NS: create a namespace and record it (idempotent).
dut_netns_add() {
	local dir=$1 ns=$2
	ip netns list | grep -qw "^$ns" || ip netns add "$ns"
	grep -qx "$ns" "$dir/netns" 2>/dev/null || echo "$ns" >>"$dir/netns"
	ip -n "$ns" link set lo up
	# A router: forward, no reverse-path filtering (the tester's flows may use any source), and no IPv6
	# chatter (router solicitations, DAD) that a tester would count as unexpected frames.
	ip netns exec "$ns" sysctl -qw net.ipv4.ip_forward=1 net.ipv4.conf.all.rp_filter=0 \
		net.ipv4.conf.default.rp_filter=0 net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
}

# dut_tester_port DIR NS HOSTIF NSIF ADDR: a veth whose HOSTIF end stays in the root namespace for the tester
# and whose NSIF end is the DUT's port in NS with ADDR (idempotent: HOSTIF may meanwhile be in a tester pod,
# so the DUT's end says whether the pair exists). HOSTIF's MAC is recorded in DIR for the neighbour entry.
dut_tester_port() {
	local dir=$1 ns=$2 hostif=$3 nsif=$4 addr=$5
	if ! ip -n "$ns" link show "$nsif" >/dev/null 2>&1; then
		ip link add "$hostif" type veth peer name "$nsif" netns "$ns"
	fi
	grep -qx "$hostif" "$dir/links" 2>/dev/null || echo "$hostif" >>"$dir/links"
	if ip link show "$hostif" >/dev/null 2>&1; then
		cat "/sys/class/net/$hostif/address" >"$dir/$hostif.mac"
		sysctl -qw "net.ipv6.conf.$hostif.disable_ipv6=1" 2>/dev/null || true
		ip link set "$hostif" up
	fi
	ip -n "$ns" link set "$nsif" up
	ip -n "$ns" addr replace "$addr" dev "$nsif"
}

# dut_link_netns DIR NSA IFA ADDRA NSB IFB ADDRB: a veth between two namespaces (idempotent).
dut_link_netns() {
	local dir=$1 nsa=$2 ifa=$3 addra=$4 nsb=$5 ifb=$6 addrb=$7
	if ! ip -n "$nsa" link show "$ifa" >/dev/null 2>&1; then
		ip -n "$nsa" link add "$ifa" type veth peer name "$ifb" netns "$nsb"
	fi
	ip -n "$nsa" link set "$ifa" up
	ip -n "$nsb" link set "$ifb" up
	ip -n "$nsa" addr replace "$addra" dev "$ifa"
	ip -n "$nsb" addr replace "$addrb" dev "$ifb"
}

# dut_tester_neighbour DIR NS NSIF IP HOSTIF: a permanent neighbour entry for the tester's address, so the
# DUT forwards without waiting for ARP answers the tester may not give while it is busy sending. The
# tester's MAC is HOSTIF's (recorded by dut_tester_port): af_packet uses the interface's MAC, and
# host-device keeps it in the pod.
dut_tester_neighbour() {
	local dir=$1 ns=$2 nsif=$3 ip=$4 hostif=$5
	ip -n "$ns" neigh replace "$ip" lladdr "$(cat "$dir/$hostif.mac")" dev "$nsif" nud permanent
}

# dut_record_pid DIR PID: remember a process this DUT started, with its start time, so that teardown never
# signals an unrelated process that later got the same PID.
dut_pid_start() { awk '{print $22}' "/proc/$1/stat" 2>/dev/null; }
dut_record_pid() { echo "$2 $(dut_pid_start "$2")" >>"$1/pids"; }
# dut_ours PID START: the process still is the one recorded.
dut_ours() { [ -n "$1" ] && [ "$(dut_pid_start "$1")" = "$2" ]; }

# dut_teardown NAME: undo everything recorded in the DUT's state directory (idempotent). Only the PIDs
# recorded there are signalled, and only while they are still the processes recorded (same start time).
dut_teardown() {
	local name=$1 dir pid ns l
	dir=$(dut_state_dir "$name")
	[ -d "$dir" ] || return 0
	if [ -f "$dir/pids" ]; then
		local start alive
		while read -r pid start; do
			dut_ours "$pid" "$start" && kill "$pid" 2>/dev/null || true
		done <"$dir/pids"
		for _ in $(seq 50); do
			alive=0
			while read -r pid start; do
				dut_ours "$pid" "$start" && alive=1
			done <"$dir/pids"
			[ $alive = 0 ] && break
			sleep 0.1
		done
		while read -r pid start; do
			dut_ours "$pid" "$start" && kill -9 "$pid" 2>/dev/null || true
		done <"$dir/pids"
	fi
	# Deleting a namespace deletes the veths in it and so their peers, wherever those are (root namespace
	# or a tester pod's).
	if [ -f "$dir/netns" ]; then
		while read -r ns; do
			[ -n "$ns" ] && ip netns del "$ns" 2>/dev/null || true
		done <"$dir/netns"
	fi
	if [ -f "$dir/links" ]; then
		while read -r l; do
			[ -n "$l" ] && ip link del "$l" 2>/dev/null || true
		done <"$dir/links"
	fi
	# The DUT's cgroups, once its processes are gone (the kernel refuses to remove one that has any), and
	# their parent when it holds no other DUT's.
	if [ -f "$dir/cgroups" ]; then
		local cg
		while read -r cg; do
			[ -n "$cg" ] || continue
			for _ in $(seq 20); do
				rmdir "$cg" 2>/dev/null && break
				[ -d "$cg" ] || break
				sleep 0.1
			done
			rmdir "$(dirname "$cg")" 2>/dev/null || true
		done <"$dir/cgroups"
	fi
	# The mounts were private to the gateways' mount namespaces; nothing is mounted here.
	rm -rf "$dir"
}

# dut_print_ports NAME: what the up scripts print on stdout — the tester-side interfaces.
dut_print_ports() {
	echo "west=$1-w east=$1-e"
}

# dut_router_up NAME [RATE] [DROP_ONE_IN]: a known-truth DUT — one forwarding namespace NAME-r routing
# between the tester ports. RATE (tc syntax, e.g. 20mbit) shapes each direction with tbf on the egress port,
# so the DUT's throughput is that many bit/s of IP+Ethernet header bytes; DROP_ONE_IN N drops exactly every
# Nth forwarded packet (nftables numgen), a known loss ratio of 1/N. Idempotent. Prints the tester ports.
dut_router_up() {
	local name=$1 rate=${2:-} drop=${3:-} dir ns
	dut_check_name "$name"
	dir=$(dut_state_dir "$name")
	mkdir -p "$dir"
	echo router >"$dir/kind"
	# the kernel forwards, in no process: the DUT's cgroup is empty, and a TrafficTest that reads it
	# (spec.dut.cpu) finds 0 cores busy
	dut_cgroup_make "$dir" "$name" >/dev/null
	ns=$name-r
	dut_netns_add "$dir" "$ns"
	dut_tester_port "$dir" "$ns" "$name-w" west "$DUT_WEST_GW/24"
	dut_tester_port "$dir" "$ns" "$name-e" east "$DUT_EAST_GW/24"
	dut_tester_neighbour "$dir" "$ns" west "$DUT_WEST_TESTER" "$name-w"
	dut_tester_neighbour "$dir" "$ns" east "$DUT_EAST_TESTER" "$name-e"
	local ifc
	for ifc in west east; do
		if [ -n "$rate" ]; then
			# A small bucket (a few jumbo frames) keeps the rate exact over any interval; a 100 ms queue absorbs
			# the bursts of a tester that the kernel deschedules (a CPU-limited pod catches up in bursts) without
			# loss. What passes above the rate is at most the queue: 2 % over a 5 s trial at 20 Mbit/s.
			ip netns exec "$ns" tc qdisc replace dev "$ifc" root tbf rate "$rate" burst 8kb latency 100ms
		else
			ip netns exec "$ns" tc qdisc del dev "$ifc" root 2>/dev/null || true
		fi
	done
	ip netns exec "$ns" nft delete table inet dut 2>/dev/null || true
	if [ -n "$drop" ]; then
		ip netns exec "$ns" nft -f - <<-NFT
			table inet dut {
			  chain forward {
			    type filter hook forward priority 0; policy accept;
			    numgen inc mod $drop == 0 counter drop
			  }
			}
		NFT
	fi
	echo "router${rate:+ tbf=$rate}${drop:+ drop=1/$drop}" >"$dir/desc"
	dut_log "router DUT $name is up (namespace $ns${rate:+, tbf $rate}${drop:+, drops 1 in $drop})"
	dut_print_ports "$name"
}
