# shellcheck shell=bash
# /run/netns, the directory of named network namespaces, is special: `ip netns add` mounts it on itself
# (shared propagation) and bind-mounts each namespace onto a file in it. `rm -rf` of it while a namespace is
# still mounted below fails half-way ("Device or resource busy") and leaves the directory unusable for every
# later `ip` call ("Peer netns reference is invalid"). A teardown that made the directory removes it only when
# no namespace is left in it, by unmounting it from itself first. Sourced by hack/cluster-down.sh and
# hack/lib/bringup.sh.

# lr_remove_netns_dir_if_empty: removes /run/netns when no namespace is left in it; says so otherwise.
lr_remove_netns_dir_if_empty() {
	local d=/run/netns
	[ -d "$d" ] || return 0
	local left
	left=$(find "$d" -mindepth 1 -maxdepth 1 -printf '%f ' 2>/dev/null)
	if [ -n "$left" ]; then
		printf 'netns-dir: %s still holds %s: left in place\n' "$d" "$left" >&2
		return 0
	fi
	# it may be mounted on itself more than once (each `ip netns add` that found it unshared)
	while mountpoint -q "$d"; do umount "$d" 2>/dev/null || umount -l "$d" || break; done
	rmdir "$d"
}
