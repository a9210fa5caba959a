#!/usr/bin/env bash
# ipsec-gateway-up.sh NAME — a real IPsec gateway pair as the device under test:
#
#   NAME-w ── west 198.18.1.1/24 [gw-a] xlink 192.0.2.1 ══ IKEv2/ESP-in-UDP ══ 192.0.2.2 xlink [gw-b] east 198.19.1.1/24 ── NAME-e
#
# Each gateway is a network namespace (NAME-gwa, NAME-gwb) running its own strongSwan charon with the
# kernel-libipsec plugin: ESP is done in userspace over a TUN device and always UDP-encapsulated (port
# 4500), because this kernel may have no ESP. IKEv2 with a pre-shared key; AES-256-GCM for ESP (override
# with DUT_ESP_PROPOSAL). Traffic between 198.18.0.0/16 and 198.19.0.0/16 goes through the tunnel; the
# tunnel's TUN device has libipsec's fixed MTU of 1400 (5.9.8 has no setting for it, and its read buffer is
# that size, so it must not be raised behind its back): 1418 B frames (1400 B IP, the largest size of the
# "Spirent IPsec" IMIX) cross whole, larger ones are fragmented — as ESP overhead does on a real gateway. Expect some 5-10 kpps: slow, but real encryption.
#
# Each charon has its own strongswan.conf (STRONGSWAN_CONF), vici socket and log in the state directory,
# and its own /run (a bind mount inside the mount namespace `ip netns exec` gives it) for its hard-coded
# /var/run/charon.pid, so several gateways — and the host's own strongSwan — never collide.
#
# DUT_REKEY_TIME=DURATION rekeys the CHILD_SA that often (strongSwan's rekey_time; default 1h).
# DUT_CPUS=LIST runs both charons on those CPUs only (taskset; default: any), DUT_NICE=N at that nice value
# (default 0). The demo keeps them off the tester's CPU (hack/lib/bringup.sh lr_dut_up): a tester that
# sleeps until each frame is due must be run when it wakes, not after a gateway at its limit has used its
# slice, as on a testbed where tester and DUT are two machines. What the gateways forward is then what they
# do with one CPU.
#
# Prints the tester-side interfaces ("west=NAME-w east=NAME-e") on stdout. Idempotent: running it again
# checks and reuses what is there. ipsec-gateway-down.sh NAME removes it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

name=${1:?usage: ipsec-gateway-up.sh NAME}
dut_check_name "$name"
[ "$(id -u)" = 0 ] || dut_die "run as root (network namespaces)"
bash "$here/install-deps.sh"

esp=${DUT_ESP_PROPOSAL:-aes256gcm16}
ike=${DUT_IKE_PROPOSAL:-aes256gcm16-prfsha256-ecp256}
dir=$(dut_state_dir "$name")
mkdir -p "$dir"
cgroup_procs=$(dut_cgroup_make "$dir" "$name")
echo ipsec >"$dir/kind"
gwa=$name-gwa gwb=$name-gwb

dut_netns_add "$dir" "$gwa"
dut_netns_add "$dir" "$gwb"
dut_tester_port "$dir" "$gwa" "$name-w" west "$DUT_WEST_GW/24"
dut_tester_port "$dir" "$gwb" "$name-e" east "$DUT_EAST_GW/24"
dut_link_netns "$dir" "$gwa" xlink 192.0.2.1/30 "$gwb" xlink 192.0.2.2/30
dut_tester_neighbour "$dir" "$gwa" west "$DUT_WEST_TESTER" "$name-w"
dut_tester_neighbour "$dir" "$gwb" east "$DUT_EAST_TESTER" "$name-e"

psk=$(head -c 24 /dev/urandom | base64)
[ -f "$dir/psk" ] && psk=$(cat "$dir/psk")
echo "$psk" >"$dir/psk"
chmod 600 "$dir/psk"

# gateway ROLE NS LOCAL REMOTE LOCAL_ID REMOTE_ID LOCAL_TS REMOTE_TS START_ACTION
gateway() {
	local role=$1 ns=$2 laddr=$3 raddr=$4 lid=$5 rid=$6 lts=$7 rts=$8 start=$9
	local g=$dir/$role
	mkdir -p "$g/run" "$g/swanctl"
	cat >"$g/strongswan.conf" <<-CONF
		# $role of DUT $name: written by hack/dut/ipsec-gateway-up.sh
		charon {
		  # Only what this gateway needs; kernel-libipsec is the userspace ESP datapath, kdf is required
		  # by the openssl plugin's PRF+ in 5.9.
		  load_modular = no
		  load = random nonce openssl aes sha1 sha2 hmac gcm kdf pem pkcs1 x509 pubkey kernel-libipsec kernel-netlink socket-default vici
		  install_virtual_ip = no
		  retransmit_tries = 3
		  filelog {
		    log {
		      path = $g/charon.log
		      time_format = %H:%M:%S
		      # milliseconds: a timeline test lines the tester's outages up with these lines
		      time_add_ms = yes
		      default = 1
		      flush_line = yes
		    }
		  }
		  plugins {
		    vici {
		      socket = unix://$g/charon.vici
		    }
		  }
		}
	CONF
	cat >"$g/swanctl/swanctl.conf" <<-CONF
		connections {
		  dut {
		    version = 2
		    local_addrs = $laddr
		    remote_addrs = $raddr
		    encap = yes
		    proposals = $ike
		    dpd_delay = 10s
		    local {
		      auth = psk
		      id = $lid
		    }
		    remote {
		      auth = psk
		      id = $rid
		    }
		    children {
		      net {
		        local_ts = $lts
		        remote_ts = $rts
		        esp_proposals = $esp
		        start_action = $start
		        dpd_action = restart
		        # A benchmark must not be disturbed by a rekey (and libipsec rekeys are slow): one hour
		        # is far longer than any trial, and rekeying is still allowed. A timeline test that
		        # looks for what a rekey does sets DUT_REKEY_TIME short (e.g. 10s).
		        rekey_time = ${DUT_REKEY_TIME:-1h}
		      }
		    }
		  }
		}
		secrets {
		  ike-dut {
		    id-a = gw-a
		    id-b = gw-b
		    secret = "$psk"
		  }
		}
	CONF
	chmod 600 "$g/swanctl/swanctl.conf"
	local pidf=$g/run/charon.pid
	if [ -f "$pidf" ] && grep -q "^$(cat "$pidf") " "$dir/pids" 2>/dev/null && kill -0 "$(cat "$pidf")" 2>/dev/null; then
		dut_log "$role: charon already runs (pid $(cat "$pidf"))"
	else
		rm -f "$pidf" "$g/charon.vici"
		# `ip netns exec` runs the command in a new mount namespace, so this bind mount of /run is seen by
		# this charon only; exec keeps the PID, which is recorded for teardown. It joins the DUT's cgroup
		# first, outside `ip netns exec` (whose /sys has no cgroup file system): its CPU time is what
		# spec.dut.cpu.cgroup reads.
		# shellcheck disable=SC2016 # $1 is the inner sh's argument, not ours
		STRONGSWAN_CONF=$g/strongswan.conf setsid sh -c 'for p in $1; do echo $$ >"$p" || exit 1; done; shift; exec "$@"' sh "$cgroup_procs" \
			taskset -c "${DUT_CPUS:-0-$(($(nproc --all) - 1))}" nice -n "${DUT_NICE:-0}" ip netns exec "$ns" \
			sh -c 'mount --bind "$1" /run && exec /usr/lib/ipsec/charon' sh "$g/run" \
			</dev/null >>"$g/charon.out" 2>&1 &
		local pid=$!
		sleep 0.2
		dut_record_pid "$dir" "$pid"
	fi
	local i
	for i in $(seq 100); do
		[ -S "$g/charon.vici" ] && break
		sleep 0.1
	done
	[ -S "$g/charon.vici" ] || { tail -n 20 "$g/charon.log" "$g/charon.out" >&2 || true; dut_die "$role: charon did not start"; }
	swanctl --load-all --noprompt --uri "unix://$g/charon.vici" --file "$g/swanctl/swanctl.conf" >"$g/swanctl.out" 2>&1 ||
		{ cat "$g/swanctl.out" >&2; dut_die "$role: swanctl --load-all failed"; }
}

# gw-b answers, gw-a initiates (and would bring the tunnel back if it were torn down).
gateway gw-b "$gwb" 192.0.2.2 192.0.2.1 gw-b gw-a 198.19.0.0/16 198.18.0.0/16 trap
gateway gw-a "$gwa" 192.0.2.1 192.0.2.2 gw-a gw-b 198.18.0.0/16 198.19.0.0/16 start

# Wait for the CHILD_SA on both sides: a benchmark must not start while IKE still negotiates.
for i in $(seq 150); do
	a=$(swanctl --list-sas --uri "unix://$dir/gw-a/charon.vici" 2>/dev/null | grep -c "INSTALLED" || true)
	b=$(swanctl --list-sas --uri "unix://$dir/gw-b/charon.vici" 2>/dev/null | grep -c "INSTALLED" || true)
	[ "$a" -ge 1 ] && [ "$b" -ge 1 ] && break
	if [ "$i" = 50 ] || [ "$i" = 100 ]; then
		swanctl --initiate --child net --timeout 5 --uri "unix://$dir/gw-a/charon.vici" >/dev/null 2>&1 || true
	fi
	sleep 0.2
done
[ "$a" -ge 1 ] && [ "$b" -ge 1 ] || { tail -30 "$dir/gw-a/charon.log" >&2; dut_die "the IPsec tunnel did not come up"; }
dut_log "IPsec gateway pair $name is up: $esp over UDP 4500 between $gwa and $gwb (state in $dir)"
dut_print_ports "$name"
