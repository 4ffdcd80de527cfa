# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# tap.sh - TAP lines for the guest scripts, which source it from /krwq/lib
# (scripts/vm puts it there): one numbered line per check and the summary.
#   report OK NAME [DETAIL]   OK is an exit status; a failure is followed
#                             by DETAIL, or else by tap_detail's output,
#                             as "# " lines
#   tap_check NAME CMD...     report CMD's exit status as NAME, its output
#                             in the file $log
#   tap_summary               "P passed, F failed"; status 0 iff none failed
# With tap_t0 set (seconds of uptime), each result is preceded by the
# seconds since then.
pass=0
fail=0
n=0

report() {
	n=$((n + 1))
	[ -z "${tap_t0:-}" ] ||
		echo "# at $(($(cut -d. -f1 /proc/uptime) - tap_t0)) s"
	if [ "$1" = 0 ]; then
		pass=$((pass + 1))
		echo "ok $n - $2"
		return 0
	fi
	fail=$((fail + 1))
	echo "not ok $n - $2"
	if [ $# -ge 3 ]; then
		[ -z "$3" ] || printf '%s\n' "$3" | sed 's/^/# /'
	else
		tap_detail | sed 's/^/# /'
	fi
	return 0
}

# tap_detail: what a failure without DETAIL shows; a script may redefine
# it.  By default the last lines of the file $log, if there is one.
tap_detail() {
	[ -n "${log:-}" ] && [ -f "$log" ] && tail -n 25 "$log"
}

tap_check() {
	tc_name=$1
	shift
	"$@" > "$log" 2>&1
	report $? "$tc_name"
}

tap_summary() {
	echo "$pass passed, $fail failed"
	[ "$fail" = 0 ]
}
