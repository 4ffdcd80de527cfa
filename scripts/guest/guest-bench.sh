#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# guest-bench.sh - the in-VM half of scripts/bench.  Loads krwq.ko with the
# given module parameters, then, in this one boot:
#  - with --kernel: rdmavt, and krwq_bench.ko (rdmavt against krwq in the
#    kernel; it prints its own results to the kernel log);
#  - the floors: floors (a null system call, one WQE written into a mapped
#    ring) and memcpy_bw at the message sizes (the copying loopback's
#    limit);
#  - rxe0 (198.51.100.1), siw0 (203.0.113.1) and krwqe0 (192.0.2.1), each
#    on a dummy netdev of its own, set up by nvmeof-lib.sh's device_up;
#  - each end-to-end client on krwq0 then on rxe0, back to back, so that
#    both devices see the same conditions; then the perftest clients over
#    rdma_cm (-R, what iWARP's siw needs) on krwqe0, rxe0 and siw0, with
#    one WR per post, with lists of 32 (--post_list 32) and over two QPs
#    (-q 2);
#  - on a kernel with the function_graph tracer and krwq.ko at abi=2:
#    where a 64-byte ibv_post_send's time goes on krwq0 (breakdown).
# Prints one line per figure:  BENCH <part> <metric> <device> <value>
#   guest-bench.sh DIR [--kernel] [NAME=VALUE]...
# DIR holds krwq.ko, krwq_bench.ko, memcpy_bw and floors.
# scripts/vm puts these libraries in /krwq/lib
# shellcheck source=tap.sh
. /krwq/lib/tap.sh
# shellcheck source=module.sh
. /krwq/lib/module.sh
# shellcheck source=nvmeof-lib.sh
. /krwq/lib/nvmeof-lib.sh
dir=$1
shift
kernel=0
if [ "${1:-}" = --kernel ]; then
	kernel=1
	shift
fi
port=18800
tmp=/tmp/bench
mkdir -p $tmp

# krwqe0 beside rxe0, which holds RoCEv2's UDP port here: off the wire
# (with it, rdma link add of krwqe0 is refused and its rows go missing)
insmod_deps "$dir/krwq.ko" "$@" wire=0 || { echo "BENCH-ERROR insmod krwq.ko $*"; exit 1; }

if [ $kernel = 1 ]; then
	if modprobe rdmavt && insmod "$dir/krwq_bench.ko"; then
		# the best round is the figure; the median is kept for reference
		dmesg | sed -n 's/.*krwq_bench: result \([a-z0-9_]*\) \([a-z]*\) \([0-9.]*\) median \([0-9.]*\)$/BENCH kernel \1 \2 \3/p'
		dmesg | sed -n 's/.*krwq_bench: result \([a-z0-9_]*\) \([a-z]*\) \([0-9.]*\) median \([0-9.]*\)$/BENCH kernel_median \1 \2 \4/p'
		rmmod krwq_bench
	else
		echo "BENCH-ERROR krwq_bench.ko"
		dmesg | grep -E 'krwq_bench|rdmavt|rvt' | tail -n 20
	fi
fi

# user space's rdma_cm: a module on distribution kernels (built in here)
modprobe rdma_ucm 2> /dev/null
# addr_of DEVICE: the address its rdma_cm clients connect to
addr_of() {
	case $1 in
	krwqe0) echo 192.0.2.1 ;;
	rxe0) echo 198.51.100.1 ;;
	siw0) echo 203.0.113.1 ;;
	esac
}
for spec in rxe:rxe0 siw:siw0 krwq:krwqe0; do
	name=${spec#*:}
	device_up "${spec%%:*}" "$name" "bench_$name" "$(addr_of "$name")"
	[ -e "/sys/class/infiniband/$name" ] || echo "BENCH-ERROR $name"
done

"$dir/floors" > $tmp/floors.log 2>&1 || echo "BENCH-ERROR floors: $(cat $tmp/floors.log)"
while read -r what value; do
	echo "BENCH floor $what guest $value"
done < $tmp/floors.log
"$dir/memcpy_bw" 64 4096 65536 | while read -r what size mibs _; do
	echo "BENCH e2e ${what}_mibs_$size memcpy $mibs"
done

# The clients below run on each of $devs; with cm=1 over rdma_cm (-R), the
# client connecting to the device's own address, else to 127.0.0.1.
devs="krwq0 rxe0"
cm=0

# gid_of DEVICE: the GID index its clients name without rdma_cm (-g,
# perftest's -x): 0 on rxe0, which is RoCE; none on krwq0
gid_of() { if [ "$1" = rxe0 ]; then echo 0; fi; }

# reach DEVICE: sets addr (where the client connects), how (perftest's
# flags: -R, or a GID index) and sfx (the metrics' suffix, _cm with -R)
reach() {
	if [ $cm = 1 ]; then
		addr=$(addr_of "$1") how=-R sfx=_cm
	else
		g=$(gid_of "$1")
		addr=127.0.0.1 how=${g:+-x $g} sfx=
	fi
}

# pair LOG JSON PROGRAM ARGS...: server, then the client on $addr
# (127.0.0.1 unless set); the client's output in LOG and, unless JSON is
# "-", its perftest JSON report in JSON; fails if either side fails.
pair() {
	plog=$1 json=$2
	shift 2
	port=$((port + 1))
	sj="" cj=""
	if [ "$json" != - ]; then
		rm -f "$json"
		sj=$tmp/server.json cj=$json
	fi
	timeout 300 "$@" ${sj:+--out_json "--out_json_file=$sj"} -p $port > "$tmp/server.log" 2>&1 &
	spid=$!
	# over rdma_cm, the client starts a second after the server's ID
	# listens on its device (the RDMA core lists a wildcard listener per
	# device; the CM's own listener may come a moment later), and it
	# connects through cm_delay.so: perftest's data connection races its
	# server's second listen, and its retry crashes
	# (user/cm_delay/cm_delay.c)
	pre=
	if [ $cm = 1 ]; then
		pre="env LD_PRELOAD=/krwq/bin/cm_delay.so"
		tries=0
		until cm_listening "$port" "$dev"; do
			tries=$((tries + 1))
			[ $tries -lt 600 ] || break
			sleep 0.1
		done
	fi
	# the server may take a while to listen in a loaded VM: retry the
	# client while it cannot connect, for up to a minute
	tries=0
	while :; do
		sleep 1
		# shellcheck disable=SC2086 # pre is words
		timeout 300 $pre "$@" ${cj:+--out_json "--out_json_file=$cj"} -p $port \
			"${addr:-127.0.0.1}" > "$plog" 2>&1
		crc=$?
		tries=$((tries + 1))
		{ [ $crc != 0 ] && [ $tries -lt 60 ] && grep -q "Couldn't connect" "$plog"; } || break
	done
	wait $spid
	src=$?
	[ "$crc" = 0 ] && [ "$src" = 0 ] && return 0
	echo "BENCH-ERROR $* (client $crc, server $src)"
	sed 's/^/# /' "$plog" $tmp/server.log | tail -n 20
	return 1
}

rc_pingpong() {	# SIZE
	for dev in $devs; do
		g=$(gid_of "$dev")
		pair $tmp/pp.log - ibv_rc_pingpong -d "$dev" ${g:+-g "$g"} -s "$1" -n 500 || continue
		v=$(sed -n 's/.* = \([0-9.]*\) usec\/iter$/\1/p' $tmp/pp.log)
		echo "BENCH e2e rc_pingpong_us_$1 $dev $v"
	done
}

send_lat() {	# SIZE
	for dev in $devs; do
		reach "$dev"
		# shellcheck disable=SC2086 # $how is zero, one or two words
		pair $tmp/lat.log $tmp/out.json \
			ib_send_lat -d "$dev" $how -s "$1" -n 500 || continue
		echo "BENCH e2e send_lat_typical_us_$1$sfx $dev $(perftest_json $tmp/out.json t_typical)"
	done
}

# bw TEST SIZE ITERS [LIST] [QPS]: ib_TEST_bw, with LIST WRs per post if
# given and not empty (ITERS a multiple of LIST), over QPS QPs if given
bw() {
	for dev in $devs; do
		reach "$dev"
		m="$2${4:+_pl$4}${5:+_q$5}$sfx"
		# shellcheck disable=SC2086 # $how is zero, one or two words
		pair $tmp/bw.log $tmp/out.json \
			"ib_$1_bw" -d "$dev" $how -s "$2" -n "$3" ${4:+--post_list "$4"} \
			${5:+-q "$5"} || continue
		echo "BENCH e2e $1_bw_mibs_$m $dev $(perftest_json $tmp/out.json BW_average)"
		echo "BENCH e2e $1_bw_mmps_$m $dev $(perftest_json $tmp/out.json MsgRate)"
	done
}

# traced_posts: one line per ib_uverbs_ioctl in the function_graph trace
# that held exactly one post_send with one each of the traced functions
# under it: the own time in ns of each traced level (ioctl, uverbs's
# post_send, krwq_post_send, krwq_exec_connected less its traced callees),
# the take, the copy, the completions together, how many completions, and
# the inclusive times of the ioctl and of krwq_post_send.  (With
# funcgraph-tail every call's duration is on a line that names it.)
traced_posts() {
	awk '
	function dur(i) {
		for (i = 2; i <= NF; i++)
			if ($i == "us" && $(i - 1) ~ /^[0-9.]+$/)
				return $(i - 1) * 1000
		return -1
	}
	BEGIN { split("ib_uverbs_ioctl ib_uverbs_post_send krwq_post_send krwq_exec_connected krwq_rq_take_fitting krwq_copy krwq_cq_enter", fns, " ") }
	{
		d = dur()
		if (d < 0)
			next
		for (i = 1; i <= 7; i++)
			if (index($0, " " fns[i] "(") || index($0, " " fns[i] " ") || index($0, "/* " fns[i]))
				break
		if (i > 7)
			next
		g[i] += d
		n[i]++
		if (i != 1)
			next
		ok = n[1] == 1 && n[7] >= 1
		for (j = 2; j <= 6; j++)
			ok = ok && n[j] == 1
		if (ok)
			print g[1] - g[2], g[2] - g[3], g[3] - g[4], g[4] - g[5] - g[6] - g[7], g[5], g[6], g[7], n[7], g[1], g[3]
		for (j = 1; j <= 7; j++)
			g[j] = n[j] = 0
	}' $tracefs/trace
}

# median_of FILE COLUMN: the median of a column of numbers
median_of() {
	awk -v c="$2" '{ print $c }' "$1" | sort -n |
		awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}

# breakdown: where one 64-byte ibv_post_send's time goes on krwq0.  The
# function_graph tracer times the system call's ioctl and the functions
# of the send under it, nested, in one ib_send_bw run that signals every
# send (-Q 1): each send one system call, whose ioctl is ib_uverbs_ioctl
# (with abi=2 the receives and the polls stay in user space, so nearly
# every ioctl of the run is a post_send).  A run before it traces only
# the seam's unlock (an unlock and an interrupt restore, called in the
# same sends): its median is what the tracer adds to every traced call.
# Prints BENCH trace METRIC krwq0 VALUE: the medians over the posts of
# each column of traced_posts (seg_*_ns, cq_calls, ioctl_ns, krwq_ns),
# how many posts (posts) and the tracer's cost (tracer_ns).
tracefs=/sys/kernel/tracing
breakdown() {
	if ! grep -qw function_graph $tracefs/available_tracers 2> /dev/null; then
		echo "# no function_graph tracer in this kernel: no breakdown"
		return 0
	fi
	if [ "$(cat /sys/module/krwq/parameters/abi 2> /dev/null)" != 2 ]; then
		echo "# krwq.ko is not at abi=2: no breakdown"
		return 0
	fi
	echo 0 > $tracefs/tracing_on
	echo 16384 > $tracefs/buffer_size_kb
	echo 0 > $tracefs/options/funcgraph-irqs
	echo 1 > $tracefs/options/funcgraph-tail
	for fns in krwq_spin_unlock_irqrestore \
		"ib_uverbs_ioctl ib_uverbs_post_send krwq_post_send krwq_exec_connected krwq_rq_take_fitting krwq_copy krwq_cq_enter"; do
		for fn in $fns; do
			grep -q "^$fn\( \|\$\)" $tracefs/available_filter_functions ||
				echo "BENCH-ERROR $fn cannot be traced"
		done
		if ! { echo "$fns" > $tracefs/set_ftrace_filter &&
			echo function_graph > $tracefs/current_tracer &&
			echo > $tracefs/trace; }; then
			echo "BENCH-ERROR tracing $fns"
			continue
		fi
		echo 1 > $tracefs/tracing_on
		pair $tmp/trace.log - ib_send_bw -d krwq0 -s 64 -n 2000 -Q 1
		echo 0 > $tracefs/tracing_on
		if [ "$fns" = krwq_spin_unlock_irqrestore ]; then
			v=$(grep -F " $fns" $tracefs/trace | awk '{
				for (i = 2; i <= NF; i++)
					if ($i == "us" && $(i - 1) ~ /^[0-9.]+$/) { print $(i - 1) * 1000; break }
			}' > $tmp/unlock.txt && median_of $tmp/unlock.txt 1)
			[ -z "$v" ] || echo "BENCH trace tracer_ns krwq0 $v"
		else
			traced_posts > $tmp/posts.txt
			k=0
			for m in seg_ioctl_ns seg_uverbs_post_send_ns seg_krwq_post_send_ns seg_exec_ns \
				seg_take_ns seg_copy_ns seg_cq_ns cq_calls ioctl_ns krwq_ns; do
				k=$((k + 1))
				v=$(median_of $tmp/posts.txt $k)
				[ -z "$v" ] || echo "BENCH trace $m krwq0 $v"
			done
			echo "BENCH trace posts krwq0 $(wc -l < $tmp/posts.txt)"
		fi
		echo nop > $tracefs/current_tracer
	done
	echo > $tracefs/set_ftrace_filter
}

rc_pingpong 64
rc_pingpong 4096
send_lat 64
bw send 64 2000
bw send 4096 2000
bw send 65536 500
bw write 4096 2000

devs="krwqe0 rxe0 siw0"
cm=1
send_lat 64
bw send 64 2000
bw send 4096 2000
bw send 65536 500
bw write 4096 2000
bw send 64 2048 32
bw send 4096 2048 32
bw write 4096 2048 32
bw send 64 2000 "" 2
addr='' cm=0

breakdown
echo "BENCH-DONE"
