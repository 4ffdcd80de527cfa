# SPDX-License-Identifier: GPL-2.0
#
# krwq - top-level entry points.  `make help` lists them.
#
# KDIR is the kernel build tree to build against.  By default it is the
# project's test kernel (built once by scripts/test-kernel and cached in
# ~/.cache/krwq); point it at /lib/modules/$(uname -r)/build for your own.

# Kbuild reads the file named Kbuild, never this one.

# Resolved only by the targets that need a kernel: the test kernel's tree
# unless KDIR is given (scripts/test-kernel builds it once, then caches).
kdir = $(or $(KDIR),$(shell scripts/test-kernel))

.PHONY: all modules user demo check check-race host-test fuzz bench clean help kernel lint \
	core-flags-clang

all: modules

modules:
	$(MAKE) -C "$(kdir)" M=$(CURDIR) modules

user:
	$(MAKE) -C user

kernel:
	scripts/test-kernel

demo:
	scripts/demo

check:
	scripts/check

# KCSAN: a second cached kernel; not part of make check
check-race:
	scripts/check-race

lint:
	scripts/lint

host-test: build/host-asan/rq_test build/host-tsan/rq_test
	build/host-asan/rq_test
	TSAN_OPTIONS=halt_on_error=1 build/host-tsan/rq_test

include kunit/host/host.mk
include kunit/host/fuzz.mk

# libFuzzer on the core for FUZZ_SECONDS (make check runs it for a minute)
FUZZ_SECONDS ?= 600
fuzz:
	FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_MERGE=1 scripts/check-fuzz

include bench/bench.mk

# The core's flags for clang (cxx-core/core.mk), for scripts/lint's
# clang-tidy and thread-safety runs.
core-flags-clang:
	@echo $(KRWQ_CORE_CLANG_CXXFLAGS) -Wall $(KRWQ_CORE_WARNFLAGS)

bench:
	scripts/bench

clean:
	rm -rf build generated
	rm -f $(shell find module kunit cxx-core bench -name '*.o' -o -name '.*.cmd' -o -name '*.s') \
		*.ko *.mod *.mod.c *.o .*.cmd Module.symvers modules.order \
		bench/*.ko bench/*.mod bench/*.mod.c bench/Module.symvers bench/modules.order

help:
	@echo 'make demo       boot the test VM, load krwq, show it working'
	@echo 'make check      every test; ends with "N passed, N failed"'
	@echo 'make check-race krwq under KCSAN (a second cached test kernel)'
	@echo 'make            build krwq.ko and the KUnit module (KDIR=...)'
	@echo 'make host-test  the core on the host: GoogleTest under ASan+UBSan, TSan'
	@echo 'make fuzz       libFuzzer on the core for FUZZ_SECONDS (default 600)'
	@echo 'make bench      benchmarks against rdmavt, rdma_rxe and a lock-free ring'
	@echo 'make lint       checkpatch, sparse, kernel-doc, clang-format, clang-tidy'
	@echo 'make user       user/ programs (libibverbs) into build/user'
	@echo 'make kernel     build (once) the cached test kernel'
