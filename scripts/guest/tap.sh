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
#   tap_run FILE CMD...       CMD's output in FILE, its error output after
#                             it; CMD's exit status
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
# it.  By default tap_log_tail's output.
tap_detail() {
	tap_log_tail
}

# tap_log_tail: the last lines of the file $log, if there is one, less
# tap_quiet's lines; a log of a client and its server (a "--- server"
# line between them, as pair.sh writes it) shows the last lines of each.
tap_log_tail() {
	[ -n "${log:-}" ] && [ -f "$log" ] || return 0
	if ! grep -qx -- '--- server' "$log"; then
		tap_quiet < "$log" | tail -n 25
		return 0
	fi
	sed '/^--- server$/,$d' "$log" | tap_quiet | tail -n 15
	echo "--- server"
	sed -n '/^--- server$/,$p' "$log" | sed 1d | tap_quiet | tail -n 15
}

# tap_quiet: lines a failure never needs: rping's data, the addresses and
# GIDs the pingpongs and perftest print, perftest's rulers
tap_quiet() {
	grep -v -e 'ping data: ' -e ' address: ' -e '^ GID: ' -e '^-----'
}

# tap_run FILE CMD...: CMD with its output in FILE, then, under a
# "--- stderr" line, its error output.  A program whose output is a file
# buffers it, so an error it printed last would otherwise stand above
# lines it printed first, out of the last lines a failure shows.
tap_run() {
	tr_file=$1
	shift
	"$@" > "$tr_file" 2> "$tr_file.err"
	tr_rc=$?
	if [ -s "$tr_file.err" ]; then
		[ -z "$(tail -c 1 "$tr_file")" ] || echo >> "$tr_file"
		echo "--- stderr" >> "$tr_file"
		cat "$tr_file.err" >> "$tr_file"
	fi
	rm -f "$tr_file.err"
	return $tr_rc
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
