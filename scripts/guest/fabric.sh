#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the test VM, krwq.ko loaded with num_devices=2: the fabric
# that joins krwq devices, and netdev-bound devices following their
# netdev.  One TAP line per check, then "N passed, N failed".
#  - krwq0 <-> krwq1 by LID: rdma-core's RC and UD pingpongs;
#  - krwqe1 <-> krwqe2, two netdev-bound devices on two dummy netdevs, by
#    GID: pingpongs, perftest, krwq_verbs_test and krwq_ring_test on
#    krwqe1 (GRH path);
#  - the port follows its netdev: GIDs from its addresses, MTU, state;
#  - `rdma link add/delete`, deleting the netdev, `rdma resource show`;
#  - one address in two network namespaces, and twice in one: KUnit's
#    krwq_route (/krwq/krwq_kunit_route.ko) on where address vectors
#    lead, and an rdma_cm client that must not reach another namespace.
log=/tmp/fabric.log
port=18800
# shellcheck source=tap.sh # scripts/vm puts it in /krwq/lib
. /krwq/lib/tap.sh
# shellcheck source=pair.sh
. /krwq/lib/pair.sh
# shellcheck source=roce.sh
. /krwq/lib/roce.sh
# each side of a pair may take 120 s, so that a few hung pairs cannot
# use up the boot's bound before the summary
pair_timeout=120
# what a pingpong's client and perftest's print when they end well
done_re='iters in|^ *[0-9]+ +[0-9]+ +[0-9.]+'

# port_state DEV: the state `rdma link show DEV/1` gives (ACTIVE, DOWN, ...)
port_state() {
	rdma link show "$1/1" | tr ' ' '\n' | grep -A1 -x state | tail -n 1
}

# active_mtu DEV: the port's active MTU in bytes, as ibv_devinfo has it
active_mtu() {
	ibv_devinfo -d "$1" | awk '$1 == "active_mtu:" { print $2 }'
}

# --- InfiniBand mode, across two devices
pair "$done_re" "krwq0 <-> krwq1 ibv_rc_pingpong by LID, data checked" \
	ibv_rc_pingpong -d krwq0 -n 100 -s 4096 -c -- ibv_rc_pingpong -d krwq1 -n 100 -s 4096 -c
pair "$done_re" "krwq0 <-> krwq1 ibv_ud_pingpong by LID, data checked" \
	ibv_ud_pingpong -d krwq0 -n 100 -s 1000 -c -- ibv_ud_pingpong -d krwq1 -n 100 -s 1000 -c

# --- netdev-bound devices
for i in 1 2; do
	ip link add dummy$i type dummy
	ip link set dummy$i up
	ip addr add 192.0.2.$i/24 dev dummy$i
done
rdma link add krwqe1 type krwq netdev dummy1 > $log 2>&1
report $? "rdma link add krwqe1 type krwq netdev dummy1"
rdma link add krwqe2 type krwq netdev dummy2 > $log 2>&1
report $? "rdma link add krwqe2 type krwq netdev dummy2"
! rdma link add krwqe3 type krwq netdev dummy1 > $log 2>&1
report $? "a second device on dummy1 is refused"
! rdma link add krwqe3 type krwq netdev lo > $log 2>&1
report $? "a device on lo (not Ethernet) is refused"

rdma link show krwqe1/1 > $log 2>&1
grep -q 'state ACTIVE' $log && grep -q 'netdev dummy1' $log
report $? "krwqe1: port ACTIVE, netdev dummy1"
ibv_devinfo -v -d krwqe1 > $log 2>&1
grep -q 'link_layer:.*Ethernet' $log && ! grep -qi warn $log
report $? "krwqe1 ibv_devinfo: link layer Ethernet, no provider warnings"
wait_for 10 gid_index krwqe1 192.0.2.1
report $? "krwqe1: a RoCE v2 GID for 192.0.2.1"
g1=$(gid_index krwqe1 192.0.2.1)
g2=$(gid_index krwqe2 192.0.2.2)

pair "$done_re" "krwqe1 <-> krwqe2 ibv_rc_pingpong by GID, data checked" \
	ibv_rc_pingpong -d krwqe1 -g "$g1" -n 100 -s 4096 -c -- ibv_rc_pingpong -d krwqe2 -g "$g2" -n 100 -s 4096 -c
pair "$done_re" "krwqe1 <-> krwqe2 ibv_ud_pingpong by GID, data checked" \
	ibv_ud_pingpong -d krwqe1 -g "$g1" -n 100 -s 512 -c -- ibv_ud_pingpong -d krwqe2 -g "$g2" -n 100 -s 512 -c
pair "$done_re" "krwqe1 ibv_srq_pingpong on itself by GID, data checked" \
	ibv_srq_pingpong -d krwqe1 -g "$g1" -n 50 -c -- ibv_srq_pingpong -d krwqe1 -g "$g1" -n 50 -c
pair "$done_re" "krwqe1 <-> krwqe2 ib_send_bw by GID" \
	ib_send_bw -d krwqe1 -x "$g1" -n 200 -- ib_send_bw -d krwqe2 -x "$g2" -n 200
pair "$done_re" "krwqe1 <-> krwqe2 ib_write_bw by GID" \
	ib_write_bw -d krwqe1 -x "$g1" -n 200 -- ib_write_bw -d krwqe2 -x "$g2" -n 200
pair "$done_re" "krwqe1 <-> krwqe2 ib_read_bw by GID" \
	ib_read_bw -d krwqe1 -x "$g1" -n 200 -- ib_read_bw -d krwqe2 -x "$g2" -n 200

# the project's own receive-queue checks, with GRH addressing
krwq_verbs_test -d krwqe1 -g "$g1" > $log 2>&1
grep -Eq '^[0-9]+ passed, 0 failed$' $log
report $? "krwq_verbs_test on krwqe1 (GID $g1): $(tail -n 1 $log)"

krwq_ring_test -d krwqe1 -g "$g1" > $log 2>&1
grep -Eq '^[0-9]+ passed, 0 failed$' $log
report $? "krwq_ring_test on krwqe1 (GID $g1): $(tail -n 1 $log)"

# --- the port follows dummy1
ip link set dummy1 mtu 9000
[ "$(active_mtu krwqe1)" = 4096 ]
report $? "MTU 9000 on dummy1: active MTU 4096" "$(active_mtu krwqe1)"
ip link set dummy1 mtu 1500
[ "$(active_mtu krwqe1)" = 1024 ]
report $? "MTU 1500 on dummy1: active MTU 1024" "$(active_mtu krwqe1)"
ip link set dummy1 down
[ "$(port_state krwqe1)" = DOWN ]
report $? "dummy1 down: port DOWN" "$(rdma link show krwqe1/1)"
ip link set dummy1 up
i=0
while [ "$(port_state krwqe1)" != ACTIVE ] && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
[ "$(port_state krwqe1)" = ACTIVE ]
report $? "dummy1 up: port ACTIVE" "$(rdma link show krwqe1/1)"
ip addr add 198.51.100.7/24 dev dummy1
wait_for 10 gid_index krwqe1 198.51.100.7
report $? "an address added to dummy1 becomes a GID"
ip addr del 198.51.100.7/24 dev dummy1
wait_for 10 sh -c "! grep -qx 0000:0000:0000:0000:0000:ffff:c633:6407 /sys/class/infiniband/krwqe1/ports/1/gids/*"
report $? "an address removed from dummy1 is no GID any more"

# --- what the RDMA core shows of it
rdma resource show qp link krwqe1/1 > $log 2>&1
grep -q 'lqpn 1 .*type GSI' $log
report $? "rdma resource show: krwqe1's QP1 (GSI)"
rdma resource show pd dev krwqe1 > $log 2>&1 && grep -q krwqe1 $log
report $? "rdma resource show: krwqe1's PDs"

# --- network namespaces: 203.0.113.1 on dummy dra1 (krwqn0) and on dra2
# (krwqn2) in namespace kra, and on drb1 (krwqn1) in namespace krb
ns_ip=203.0.113.1
# ns_dev NS NETDEV RDMADEV: a dummy netdev in NS holding $ns_ip, and a
# krwq device on it, made from inside NS
ns_dev() {
	ip -n "$1" link add "$2" type dummy && ip -n "$1" link set "$2" up &&
		ip -n "$1" addr add $ns_ip/24 dev "$2" &&
		ip netns exec "$1" rdma link add "$3" type krwq netdev "$2"
}
{ ip netns add kra && ip netns add krb && ip -n kra link set lo up &&
	ip -n krb link set lo up && ns_dev kra dra1 krwqn0 &&
	ns_dev krb drb1 krwqn1 && ns_dev kra dra2 krwqn2 &&
	wait_for 10 gid_index krwqn0 $ns_ip && wait_for 10 gid_index krwqn1 $ns_ip &&
	wait_for 10 gid_index krwqn2 $ns_ip; } > $log 2>&1
report $? "$ns_ip on krwqn0 and krwqn2 in namespace kra, and on krwqn1 in krb"
insmod /krwq/krwq_kunit_route.ko route_devs=krwqn0,krwqn1,krwqn2 \
	route_addr=$ns_ip > $log 2>&1
cp /sys/kernel/debug/kunit/krwq_route/results /tmp/route.ktap 2>> $log
rmmod krwq_kunit_route >> $log 2>&1
for c in rt_own_address rt_mac_picks_the_device rt_not_across_namespaces \
	rt_no_mac_prefers_the_sender; do
	grep -Eq "^ *ok [0-9]+ (- )?$c\$" /tmp/route.ktap
	report $? "KUnit krwq_route: $c" "$(grep -v '^ *ok ' /tmp/route.ktap | tail -n 20; cat $log)"
done
# rdma_cm: a server in kra; a client in krb resolves $ns_ip to its own
# krwqn1, where nobody listens, and must not reach kra's server.  The one
# holder per namespace keeps rdma_cm's choice of device plain.
rdma link delete krwqn2 > $log 2>&1 && ip -n kra link del dra2 >> $log 2>&1
report $? "krwqn2 and dra2 deleted"
ip netns exec kra timeout 120 rping -s -a $ns_ip -p 18999 -C 3 -V > /tmp/rping-s.log 2>&1 &
rs=$!
sleep 3
ip netns exec krb timeout 60 rping -c -a $ns_ip -p 18999 -C 3 -V > $log 2>&1
rc=$?
# a server that got the connection ends with it
sleep 2
[ $rc -ne 0 ] && [ $rc -ne 124 ] && kill -0 $rs 2> /dev/null
report $? "rping from namespace krb to $ns_ip does not reach the server in kra" \
	"rping exit status $rc, server $(kill -0 $rs 2> /dev/null && echo waiting || echo gone): $(tail -n 5 $log; tail -n 5 /tmp/rping-s.log)"
ip netns exec kra timeout 60 rping -c -a $ns_ip -p 18999 -C 3 -V > $log 2>&1
rc=$?
wait $rs
rsc=$?
[ $rc = 0 ] && [ $rsc = 0 ]
report $? "rping within namespace kra to $ns_ip, data verified" \
	"client $rc, server $rsc: $(tail -n 5 $log; tail -n 5 /tmp/rping-s.log)"
{ rdma link delete krwqn0 && rdma link delete krwqn1 &&
	ip netns del kra && ip netns del krb; } > $log 2>&1
report $? "the namespaces' devices deleted, the namespaces too"

# --- removal
! rdma link delete krwq0 > $log 2>&1
report $? "rdma link delete krwq0 (InfiniBand mode) is refused"
rdma link delete krwqe2 > $log 2>&1 && [ ! -e /sys/class/infiniband/krwqe2 ]
report $? "rdma link delete krwqe2"
ip link del dummy1
wait_for 20 test ! -e /sys/class/infiniband/krwqe1
report $? "deleting dummy1 deletes krwqe1"
rdma link add krwqe2 type krwq netdev dummy2 > $log 2>&1
report $? "krwqe2 again on dummy2 (left for rmmod)"
tap_summary
