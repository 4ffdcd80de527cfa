#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the test VM (scripts/wire-vectors boots it): RoCEv2 packets
# that rdma_rxe sends, captured.  rxe0 sits on veth vrxe in the initial
# namespace; its peer vpeer is in namespace peer, where no RDMA device
# answers, so every packet rxe sends is retried and captured there:
#  - rping over IPv4 and IPv6: the IB CM's REQ, a UD SEND on QP1;
#  - ibv_rc_pingpong whose peer is a shell faking the pingpong's address
#    exchange: RC SEND packets, one with 3 bytes of pad.
# Prints the capture gzipped and base64-encoded between @@pcap-begin@@
# and @@pcap-end@@, as wire.sh prints its own.
set -u
# shellcheck source=roce.sh # scripts/vm puts it in /krwq/lib
. /krwq/lib/roce.sh
ip netns add peer
ip link add vrxe type veth peer name vpeer
ip link set vpeer netns peer
ip addr add 198.51.100.1/24 dev vrxe
ip -6 addr add 2001:db8::1/64 dev vrxe nodad
ip link set vrxe up
ip -n peer addr add 198.51.100.2/24 dev vpeer
ip -n peer -6 addr add 2001:db8::2/64 dev vpeer nodad
ip -n peer link set vpeer up
ip -n peer link set lo up
modprobe rdma_rxe
rdma link add rxe0 type rxe netdev vrxe
sleep 2
ip netns exec peer tcpdump -Z root -U -s 0 -i vpeer -w /tmp/rxe.pcap udp port 4791 \
	> /tmp/tcpdump.log 2>&1 &
td=$!
sleep 2

timeout 6 rping -c -a 198.51.100.2 -C 1 > /dev/null 2>&1
timeout 6 rping -c -a 2001:db8::2 -C 1 > /dev/null 2>&1

# the pingpong's exchange: LID:QPN:PSN:GID, NUL-terminated, each way; the
# fake peer is QP 0x000123, PSN 0x000456, GID ::ffff:198.51.100.2
printf '0000:000123:000456:00000000000000000000ffffc6336402\0' > /tmp/peer.msg
gi=$(gid_index rxe0 198.51.100.1)
ip netns exec peer sh -c 'sleep 8 < /dev/null | cat /tmp/peer.msg - | nc -l -p 18515 > /dev/null' &
nc_pid=$!
sleep 1
timeout 6 ibv_rc_pingpong -d rxe0 -g "$gi" -s 1001 -n 1 198.51.100.2 > /dev/null 2>&1
# the fake peer's pipeline: sh, sleep, cat and nc, none left behind
pkill -f 'nc -l -p 18515' 2> /dev/null
pkill -f 'sleep 8' 2> /dev/null
kill $nc_pid 2> /dev/null
wait $nc_pid 2> /dev/null
sleep 1
kill $td
wait $td
cat /tmp/tcpdump.log
echo "@@pcap-begin@@"
gzip -c /tmp/rxe.pcap | base64
echo "@@pcap-end@@"
