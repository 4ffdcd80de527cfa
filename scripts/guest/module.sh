# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
# Loading a module built outside the guest's modules tree, inside the VM;
# sourced from /krwq/lib.

# insmod_deps KO [PARAM...]: KO's dependencies from the guest's modules
# tree (modprobe: a modular UDP tunnel, a modular RDMA core), then KO
# itself with PARAMs.  insmod alone resolves nothing, and scripts/vm
# loads them only for the krwq.ko it loads itself (not with --no-module).
insmod_deps() {
	_deps=$(modinfo -F depends "$1" | tr , ' ')
	# shellcheck disable=SC2086 # one module name per word
	[ -z "$_deps" ] || modprobe -a $_deps || return
	insmod "$@"
}
