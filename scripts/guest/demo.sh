#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# make demo, inside the VM (Debian's kernel) with krwq.ko loaded: krwq0 as rdma-core
# and iproute2's rdma tool see it, an ibv_rc_pingpong over it with its
# data checked, the RDMA objects the pingpong holds, and what the receive
# queues did.  Exits non-zero when the pingpong fails.
port=18515

# shellcheck source=pair.sh # scripts/vm puts it in /krwq/lib
. /krwq/lib/pair.sh

echo "== lsmod"; lsmod | grep -E "^(Module|krwq)"
echo; echo "== rdma link (krwq0's port)"; rdma link
echo; echo "== ibv_devices"; ibv_devices
echo; echo "== ibv_devinfo -d krwq0"; ibv_devinfo -d krwq0
echo "uverbs ABI $(cat /sys/class/infiniband_verbs/uverbs0/abi_version):" \
	"receive rings and CQs are mapped; ibv_post_recv and ibv_poll_cq make no system call"

echo; echo "== ibv_rc_pingpong -d krwq0 -n 500 -s 4096 -c (server and client on loopback)"
ibv_rc_pingpong -d krwq0 -p $port -n 500 -s 4096 -c > /tmp/server.log 2>&1 &
server=$!
# the server opens its QP, then listens for the client's TCP handshake:
# wait for that rather than guess a sleep
if ! wait_listening $port $server; then
	echo "the server is not listening on port $port:"
	cat /tmp/server.log
	exit 1
fi
echo; echo "== rdma resource (the waiting server's PD, CQ, QP and MR on krwq0)"
rdma resource
rdma resource show qp link krwq0/1
echo
ibv_rc_pingpong -d krwq0 -p $port -n 500 -s 4096 -c 127.0.0.1 || exit 1
wait $server || { cat /tmp/server.log; exit 1; }

echo; echo "== what the receive queues did: rdma statistic show link krwq0/1"
rdma statistic show link krwq0/1 | tr -s " " "\n" | tail -n +3 | paste - - | sed "s/^/    /"
