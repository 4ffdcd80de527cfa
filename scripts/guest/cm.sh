#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# rdma_cm over netdev-bound RDMA devices, inside the test VM: for each
# DEVICE given, a dummy netdev of its own with addresses from the
# documentation ranges, the RDMA device created on it, and rdmacm-utils'
# and perftest's rdma_cm clients run, server and client on that address,
# each result checked in their output.  Prints TAP, ending with
# "N passed, N failed".
#   cm.sh DEVICE...                  the functional tests
#   cm.sh --teardown link DEVICE...  `rdma link delete` while rping and
#                                    ib_send_bw -R carry traffic
#   cm.sh --teardown rmmod DEVICE... the same with rmmod of the driver
# (rxe's rstream is skipped: it trips KASAN in rxe itself, see below).
# DEVICE is TYPE:NAME (krwq:krwqe0, rxe:rxe0, siw:siw0), or a bare name
# starting with rxe or siw.  Device n (from 0) gets 192.0.2.(16n+1)/28 and
# 2001:db8:(n+1)::1/64; the VM runner checks the kernel log afterwards.
# DEVICE%VID (krwq:krwqv0%10) puts the addresses on VLAN VID of the dummy
# the device is bound to (the 8021q module; the RDMA core makes GIDs of
# a VLAN's addresses, not of a VLAN netdev's own RDMA device) and runs
# the rdma_cm tests that connect through the IB CM or SIDR over that
# VLAN: rping (IPv4, IPv6), ucmatose and udaddy.
# shellcheck source=tap.sh # scripts/vm puts it in /krwq/lib
. /krwq/lib/tap.sh
# shellcheck source=roce.sh
. /krwq/lib/roce.sh
# user space's rdma_cm: a module on distribution kernels (built in here)
modprobe rdma_ucm 2> /dev/null
log=/tmp/cm.log
port=18700
tap_t0=$(cut -d. -f1 /proc/uptime)

now() { cut -d. -f1 /proc/uptime; }

# a failure shows the last lines of the client's output, then the
# server's (with both exit statuses): tap.sh's tap_detail

# perftest 4.5's client connects its data QP the moment the handshake
# ends, while its server is only then starting to listen; losing that race
# gets it rejected, and perftest's own retry crashes
# (user/cm_delay/cm_delay.c).
# Its clients therefore connect through cm_delay.so, half a second late
# (a client that still loses the race fails its test).
cm_delay="env LD_PRELOAD=/krwq/bin/cm_delay.so"
[ -r /krwq/bin/cm_delay.so ] || echo "# no /krwq/bin/cm_delay.so: perftest -R clients are not delayed"

# module_of TYPE: the kernel module that provides devices of TYPE
module_of() {
	case $1 in
	rxe) echo rdma_rxe ;;
	*) echo "$1" ;;
	esac
}

# load_driver TYPE: its module loaded (krwq.ko is not in the modules tree)
load_driver() {
	grep -q "^$(module_of "$1") " /proc/modules && return 0
	case $1 in
	# beside rxe0, which holds RoCEv2's UDP port here: off the wire
	krwq) insmod /krwq/krwq.ko wire=0 ;;
	*) modprobe "$(module_of "$1")" ;;
	esac
}

# parse SPEC: sets type, name and vlan (empty: none)
parse() {
	vlan=
	case $1 in
	*%*) vlan=${1##*%} ;;
	esac
	set -- "${1%%%*}"
	case $1 in
	*:*) type=${1%%:*} name=${1#*:} ;;
	rxe*) type=rxe name=$1 ;;
	siw*) type=siw name=$1 ;;
	*) type=unknown name=$1 ;;
	esac
}

# addresses INDEX: sets a4, a6 and their GID table forms g4, g6
addresses() {
	a4=192.0.2.$((16 * $1 + 1))
	a6=2001:db8:$(($1 + 1))::1
	g4=0000:0000:0000:0000:0000:ffff:c000:02$(printf %02x $((16 * $1 + 1)))
	g6=2001:0db8:$(printf %04x $(($1 + 1))):0000:0000:0000:0000:0001
}

# setup INDEX: a dummy netdev (sets nd) and, with a vlan, a VLAN netdev on
# it (sets bd, the netdev with the addresses: nd or the VLAN's), a4/28
# and a6/64 on bd, up, and the RDMA device NAME of TYPE on nd, its port
# active
setup() {
	addresses "$1"
	k=0
	while [ -e /sys/class/net/dummy$k ]; do k=$((k + 1)); done
	nd=dummy$k
	bd=$nd
	[ -z "$vlan" ] || bd=$nd.$vlan
	{
		load_driver "$type" &&
			ip link add $nd type dummy &&
			ip link set $nd up &&
			if [ -n "$vlan" ]; then
				modprobe 8021q &&
					ip link add link $nd name "$bd" type vlan id "$vlan" &&
					ip link set "$bd" up
			fi &&
			ip addr add $a4/28 dev "$bd" &&
			ip -6 addr add $a6/64 dev "$bd" nodad &&
			rdma link add "$name" type "$type" netdev $nd
	} > $log 2>&1 || return 1
	k=0
	until grep -q ACTIVE "/sys/class/infiniband/$name/ports/1/state" 2> /dev/null; do
		[ $k -lt 100 ] || { echo "port 1 of $name is not ACTIVE after 10 s" >> $log; return 1; }
		sleep 0.1
		k=$((k + 1))
	done
	rdma link show "$name/1" >> $log 2>&1
	grep -q "netdev $nd\$" $log || grep -q "netdev $nd " $log
}

# start NAME SECONDS PROGRAM ARGS...: PROGRAM in the background under
# timeout, its output in /tmp/NAME.log; /tmp/NAME.rc gets its exit status
# when it ends (a test for a finished process that works whether or not
# it has been waited for)
start() {
	sb=/tmp/$1 st=$2
	shift 2
	rm -f "$sb.rc" "$sb.pid"
	(
		timeout "$st" "$@" > "$sb.log" 2>&1 &
		echo $! > "$sb.pid"
		wait $!
		echo $? > "$sb.rc"
	) 2> /dev/null &
	until [ -s "$sb.pid" ]; do sleep 0.1; done
}

ended() { [ -s "/tmp/$1.rc" ]; }

# settle NAME [SECONDS]: wait for NAME to end (its timeout bounds that),
# or kill it after SECONDS (SIGKILL 10 s later); prints its exit status,
# or "none" if even that did not end it
settle() {
	k=0
	until ended "$1"; do
		if [ -n "${2:-}" ] && [ $k -eq $(($2 * 5)) ]; then
			echo "# $1 still running after $2 s; killed" >&2
			kill "$(cat "/tmp/$1.pid")" 2> /dev/null
		fi
		if [ -n "${2:-}" ] && [ $k -eq $((($2 + 10) * 5)) ]; then
			kill -9 "$(cat "/tmp/$1.pid")" 2> /dev/null
		fi
		if [ -n "${2:-}" ] && [ $k -ge $((($2 + 20) * 5)) ]; then
			echo none
			return
		fi
		sleep 0.2
		k=$((k + 1))
	done
	cat "/tmp/$1.rc"
}

# serve PORT PROGRAM ARGS...: the server in the background (as "server");
# returns when an rdma_cm ID of $name listens on PORT, the server ended,
# or after 60 s
serve() {
	sp=$1
	shift
	start server 300 "$@"
	k=0
	until cm_listening "$sp" "$name" || ended server || [ $k -ge 600 ]; do
		sleep 0.1
		k=$((k + 1))
	done
	cm_listening "$sp" "$name" || echo "no rdma_cm listener on port $sp after $((k / 10)) s" >> /tmp/server.log
}

# client PROGRAM ARGS...: the client against the server serve started;
# sets crc and src and leaves the client's output, then the server's, in
# $log.  A server gets 60 s to end after its client did (30 s when the
# client failed), not the whole of its own timeout.
client() {
	tap_run $log timeout 300 "$@"
	crc=$?
	if [ $crc = 0 ]; then src=$(settle server 60); else src=$(settle server 30); fi
	echo "--- server" >> $log
	cat /tmp/server.log >> $log
}

next_port() { port=$((port + 1)); }

# both_ok: client and server exited 0 (else says how they did)
both_ok() {
	[ "$crc" = 0 ] && [ "$src" = 0 ] && return 0
	echo "client exited $crc, server $src" >> $log
	return 1
}

# server_has REGEX / client_has REGEX: a line of that side's output matches
server_has() { sed -n '/^--- server$/,$p' $log | grep -Eq "$1"; }
client_has() { sed '/^--- server$/,$d' $log | grep -Eq "$1"; }
client_count() { sed '/^--- server$/,$d' $log | grep -Ec "$1"; }
server_count() { sed -n '/^--- server$/,$p' $log | grep -Ec "$1"; }

# rping_test ADDR LABEL: 100 pings of 4 KiB, each checked by the client
# (-V) and each shown by both (-v): 100 lines each, the last the 100th
rping_test() {
	next_port
	serve $port rping -s -a "$1" -p $port -C 100 -S 4096 -V -v
	client rping -c -a "$1" -p $port -C 100 -S 4096 -V -v
	ok=1
	if both_ok; then
		c=$(client_count '^ping data: rdma-ping-')
		s=$(server_count '^server ping data: rdma-ping-')
		echo "client showed $c pings, server $s" >> $log
		[ "$c" = 100 ] && [ "$s" = 100 ] && client_has '^ping data: rdma-ping-99: ' &&
			! grep -q 'data mismatch' $log && ok=0
	fi
	report $ok "$label rping $2, 100 x 4 KiB, data verified"
}

# peer_test TEXT FUNCTION [ARG...]: FUNCTION (one try of a test: 0 when
# it passed) reported as "$label TEXT".  A sanity peer (rxe, siw) gets a
# second try: under TCG rxe's RC sometimes stalls past a program's
# patience (perftest's, or rdma_server's wait for its send's completion),
# which is no finding about krwq.  krwq gets one try.
peer_test() {
	pt_text=$1
	shift
	"$@"
	pt=$?
	if [ $pt != 0 ] && [ "$type" != krwq ]; then
		echo "# $label $pt_text failed once on the peer; a second try after:"
		tail -n 8 $log | sed 's/^/#   /'
		"$@"
		pt=$?
	fi
	report $pt "$label $pt_text"
}

# perftest_try PROGRAM: one server and client of PROGRAM -R; 0 when the
# client printed a result row
perftest_try() {
	next_port
	serve $port "$1" -d "$name" -R -n "$iters" -p $port
	# shellcheck disable=SC2086 # cm_delay is words
	client $cm_delay "$1" -d "$name" -R -n "$iters" -p $port "$a4"
	both_ok && client_has "$row"
}

perftest_test() { peer_test "$1 -R, $iters iterations" perftest_try "$1"; }

# rdma_server_try: one rdma_server and rdma_client (librdmacm's
# synchronous calls: a send and a receive each way)
rdma_server_try() {
	next_port
	serve $port rdma_server -s "$a4" -p $port
	client rdma_client -s "$a4" -p $port
	both_ok && client_has '^rdma_client: end 0$' && server_has '^rdma_server: end 0$'
}

# perftest prints a table row of numbers under its header
row='^ *[0-9]+ +[0-9]+ +[0-9.]+'

functional() {
	i=$1
	t=$(now)
	parse "$2"
	label="$name ($type):"
	if ! setup "$i"; then
		report 1 "$label create on a dummy netdev, $a4/28 and $a6/64 on ${vlan:+its VLAN $vlan}${vlan:-it}"
		return
	fi
	report 0 "$label created on $nd, $a4/28 and $a6/64 on $bd, port ACTIVE"

	if [ "$type" = siw ]; then
		echo "# $label iWARP: GIDs are MAC based, not IP based; not checked"
	else
		cat /sys/class/infiniband/"$name"/ports/1/gids/* > $log 2>&1
		grep -qx "$g4" $log && grep -qx "$g6" $log
		report $? "$label GID table holds $a4 and $a6 (RoCE v2)"
	fi

	rping_test "$a4" "over IPv4"

	# the server's connect loop ends only when all 4 connections are
	# established, so its "data transfers complete" means all 4 moved
	# their 100 messages each way
	next_port
	serve $port ucmatose -b "$a4" -p $port -c 4 -C 100 -S 1024
	client ucmatose -s "$a4" -p $port -c 4 -C 100 -S 1024
	both_ok && client_has '^data transfers complete' &&
		server_has '^data transfers complete' && server_has '^disconnected' &&
		client_has '^return status 0' && server_has '^return status 0'
	report $? "$label ucmatose, 4 connections x 100 messages each way"

	if [ "$type" = siw ]; then
		echo "# $label udaddy skipped: iWARP has no UD QPs"
	else
		# udaddy's port is fixed: 7174
		serve 7174 udaddy -b "$a4" -c 2 -C 100
		client udaddy -s "$a4" -c 2 -C 100
		both_ok && client_has '^data transfers complete' &&
			server_has '^data transfers complete' &&
			client_has '^return status 0' && server_has '^return status 0'
		report $? "$label udaddy (UD), 2 endpoints x 100 datagrams"
	fi

	# over a VLAN: what the IB CM and SIDR carry; the rest is the same
	# verbs as without one
	if [ -z "$vlan" ]; then
		peer_test "rdma_server / rdma_client" rdma_server_try

		if [ "$type" = rxe ]; then
			# rxe_mr_copy's slab-out-of-bounds read (KASAN) on rsocket
			# traffic is rxe's bug; it would fail the whole run
			echo "# $label rstream skipped: it trips KASAN in rxe_mr_copy (an rxe bug) on this kernel"
		else
			next_port
			serve $port rstream -b "$a4" -p $port -S 65536 -C 200 -T v
			client rstream -s "$a4" -p $port -S 65536 -C 200 -T v
			both_ok && client_has '^custom +64k +200 +1 ' && server_has '^custom +64k +200 +1 '
			report $? "$label rstream (rsocket), 200 x 64 KiB each way, data verified"
		fi

		# rxe moves 64 KiB messages slowly under TCG (see clients.sh)
		iters=1000
		[ "$type" = rxe ] && iters=200
		perftest_test ib_send_bw
		perftest_test ib_write_bw
		perftest_test ib_read_bw
	fi

	rping_test "$a6" "over IPv6"
	echo "# $label $(($(now) - t)) s"
}

# --- teardown under load ---------------------------------------------------

# gone: the device and (rmmod) its module are gone
gone() {
	! rdma link show 2> /dev/null | grep -q "^link $name/" || return 1
	[ "$how" = link ] || ! grep -q "^$(module_of "$type") " /proc/modules
}

# count NAME REGEX: lines of NAME's output matching REGEX
count() {
	cn=$(grep -Ec "$2" "/tmp/$1.log" 2> /dev/null)
	echo "${cn:-0}"
}

# moved NAME REGEX: the count of NAME's output lines matching REGEX grows
# within 20 s
moved() {
	m0=$(count "$1" "$2")
	end=$(($(now) + 20))
	while [ "$(now)" -lt $end ]; do
		sleep 0.5
		[ "$(count "$1" "$2")" -gt "$m0" ] && return 0
	done
	return 1
}

# app_state: one line per application: running or its exit status, and
# the last lines of its output (six: a perftest that fails names the
# completion's status four lines before its last)
app_state() {
	for a in $apps; do
		if ended "$a"; then
			echo "$a: exit status $(cat "/tmp/$a.rc")"
		else
			echo "$a: running"
		fi
		grep -v 'ping data: ' "/tmp/$a.log" | tail -n 6 | sed 's/^/    /'
	done
}

# wait_ended SECONDS [SPARED]: wait until every application in $apps
# ended, or all but SPARED, at most SECONDS; sets left to those still
# running
wait_ended() {
	end=$(($(now) + $1))
	while :; do
		left=
		for a in $apps; do ended "$a" || left="$left $a"; done
		case $left in "" | " ${2:-}") break ;; esac
		[ "$(now)" -lt $end ] || break
		sleep 0.5
	done
}

# The removal of a device whose driver implements disassociate_ucontext
# (krwq) revokes what user space holds and completes at once; the
# applications learn of it from rdma_cm (DEVICE_REMOVAL) or from a failed
# verb and must end by themselves.  Without it (rxe, siw) the RDMA core
# waits in the removal until every process has closed the device, before
# rdma_cm even reports the removal (uverbs is removed first): nothing
# tells the applications, so they are killed a few seconds into the
# removal (before the hung task detector's 30 s) and the removal must
# then complete.
disassociates() { [ "$type" = krwq ]; }

teardown() {
	parse "$2"
	label="$name ($type):"
	if ! setup "$1"; then
		report 1 "$label create on a dummy netdev with $a4/28"
		return
	fi
	apps="rping-s rping-c bw-s bw-c"
	next_port
	rp=$port
	start rping-s 600 rping -s -a "$a4" -p $rp -C 0 -S 64 -v
	next_port
	bp=$port
	start bw-s 600 ib_send_bw -d "$name" -R -p $bp -s 4096 -D 2 --run_infinitely
	end=$(($(now) + 60))
	until { cm_listening $rp "$name" && cm_listening $bp "$name"; } || [ "$(now)" -ge $end ]; do
		sleep 0.2
	done
	start rping-c 600 rping -c -a "$a4" -p $rp -C 0 -S 64 -V -v
	# shellcheck disable=SC2086 # cm_delay is words
	start bw-c 600 $cm_delay ib_send_bw -d "$name" -R -p $bp -s 4096 -D 2 --run_infinitely "$a4"

	# traffic right before the removal: rping's client keeps showing
	# verified pings, and the ib_send_bw server's result rows (one every
	# 2 s) count received messages
	moved rping-c '^ping data: '
	r1=$?
	moved bw-s '^ *4096 +[1-9]'
	r2=$?
	{
		echo "verified pings: $(count rping-c '^ping data: ')"
		echo "ib_send_bw rows with traffic: $(count bw-s '^ *4096 +[1-9]')"
		app_state
	} > $log
	[ $r1 = 0 ] && [ $r2 = 0 ]
	report $? "$label rping and ib_send_bw -R carry traffic ($(count rping-c '^ping data: ') pings so far)"

	case $how in
	link) what="rdma link delete $name" ;;
	rmmod) what="rmmod $(module_of "$type")" ;;
	esac
	t=$(now)
	if [ "$how" = link ]; then
		start remove 120 rdma link delete "$name"
	else
		start remove 120 rmmod "$(module_of "$type")"
	fi
	if disassociates; then
		settle remove > /dev/null
		r=$(cat /tmp/remove.rc)
		td=$(($(now) - t))
		cp /tmp/remove.log $log
		[ "$r" = 0 ] && gone
		report $? "$label $what under traffic: status $r after $td s, device gone"
		# every application must notice the removal and end by itself.
		# The ib_send_bw server only polls its mapped completion ring
		# (uverbs ABI 2) and makes no system call, so, like a process
		# whose CQ an HCA writes in user memory, it cannot learn of the
		# removal: it alone may be left running, and is killed once the
		# others have ended.
		wait_ended 60 bw-s
		app_state > $log
		ok=1
		case $left in
		"") ok=0 ;;
		" bw-s")
			ok=0
			echo "# $label the ib_send_bw server was still running when the others had ended: killed"
			kill -9 "$(cat /tmp/bw-s.pid)" 2> /dev/null ;;
		esac
		report $ok "$label rping (both sides) and the ib_send_bw client end by themselves within 60 s of the removal"
	else
		sleep 5
		{
			echo "5 s into \"$what\": $(ended remove && echo "it ended" || echo "it waits")"
			app_state
		} | sed 's/^/# /'
		for a in $apps; do
			ended "$a" || kill -9 "$(cat "/tmp/$a.pid")" 2> /dev/null
		done
		end=$(($(now) + 60))
		until ended remove || [ "$(now)" -ge $end ]; do sleep 0.5; done
		r=$(cat /tmp/remove.rc 2> /dev/null)
		cp /tmp/remove.log $log
		if [ "$how" = rmmod ] && [ "$r" != 0 ]; then
			# a module whose devices cannot be disassociated is
			# pinned by its users: rmmod is refused, and must
			# succeed once they are gone
			wait_ended 30
			timeout 60 rmmod "$(module_of "$type")" >> $log 2>&1
			r="$r, then $?"
		fi
		td=$(($(now) - t))
		case $r in 0 | *", then 0") gone ;; *) false ;; esac
		report $? "$label $what under traffic, the applications killed after 5 s: status ${r:-none} after $td s, device gone"
	fi
	wait_ended 10
	for a in $left; do
		kill -9 "$(cat "/tmp/$a.pid")" 2> /dev/null
	done
	ip link del $nd
}

how=
if [ "${1:-}" = --teardown ]; then
	how=${2:-}
	case $how in
	link | rmmod) shift 2 ;;
	*) echo "usage: cm.sh [--teardown link|rmmod] DEVICE..." >&2; exit 2 ;;
	esac
fi
[ $# -gt 0 ] || { echo "usage: cm.sh [--teardown link|rmmod] DEVICE..." >&2; exit 2; }

i=0
for spec in "$@"; do
	if [ -n "$how" ]; then
		teardown $i "$spec"
	else
		functional $i "$spec"
	fi
	i=$((i + 1))
done
tap_summary
