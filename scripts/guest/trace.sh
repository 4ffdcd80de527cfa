#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Inside the test VM: krwq's trace events, read through plain tracefs.
# Enables the six krwq events, runs ibv_rc_pingpong and krwq_verbs_test
# on krwq0 (which between them post, take, flush, raise the SRQ limit,
# deliver and complete), then checks that each event fired and that its
# fields agree with the device's counters and with each other.  One TAP
# line per check, then "N passed, N failed".
T=/sys/kernel/tracing
E=$T/events/krwq
EVENTS="krwq_post_recv krwq_take krwq_flush krwq_srq_limit krwq_deliver krwq_cqe"
ITERS=100
SIZE=4096
# shellcheck source=tap.sh # scripts/vm puts it in /krwq/lib
. /krwq/lib/tap.sh
# shellcheck source=pair.sh
. /krwq/lib/pair.sh

# stat NAME FILE: a counter of `rdma statistic show link krwq0/1` output
stat() {
	tr ' ' '\n' < "$2" | grep -A1 -x "$1" | tail -n 1
}

# ev EVENT AWK-CONDITION [AWK-EXPR]: over the EVENT lines of the trace
# whose fields (f["name"]) satisfy the condition, print the count, or
# the sum of AWK-EXPR.
ev() {
	awk -v ev="$1:" -v expr="${3:-}" '
		$0 ~ / krwq_[a-z_]+: / {
			for (i = 1; i <= NF; i++) if ($i == ev) break
			if (i > NF) next
			delete f
			for (i++; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
			if ('"$2"') { c++; s += ('"${3:-1}"') }
		}
		END { print (expr == "" ? c : s) + 0 }' /tmp/trace.txt
}

ok=0
for e in $EVENTS; do
	[ -f "$E/$e/enable" ] || ok=1
done
report $ok "tracefs lists the six krwq events" "$(cd "$E" 2>&1 && echo *)"

# user-space tools read the print format; the enums must be numbers there
c=$(cat $E/krwq_*/format | grep -c 'IB_W[CR]_')
report "$([ "$c" = 0 ]; echo $?)" "the events' formats print enums by value, not by IB_ name" "$c lines with IB_"

echo 0 > $T/tracing_on
echo > $T/trace
echo 8192 > $T/buffer_size_kb
for e in $EVENTS; do
	echo 1 > "$E/$e/enable"
done
rdma statistic show link krwq0/1 > /tmp/stat-before
echo 1 > $T/tracing_on

log=/tmp/pingpong.log
port=18699
pair_timeout=120
pair 'iters in' "ibv_rc_pingpong with the events on" \
	ibv_rc_pingpong -d krwq0 -g 0 -n $ITERS -s $SIZE
# the checks below give their own detail, not the pingpong's output
unset log
krwq_verbs_test -d krwq0 > /tmp/verbs.log 2>&1
report $? "krwq_verbs_test with the events on" "$(tail -n 1 /tmp/verbs.log)"

echo 0 > $T/tracing_on
rdma statistic show link krwq0/1 > /tmp/stat-after
cat $T/trace > /tmp/trace.txt
for e in $EVENTS; do
	echo 0 > "$E/$e/enable"
done
lost=$(cat $T/per_cpu/cpu*/stats | awk '$1 == "overrun:" { s += $2 } END { print s + 0 }')
report "$([ "$lost" = 0 ]; echo $?)" "no event was lost (overruns: $lost)"

for e in $EVENTS; do
	c=$(ev "$e" 1)
	report "$([ "$c" -gt 0 ]; echo $?)" "$e fired ($c times)"
done
c=$(ev '[a-z_]+' 'f["dev"] != "krwq0"')
report "$([ "$c" = 0 ]; echo $?)" "every event names dev=krwq0" "$c do not"

# delta NAME: how much a device counter moved while tracing
delta() {
	echo $(( $(stat "$1" /tmp/stat-after) - $(stat "$1" /tmp/stat-before) ))
}

# post_recv: what it says was posted is what rx_posted counted
d=$(delta rx_posted) c=$(ev krwq_post_recv 1 'f["posted"]')
report "$([ "$c" = "$d" ]; echo $?)" "krwq_post_recv: posted adds up to rx_posted's move ($c, $d)"
c=$(ev krwq_post_recv 'f["ret"] != 0 && f["ret"] != -12 && f["ret"] != -22 || f["max_wr"] < 1')
report "$([ "$c" = 0 ]; echo $?)" "krwq_post_recv: ret is 0, -ENOMEM or -EINVAL, max_wr >= 1" "$c do not"
d=$(delta rx_post_full) c=$(ev krwq_post_recv 'f["ret"] == -12')
report "$([ "$c" = "$d" ]; echo $?)" "krwq_post_recv: ret -ENOMEM as often as rx_post_full moved ($c, $d)"

# take: every take that found a WQE is one rx_taken
d=$(delta rx_taken) c=$(ev krwq_take 'f["ret"] != 0')
report "$([ "$c" = "$d" ]; echo $?)" "krwq_take: takes that found a WQE match rx_taken's move ($c, $d)"
c=$(ev krwq_take 'f["ret"] < -22 || f["ret"] > 1 || f["num_sge"] > 255 || f["ret"] < 1 && f["num_sge"] != 0')
report "$([ "$c" = 0 ]; echo $?)" "krwq_take: ret in {-EINVAL, 0, 1}, num_sge only when taken" "$c do not"

# flush: one per rx_flushed, each with its FLUSH_ERR completion
d=$(delta rx_flushed) c=$(ev krwq_flush 1)
report "$([ "$c" = "$d" ]; echo $?)" "krwq_flush: as many as rx_flushed moved ($c, $d)"
miss=$(awk '
	function fields(i) { delete f; for (; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] } }
	{ for (i = 1; i <= NF; i++) if ($i ~ /^krwq_(flush|cqe):$/) break }
	i > NF { next }
	$i == "krwq_flush:" { fields(i + 1); want[f["qpn"] " " f["wr_id"]]++; next }
	{ fields(i + 1); if (f["status"] == "WR_FLUSH_ERR" && f["opcode"] == "RECV") got[f["qpn"] " " f["wr_id"]]++ }
	END { for (k in want) if (got[k] < want[k]) m++; print m + 0 }' /tmp/trace.txt)
report "$([ "$miss" = 0 ]; echo $?)" "krwq_flush: each flushed wr_id has a FLUSH_ERR krwq_cqe on its QP" "$miss without"

# SRQ limit: one per srq_limit_events, each after a take that reported it
d=$(delta srq_limit_events) c=$(ev krwq_srq_limit 1) t=$(ev krwq_take 'f["limit"] == 1 && f["srq"] == 1')
report "$([ "$c" = "$d" ] && [ "$c" = "$t" ]; echo $?)" \
	"krwq_srq_limit: as many as srq_limit_events moved and as takes flagged limit ($c, $d, $t)"
c=$(ev krwq_srq_limit 'f["max_wr"] < 1')
report "$([ "$c" = 0 ]; echo $?)" "krwq_srq_limit: max_wr >= 1" "$c do not"

# deliver and cqe: the pingpong's messages, sent and received
c=$(ev krwq_deliver 'f["opcode"] == "SEND" && f["length"] == '$SIZE' && f["status"] == "SUCCESS" && f["rnr"] == 0 && f["no_ack"] == 0 && f["src_qpn"] != f["dst_qpn"]')
report "$([ "$c" -ge $((2 * ITERS)) ]; echo $?)" "krwq_deliver: the pingpong's $SIZE-byte SENDs between two QPs ($c, want >= $((2 * ITERS)))"
c=$(ev krwq_deliver 'f["src_qpn"] < 2 || f["dst_qpn"] < 1')
report "$([ "$c" = 0 ]; echo $?)" "krwq_deliver: source and destination QPNs are real" "$c are not"
c=$(ev krwq_cqe 'f["opcode"] == "RECV" && f["status"] == "SUCCESS" && f["byte_len"] == '$SIZE)
report "$([ "$c" -ge $((2 * ITERS)) ]; echo $?)" "krwq_cqe: the pingpong's receive completions ($c, want >= $((2 * ITERS)))"
c=$(ev krwq_cqe 'f["opcode"] == "SEND" && f["status"] == "SUCCESS"')
report "$([ "$c" -ge $((2 * ITERS)) ]; echo $?)" "krwq_cqe: the pingpong's send completions ($c, want >= $((2 * ITERS)))"
c=$(ev krwq_cqe 'f["qpn"] < 2 || f["cqn"] == ""')
report "$([ "$c" = 0 ]; echo $?)" "krwq_cqe: every completion names its QP and CQ" "$c do not"

tap_summary
