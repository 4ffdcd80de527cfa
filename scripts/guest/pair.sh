# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# pair.sh - a server and its client over a TCP handshake on loopback, as
# rdma-core's pingpongs and perftest (without -R) pair up; the guest
# scripts source it from /krwq/lib (scripts/vm puts it there), after
# tap.sh (which only pair needs).
#   socket_on PORT STATE FILE...
#                         a socket in STATE holds PORT (/proc/net's tables)
#   listening PORT        a TCP socket listens on PORT
#   wait_listening PORT [PID]
#                         wait until one does, at most 60 s, or until
#                         process PID has ended
#   run_pair SERVER... [-- CLIENT...]
#                         the server with "-p PORT", then the client (the
#                         server's words unless given) with
#                         "-p PORT 127.0.0.1", PORT being $port + 1; sets
#                         port, crc and src (the exit statuses) and leaves
#                         in $log the client's output, a "--- server" line
#                         and the server's output.  Each side may run
#                         $pair_timeout seconds (default 300); a server
#                         whose client failed gets 30 s more, then is
#                         killed
#   perftest_again TRY NAME
#                         whether run TRY (of 3) of test NAME goes again:
#                         perftest could not fit its clock (its words in
#                         $log); says so in a "#" line
#   perftest_tries NAME FUNCTION ARG...
#                         FUNCTION ARG... (a run on a port of its own),
#                         again while it fails and perftest_again says
#                         so; then report NAME with its last status
#   pair REGEX NAME SERVER... [-- CLIENT...]
#                         run_pair, then report NAME: both exited 0 and a
#                         line of the client's output matches REGEX
# The words of SERVER are split on blanks (sh has no arrays) and undergo
# pathname expansion, so none of them may hold a blank or a wildcard.
# $log is the sourcing script's.
# shellcheck disable=SC2154

# socket_on PORT STATE FILE...: a socket in STATE (/proc/net's hex: 0A
# a TCP listener, 07 a UDP socket not connected) holds local PORT, by the
# tables FILE... (/proc/net/tcp ...) of this network namespace
socket_on() {
	so_port=$(printf ':%04X' "$1") so_state=$2
	shift 2
	cat "$@" 2> /dev/null |
		awk -v p="$so_port" -v s="$so_state" '$4 == s && substr($2, length($2) - 4) == p { f = 1 }
			END { exit !f }'
}

# listening PORT: a TCP socket listens on PORT
listening() {
	socket_on "$1" 0A /proc/net/tcp /proc/net/tcp6
}

# A server sets up its device before it listens, which a loaded TCG guest
# makes slow; a fixed sleep would lose that race.
wait_listening() {
	wl_i=0
	while ! listening "$1" && [ $wl_i -lt 600 ]; do
		[ -z "${2:-}" ] || kill -0 "$2" 2> /dev/null || return 1
		sleep 0.1
		wl_i=$((wl_i + 1))
	done
	listening "$1"
}

run_pair() {
	port=$((port + 1))
	rp_server=""
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		rp_server="$rp_server $1"
		shift
	done
	[ $# = 0 ] || shift
	# shellcheck disable=SC2086 # a word list, split on purpose
	[ $# != 0 ] || set -- $rp_server
	# shellcheck disable=SC2086
	timeout "${pair_timeout:-300}" $rp_server -p $port > /tmp/server.log 2>&1 &
	rp_pid=$!
	wait_listening $port $rp_pid
	tap_run "$log" timeout "${pair_timeout:-300}" "$@" -p $port 127.0.0.1
	crc=$?
	# a server whose client failed may wait for it for ever
	rp_i=0
	while [ $crc != 0 ] && kill -0 $rp_pid 2> /dev/null && [ $rp_i -lt 300 ]; do
		sleep 0.1
		rp_i=$((rp_i + 1))
	done
	[ $crc = 0 ] || kill $rp_pid 2> /dev/null
	wait $rp_pid
	src=$?
	# the marker on a line of its own, whatever the client's last line
	[ -z "$(tail -c 1 "$log")" ] || echo >> "$log"
	echo "--- server" >> "$log"
	cat /tmp/server.log >> "$log"
}

perftest_again() {
	# perftest times itself by fitting the TSC against gettimeofday();
	# should the host preempt a vCPU badly enough that the fit fails
	# ("r^2 < 0.9"; scripts/vm's tsc=reliable makes that rare), perftest
	# exits 1 before it reports anything.  That is the measuring tool,
	# not the device.
	grep -q "Can't produce a report" "$log" && [ "$1" -lt 3 ] || return 1
	echo "# $2: perftest could not calibrate its clock, run $1 of 3"
}

perftest_tries() {
	pt_name=$1 pt_try=1
	shift
	while :; do
		"$@"
		pt_rc=$?
		{ [ $pt_rc != 0 ] && perftest_again $pt_try "$pt_name"; } || break
		pt_try=$((pt_try + 1))
	done
	report "$pt_rc" "$pt_name"
}

# pair_once REGEX SERVER... [-- CLIENT...]: one run of pair's
pair_once() {
	pr_re=$1
	shift
	run_pair "$@"
	[ "$crc" = 0 ] && [ "$src" = 0 ] &&
		sed '/^--- server$/,$d' "$log" | grep -Eq "$pr_re" && return 0
	echo "client exited $crc, server $src" >> "$log"
	return 1
}

pair() {
	pr_name=$2
	pr_re=$1
	shift 2
	perftest_tries "$pr_name" pair_once "$pr_re" "$@"
}
