# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# roce.sh - helpers for the guest scripts that work on netdev-bound
# (RoCE) devices, which source it from /krwq/lib (scripts/vm puts it there).
#   wait_for SECONDS CMD...   until CMD succeeds, at most SECONDS; status 1
#                             if it never did
#   gid_index DEV ADDR        the index of DEV's RoCE v2 GID for ADDR: an
#                             IPv4 address, or an IPv6 one written out in
#                             full as sysfs shows it; status 1 if none
#   stat_of DEV NAME          counter NAME of DEV's port 1 (rdma
#                             statistic), 0 if it has none
#   has_stat DEV NAME         DEV's port 1 has a counter NAME
#   in_ns NS CMD...           CMD in network namespace NS, "-" being the
#                             initial one
#   ns_exec NS CMD...         in_ns in place of the shell: started in the
#                             background, $! is CMD's process
#   listening_in NS PORT      a TCP socket listens on PORT in NS
#   cm_listening PORT [DEV]   an rdma_cm ID listens on PORT, on DEV if
#                             given (the RDMA core lists every network
#                             namespace's: its namespace mode is shared;
#                             a wildcard listener is listed per device)
#   perftest_json FILE KEY    a figure from perftest's --out_json report,
#                             whose lines read "KEY: VALUE,"; empty if none
#   each_fault FUNCTION       FUNCTION FAULT for each link fault that the
#                             wire and two-host rounds put on with netem,
#                             one at a time: 3% of packets lost, 1%
#                             duplicated, 25% reordered (sent ahead of the
#                             others, which wait 1 ms), 0.5% corrupted;
#                             FAULT is netem's words for it
#   wire_topology             the wire's namespaces (wire.sh draws them):
#                             kwa and kwb, veth vrx (here) - vka (kwa) with
#                             198.18.0.1-2/24 and fd00:18::1-2/64, veth vab
#                             (kwa) - vba (kwb) with 198.18.1.1-2/24 and
#                             fd00:19::1-2/64, all up
#   wire_netem FAULT|none     netem's FAULT (words) on the four ends of
#                             wire_topology's veths, or nothing ("none")

each_fault() {
	for ef_fault in "loss 3%" "duplicate 1%" "delay 1ms reorder 25% 50%" "corrupt 0.5%"; do
		"$1" "$ef_fault"
	done
}

wait_for() {
	wf_end=$(($(cut -d. -f1 /proc/uptime) + $1))
	shift
	until "$@" > /dev/null 2>&1; do
		# a deadline, not a count of tries: CMD's own time counts too
		[ "$(cut -d. -f1 /proc/uptime)" -lt $wf_end ] || return 1
		sleep 0.1
	done
}

gid_index() {
	case $2 in
	*.*) gi_want=$(echo "$2" | awk -F. '{ printf "0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x", $1, $2, $3, $4 }') ;;
	*) gi_want=$2 ;;
	esac
	gi_d=/sys/class/infiniband/$1/ports/1
	# In index order with the shell's own read, stopping at the first
	# match: the table has 128 entries (krwq) or 1024 (rxe), and a cat
	# of each in the glob's order (where 2 comes after 100-199 and
	# 1000-1023) took seconds per look-up under TCG.
	gi_i=0
	while [ -e "$gi_d/gids/$gi_i" ]; do
		gi_g=
		read -r gi_g 2> /dev/null < "$gi_d/gids/$gi_i"
		if [ "$gi_g" = "$gi_want" ]; then
			gi_t=
			read -r gi_t 2> /dev/null < "$gi_d/gid_attrs/types/$gi_i"
			[ "$gi_t" = "RoCE v2" ] && echo "$gi_i" && return 0
		fi
		gi_i=$((gi_i + 1))
	done
	return 1
}

has_stat() {
	rdma statistic show link "$1/1" | tr ' ' '\n' | grep -qx "$2"
}

stat_of() {
	so_v=$(rdma statistic show link "$1/1" | tr ' ' '\n' | grep -A1 -x "$2" | tail -n 1)
	case $so_v in
	'' | *[!0-9]*) echo 0 ;;
	*) echo "$so_v" ;;
	esac
}

in_ns() {
	in_ns_n=$1
	shift
	if [ "$in_ns_n" = - ]; then
		"$@"
	else
		ip netns exec "$in_ns_n" "$@"
	fi
}

cm_listening() {
	rdma resource show cm_id 2> /dev/null | grep ' state LISTEN ' |
		grep " src-addr [^ ]*:$1 " | grep -q "^${2:+link $2/}"
}

ns_exec() {
	ns_exec_n=$1
	shift
	[ "$ns_exec_n" = - ] && exec "$@"
	exec ip netns exec "$ns_exec_n" "$@"
}

listening_in() {
	in_ns "$1" sh -c ". /krwq/lib/pair.sh; listening $2"
}

perftest_json() {
	sed -n "s/^$2: *\([0-9.eE+-]*\),*\$/\1/p" "$1" 2> /dev/null | head -n 1
}

wire_topology() {
	ip netns add kwa && ip netns add kwb &&
		ip -n kwa link set lo up && ip -n kwb link set lo up &&
		ip link add vrx type veth peer name vka netns kwa &&
		ip -n kwa link add vab type veth peer name vba netns kwb &&
		ip addr add 198.18.0.1/24 dev vrx &&
		ip addr add fd00:18::1/64 dev vrx nodad &&
		ip -n kwa addr add 198.18.0.2/24 dev vka &&
		ip -n kwa addr add fd00:18::2/64 dev vka nodad &&
		ip -n kwa addr add 198.18.1.1/24 dev vab &&
		ip -n kwb addr add 198.18.1.2/24 dev vba &&
		ip -n kwa addr add fd00:19::1/64 dev vab nodad &&
		ip -n kwb addr add fd00:19::2/64 dev vba nodad &&
		ip link set vrx up && ip -n kwa link set vka up &&
		ip -n kwa link set vab up && ip -n kwb link set vba up
}

wire_netem() {
	for wn_end in -:vrx kwa:vka kwa:vab kwb:vba; do
		wn_ns=${wn_end%%:*} wn_dev=${wn_end#*:}
		[ "$wn_ns" = - ] && wn_ns=
		tc ${wn_ns:+-n $wn_ns} qdisc del dev "$wn_dev" root 2> /dev/null
		[ "$1" = none ] && continue
		# shellcheck disable=SC2086 # FAULT is words
		tc ${wn_ns:+-n $wn_ns} qdisc add dev "$wn_dev" root netem $1 || return 1
	done
}
