#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs KUnit's krwq_cm (/krwq/krwq_kunit_cm.ko) once for each NAME:TYPE
# given: `rdma link add NAME type TYPE` on a dummy netdev of its own with a
# documentation-range address (RFC 5737), then the suite with addr= that
# address and dev=NAME.  Each run's KTAP is printed between the lines
# "KTAP-BEGIN krwq_cm@NAME" and "KTAP-END krwq_cm@NAME", followed by
# "CM-UNLOAD ok NAME" if the module then unloads and NAME has the objects
# (`rdma resource show`) it had before, else "CM-UNLOAD failed NAME".
# Runs inside the test VM:
#   kunit-cm.sh rxe0:rxe krwqe0:krwq
# Exits 1 if the module is missing; a device that cannot be made is
# reported and the suite still runs (its cases then fail on the address).
ko=/krwq/krwq_kunit_cm.ko
results=/sys/kernel/debug/kunit/krwq_cm/results
[ -f $ko ] || { echo "kunit-cm.sh: no $ko"; exit 1; }

# wait_port NAME IP: up to 30 s for port 1 of NAME to be ACTIVE with IP's
# IPv4-mapped GID in its table (the RDMA core fills it in from a work item)
wait_port() {
	gid=$(echo "$2" | awk -F. '{ printf "0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x", $1, $2, $3, $4 }')
	p=/sys/class/infiniband/$1/ports/1
	i=0
	while [ $i -lt 300 ]; do
		if grep -q ACTIVE "$p/state" 2> /dev/null &&
			cat "$p"/gids/* 2> /dev/null | grep -qx "$gid"; then
			return 0
		fi
		sleep 0.1
		i=$((i + 1))
	done
	echo "# kunit-cm.sh: $1 port 1 not ACTIVE with GID $gid after 30 s"
	return 1
}

# resources NAME: NAME's object counts (pd, cq, qp, cm_id, mr, ...)
resources() {
	rdma resource show 2> /dev/null | sed -n "s/^[0-9]*: $1: //p"
}

n=0
for spec in "$@"; do
	name=${spec%%:*} type=${spec#*:}
	n=$((n + 1))
	case $n in
	1) net=192.0.2 ;;
	2) net=198.51.100 ;;
	*) net=203.0.113 ;;
	esac
	ip=$net.1 nd=dummy$n
	echo "# krwq_cm on $name ($type), $nd $ip"
	ip link add $nd type dummy &&
		ip addr add $ip/24 dev $nd &&
		ip link set $nd up || echo "# kunit-cm.sh: could not set up $nd"
	[ "$type" != rxe ] || modprobe rdma_rxe || echo "# kunit-cm.sh: modprobe rdma_rxe failed"
	if rdma link add "$name" type "$type" netdev $nd; then
		wait_port "$name" $ip
	else
		echo "# kunit-cm.sh: rdma link add $name type $type netdev $nd failed"
	fi
	before=$(resources "$name")
	insmod $ko addr=$ip dev="$name" || exit 1
	echo "KTAP-BEGIN krwq_cm@$name"
	cat $results
	echo "KTAP-END krwq_cm@$name"
	# the module unloads (bounded, should anything in rdma_cm wait on
	# it) and leaves the device with the objects it had: a cm_id left
	# behind would call a handler that is gone
	if ! timeout 60 rmmod krwq_kunit_cm; then
		echo "# kunit-cm.sh: rmmod krwq_kunit_cm failed"
		echo "CM-UNLOAD failed $name"
	elif [ "$(resources "$name")" != "$before" ]; then
		echo "# kunit-cm.sh: $name had \"$before\", now \"$(resources "$name")\""
		echo "CM-UNLOAD failed $name"
	else
		echo "CM-UNLOAD ok $name"
	fi
done
exit 0
