#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# guest-ulp.sh - the in-VM half of scripts/bench's "ulp" boot: what the
# kernel's upper-layer users of RDMA see of krwq against rdma_rxe, and
# how long krwq keeps interrupts off.  Loads krwq.ko with the given module
# parameters, then, in this one boot:
#  - memcpy_bw --best 16384: the time of one 16 KiB copy;
#  - the irqsoff tracer (bench kernel only): the longest interrupts-off
#    section while ib_write_bw and then ib_send_bw move 16 MiB messages
#    over krwq0 (server and client on 127.0.0.1), then during a sleep as
#    long, with no RDMA traffic;
#  - NVMe over Fabrics on krwqe0 and rxe0 (each on a dummy netdev of its
#    own), set up and torn down by nvmeof-lib.sh as nvmeof.sh tests it,
#    in two passes ordered krwqe0, rxe0, rxe0, krwqe0 so that a drift of
#    the host's load favours neither: fio on the namespace, direct I/O,
#    fixed time, JSON report: 4 KiB random reads at iodepth 1 and 32,
#    the latter also from 2 jobs (one per CPU, so one per I/O queue),
#    128 KiB sequential reads at iodepth 4; krwqe0's counters after each
#    of its passes;
#    around each fio job, what it cost the guest (the profile): context
#    switches, each CPU's busy share, IRQ_POLL softirqs, where the
#    kernel has histogram triggers (the bench kernel) the work items run,
#    by function, and where DIR has perf, perf's samples of every CPU by
#    the function they count for;
#  - rping connection set-ups: ROUNDS rounds of SETUPS `rping -c -C 1`
#    runs against a persistent server (`rping -s -P`) on each device, the
#    devices alternating by round, each run's wall time summed.
# Prints, besides nvmeof-lib.sh's TAP lines:
#   BENCH ulp METRIC DEVICE VALUE
#   BENCH-FIO DEVICE JOB PASS LINE  fio's JSON report, line by line
#   BENCH-PROF DEVICE JOB PASS WHAT VALUE  a profile figure of one fio
#                                   job: ios, ctxt, irq_poll, cpuN_busy
#                                   (per mille), wq_runs, wq FUNCTION
#   BENCH-PERF DEVICE JOB PASS SAMPLES DSO FUNCTION  perf's samples of one
#                                   fio job that count for FUNCTION
#   BENCH-IRQWIN WHAT US KRWQ START END CALLER  one half-second window's
#                                   longest section; KRWQ 1 if it was krwq's
#   BENCH-ERROR WHAT                something could not be measured
#   BENCH-DONE
#
#   guest-ulp.sh DIR [NAME=VALUE]...
# DIR holds krwq.ko and memcpy_bw, and may hold perf.
# scripts/vm puts these libraries in /krwq/lib
# shellcheck source=tap.sh
. /krwq/lib/tap.sh
# shellcheck source=module.sh
. /krwq/lib/module.sh
# shellcheck source=nvmeof-lib.sh
. /krwq/lib/nvmeof-lib.sh
dir=$1
shift
tmp=/tmp/ulp
tracefs=/sys/kernel/tracing
port=18900
# fio: seconds measured after seconds of warm-up, per job
fio_runtime=8
fio_ramp=2
rping_rounds=2
rping_setups=10
mkdir -p $tmp

# krwqe0 beside rxe0, which holds RoCEv2's UDP port here: off the wire
insmod_deps "$dir/krwq.ko" "$@" wire=0 || { echo "BENCH-ERROR insmod krwq.ko $*"; exit 1; }
# user space's rdma_cm: a module on distribution kernels (built in here)
modprobe rdma_ucm 2> /dev/null

# centis: the uptime in hundredths of a second
centis() {
	read -r up _ < /proc/uptime
	echo "${up%.*}${up#*.}"
}

# --- the time of one 16 KiB copy

"$dir/memcpy_bw" --best 16384 > $tmp/copy.log 2>&1 ||
	echo "BENCH-ERROR memcpy_bw --best 16384: $(cat $tmp/copy.log)"
while read -r how size us; do
	echo "BENCH ulp copy_us_$size $how $us"
done < $tmp/copy.log

# --- interrupts off

# perftest_pair PROGRAM ARG...: the server on krwq0, then the client
# against 127.0.0.1 (retried while the server is not listening yet)
perftest_pair() {
	port=$((port + 1))
	timeout 300 "$@" -p $port > $tmp/server.log 2>&1 &
	pp_pid=$!
	pp_tries=0
	while :; do
		sleep 1
		timeout 300 "$@" -p $port 127.0.0.1 > $tmp/client.log 2>&1
		pp_crc=$?
		pp_tries=$((pp_tries + 1))
		if [ $pp_crc = 0 ] || [ $pp_tries -ge 60 ] ||
			! grep -q "Couldn't connect" $tmp/client.log; then
			break
		fi
	done
	wait $pp_pid
	pp_src=$?
	[ "$pp_crc" = 0 ] && [ "$pp_src" = 0 ] && return 0
	echo "BENCH-ERROR $* (client $pp_crc, server $pp_src)"
	sed 's/^/# /' $tmp/client.log $tmp/server.log | tail -n 20
	return 1
}

# irqoff_traffic: 16 MiB RDMA WRITEs and SENDs over krwq0
irqoff_traffic() {
	perftest_pair ib_write_bw -d krwq0 -s 16777216 -n 5
	perftest_pair ib_send_bw -d krwq0 -s 16777216 -n 5
}

# irqoff_window WHAT: the longest section since the last look: how long,
# whether it was krwq's (it opened or closed in a krwq function, or the
# first caller on the stack recorded at its end, past the tracer's and
# the lock helpers' frames, is one), where it opened and closed, and that
# caller; then a reset for the next window.  The tracer keeps only the
# longest section, so short windows let krwq's own sections show between
# longer ones of others.  (An interrupt that arrives during a krwq copy
# has krwq further down its stack, but not as its first caller.)
irqoff_window() {
	w_max=$(cat $tracefs/tracing_max_latency)
	w_trace=$(cat $tracefs/trace)
	echo 0 > $tracefs/tracing_max_latency
	w_start=$(echo "$w_trace" | sed -n 's/^#  *=> started at: *\([^ ]*\).*/\1/p')
	w_end=$(echo "$w_trace" | sed -n 's/^#  *=> ended at: *\([^ ]*\).*/\1/p')
	w_caller=$(echo "$w_trace" | awk '
		/<stack trace>/ { s = 1; next }
		s && $1 == "=>" && $2 !~ /^(__?trace_|trace_hardirqs|tracer_hardirqs|stack_trace|check_critical_timing|stop_critical|_raw_spin_unlock|__raw_spin_unlock|lockdep_hardirqs)/ {
			print $2; exit
		}')
	w_krwq=0
	case "$w_start $w_end $w_caller" in *krwq*) w_krwq=1 ;; esac
	echo "BENCH-IRQWIN $1 $w_max $w_krwq ${w_start:-?} ${w_end:-?} ${w_caller:-?}"
}

if grep -qw irqsoff $tracefs/available_tracers 2> /dev/null; then
	# only where each section opened and closed, not every function
	# called inside it (which would lengthen the sections it measures)
	echo 0 > $tracefs/options/function-trace
	echo irqsoff > $tracefs/current_tracer
	echo 0 > $tracefs/tracing_max_latency
	t0=$(centis)
	# the longest section of each half second while the traffic runs
	irqoff_traffic > $tmp/irqoff-traffic.log 2>&1 &
	traffic=$!
	while kill -0 $traffic 2> /dev/null; do
		sleep 0.5
		irqoff_window krwq0
	done
	wait $traffic
	cat $tmp/irqoff-traffic.log
	irqoff_window krwq0
	t1=$(centis)
	echo "BENCH ulp irqoff_seconds krwq0 $(((t1 - t0) / 100))"
	# as long again with no RDMA traffic, in the same windows
	echo 0 > $tracefs/tracing_max_latency
	t2=$(centis)
	while [ $(($(centis) - t2)) -lt $((t1 - t0)) ]; do
		sleep 0.5
		irqoff_window idle
	done
	echo nop > $tracefs/current_tracer
else
	echo "BENCH-ERROR no irqsoff tracer in this kernel (scripts/test-kernel-bench.config has it)"
fi

# --- NVMe over Fabrics

# failed_since N: a TAP check failed since the count was N
failed_since() { [ "$fail" != "$1" ]; }

# The profile of one fio job (prof_start, then prof_end DEV JOB PASS):
# the I/Os the namespace completed, /proc/stat's context switches and each
# CPU's busy and total ticks,
# /proc/softirqs' IRQ_POLL, and the work items run by function through a
# histogram trigger on workqueue_execute_start when the kernel has one.
wq_event=$tracefs/events/workqueue/workqueue_execute_start
wq_hist='hist:keys=function.sym:sort=hitcount'
prof_counts() {
	awk '/^cpu[0-9]/ { b = $2 + $3 + $4 + $7 + $8; print $1, b, b + $5 + $6 }
		/^ctxt/ { print "ctxt", $2 }' /proc/stat
	awk '/IRQ_POLL:/ { s = 0; for (i = 2; i <= NF; i++) s += $i; print "irq_poll", s }' \
		/proc/softirqs
	# the I/Os the namespace completed, warm-up included: the larger of
	# its own and its paths' counts (with native multipath the head
	# device only passes bios on, and its paths count them)
	awk '$3 ~ /^nvme/ { n = $4 + $8; if (n > m) m = n } END { print "ios", m + 0 }' \
		/proc/diskstats
}
# Where the CPUs' time went, where perf is ($dir/perf): every CPU sampled
# perf_hz times a second of its clock, idle included, with the call chain
# (a software clock event: each sample stands for 1/perf_hz s).
# Under TCG there is no PMU, so the samples come from a timer interrupt,
# which waits while interrupts are off: a sample lands where they came
# back on.  Such a sample counts for the first frame of its chain past
# the functions that turn interrupts back on, the one that held the lock.
perf_hz=100
perf_skip='^(_raw_(spin|read|write)_unlock_(irqrestore|irq|bh)|__local_bh_enable_ip|krwq_spin_unlock_irqrestore|trace_hardirqs_on)$'
[ -x "$dir/perf" ] && echo "BENCH ulp perf_hz all $perf_hz"
prof_start() {
	prof_perf=
	if [ -x "$dir/perf" ]; then
		rm -f $tmp/perf.data
		"$dir/perf" record -a -g -e cpu-clock -F $perf_hz -o $tmp/perf.data \
			> $tmp/perf.log 2>&1 &
		prof_perf=$!
		# its events open before the counts start
		sleep 1
	fi
	prof_counts > $tmp/prof0
	prof_hist=0
	{ echo "$wq_hist" > $wq_event/trigger; } 2> /dev/null && prof_hist=1
}
# perf_samples TAG: perf's samples of the job, one line per function
# they count for: TAG SAMPLES DSO FUNCTION
perf_samples() {
	# it writes its file's header as it ends (perf handles SIGINT itself,
	# which a background job of dash's would otherwise ignore)
	kill -INT "$prof_perf"
	wait "$prof_perf"
	"$dir/perf" script -i $tmp/perf.data -F ip,sym,dso 2> $tmp/perf-script.err |
		awk -v tag="$1" -v skip="$perf_skip" '
		function take() { if (pick != "") n[pick]++; else if (first != "") n[first]++ }
		/^[ \t]*$/ { take(); pick = first = ""; next }
		{ sym = $2; dso = $NF; gsub(/[()]/, "", dso)
			f = dso " " sym
			if (first == "") first = f
			if (pick == "" && sym !~ skip) pick = f }
		END { take(); for (f in n) printf "%s %d %s\n", tag, n[f], f }'
	[ -s $tmp/perf.data ] || { echo "BENCH-ERROR perf record: $(tail -n 3 $tmp/perf.log)"; }
}
prof_end() {
	prof_counts > $tmp/prof1
	[ -z "$prof_perf" ] || perf_samples "BENCH-PERF $1 $2 $3"
	awk -v tag="BENCH-PROF $1 $2 $3" '
		NR == FNR { a[$1] = $2; t[$1] = $3; next }
		$1 ~ /^cpu/ { d = $3 - t[$1]
			printf "%s %s_busy %d\n", tag, $1, d ? ($2 - a[$1]) * 1000 / d : 0; next }
		{ printf "%s %s %d\n", tag, $1, $2 - a[$1] }' $tmp/prof0 $tmp/prof1
	[ $prof_hist = 1 ] || return 0
	# "{ function: [addr] name [module] } hitcount: N" per function
	sed -n 's/^{ function: *\[[0-9a-f]*\] \([^ ]*\).*hitcount: *\([0-9]*\).*/\1 \2/p' \
		$wq_event/hist | awk -v tag="BENCH-PROF $1 $2 $3" '
		{ n += $2; printf "%s wq %s %d\n", tag, $1, $2 } END { printf "%s wq_runs %d\n", tag, n }'
	echo "!$wq_hist" > $wq_event/trigger
}

# fio_json NAME PASS JOB fio-option...: one fixed-time job on /dev/$ns
fio_json() {
	fj_dev=$1 fj_pass=$2 fj_job=$3
	shift 3
	prof_start
	timeout 300 fio --name="$fj_job" --filename="/dev/$ns" --ioengine=libaio --direct=1 \
		--time_based --runtime=$fio_runtime --ramp_time=$fio_ramp \
		--output-format=json --output=$tmp/fio.json "$@" > $tmp/fio.log 2>&1
	fj_rc=$?
	prof_end "$fj_dev" "$fj_job" "$fj_pass"
	if [ $fj_rc = 0 ] && [ -s $tmp/fio.json ]; then
		sed "s/^/BENCH-FIO $fj_dev $fj_job $fj_pass /" $tmp/fio.json
	else
		echo "BENCH-ERROR fio $fj_job on $fj_dev (/dev/$ns): status $fj_rc"
		sed 's/^/# /' $tmp/fio.log $tmp/fio.json 2> /dev/null | tail -n 20
	fi
}

# nvmeof_bench NAME ADDR PASS: the target on NAME at ADDR, the host
# connected to it, the fio jobs, everything undone
nvmeof_bench() {
	nb_nqn=nqn.2026-12.org.example.krwq:bench-$1
	nb_fail=$fail
	modules_up 0
	target_up "$nb_nqn" "$2"
	if ! failed_since "$nb_fail" && connect "$nb_nqn" "$2" && [ -n "$ns" ]; then
		fio_json "$1" "$3" randread_4k_qd1 --rw=randread --bs=4k --iodepth=1
		fio_json "$1" "$3" randread_4k_qd32 --rw=randread --bs=4k --iodepth=32
		# two fio processes, one per CPU and so one per I/O queue
		fio_json "$1" "$3" randread_4k_qd32_2jobs --rw=randread --bs=4k --iodepth=32 \
			--numjobs=2 --group_reporting
		fio_json "$1" "$3" read_128k_qd4 --rw=read --bs=128k --iodepth=4
		disconnect "$nb_nqn"
		# RNR retries and ACK timeouts would say where krwq waited
		case $1 in
		krwq*)
			echo "# $1 counters after pass $3:"
			rdma statistic show link "$1/1" 2>&1 | sed 's/^/#   /' ;;
		esac
	else
		echo "BENCH-ERROR NVMe-oF on $1: no namespace (see the TAP lines above)"
	fi
	if ctrl_of "$nb_nqn" > /dev/null; then timeout 60 nvme disconnect -n "$nb_nqn" > /dev/null 2>&1; fi
	target_down "$nb_nqn"
	modules_down
}

# the devices stay up for rping below
device_up krwq krwqe0 ulp1 192.0.2.1
device_up rxe rxe0 ulp2 198.51.100.1
nvmeof_bench krwqe0 192.0.2.1 1
nvmeof_bench rxe0 198.51.100.1 1
nvmeof_bench rxe0 198.51.100.1 2
nvmeof_bench krwqe0 192.0.2.1 2

# --- rping connection set-ups

# rping_server NAME ADDR PORT: a persistent server on ADDR:PORT, one ping
# per connection (its pid in rs_pid); one untimed connection made, which
# also waits for it to listen
rping_server() {
	timeout 900 rping -s -P -a "$2" -p "$3" -C 1 > "$tmp/rping-s-$1.log" 2>&1 &
	rs_pid=$!
	rs_k=0
	until timeout 60 rping -c -a "$2" -p "$3" -C 1 > $tmp/rping-c.log 2>&1; do
		rs_k=$((rs_k + 1))
		[ $rs_k -lt 30 ] || { echo "BENCH-ERROR rping to $2 ($1)"; return 1; }
		sleep 1
	done
}

# rping_round NAME ADDR PORT: SETUPS client runs in a row; their time,
# in hundredths of a second, in rr_centis
rping_round() {
	rr_t0=$(centis)
	rr_i=0
	while [ $rr_i -lt $rping_setups ]; do
		if ! timeout 60 rping -c -a "$2" -p "$3" -C 1 > $tmp/rping-c.log 2>&1; then
			echo "BENCH-ERROR rping -c -a $2 -p $3 -C 1 ($1) failed"
			sed 's/^/# /' $tmp/rping-c.log | tail -n 5
			return 1
		fi
		rr_i=$((rr_i + 1))
	done
	rr_centis=$(($(centis) - rr_t0))
}

# per_setup CENTIS: hundredths of a second for all set-ups, in ms each
per_setup() {
	awk -v c="$1" -v n=$((rping_rounds * rping_setups)) 'BEGIN { printf "%.2f", c * 10 / n }'
}

kport=$((port + 1)) rport=$((port + 2))
kpid='' rpid=''
if rping_server krwqe0 192.0.2.1 $kport; then
	kpid=$rs_pid
	if rping_server rxe0 198.51.100.1 $rport; then
		rpid=$rs_pid
		kc=0 xc=0 r=0
		while [ $r -lt $rping_rounds ]; do
			rping_round krwqe0 192.0.2.1 $kport || break
			kc=$((kc + rr_centis))
			echo "# rping round $r: krwqe0 ${rr_centis}0 ms for $rping_setups"
			rping_round rxe0 198.51.100.1 $rport || break
			xc=$((xc + rr_centis))
			echo "# rping round $r: rxe0 ${rr_centis}0 ms for $rping_setups"
			r=$((r + 1))
		done
		if [ $r = $rping_rounds ]; then
			echo "BENCH ulp rping_setup_ms krwqe0 $(per_setup $kc)"
			echo "BENCH ulp rping_setup_ms rxe0 $(per_setup $xc)"
			echo "BENCH ulp rping_setups krwqe0 $((rping_rounds * rping_setups))"
		fi
	fi
fi
# rxe's removal waits for every process that has the device open
for p in $kpid $rpid; do
	kill "$p" 2> /dev/null
	wait "$p" 2> /dev/null
done

device_down krwqe0 ulp1
device_down rxe0 ulp2
tap_summary > /dev/null || echo "BENCH-ERROR $fail set-up step(s) failed (the TAP lines above)"
echo "BENCH-DONE"
