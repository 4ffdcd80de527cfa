# SPDX-License-Identifier: GPL-2.0
#
# krwq - top-level entry points.  `make help` lists them.
#
# KDIR is the kernel build tree to build against: by default the running
# kernel's, which its headers package puts at /lib/modules/$(uname -r)/build.
# The project's own test kernel (built once by scripts/test-kernel, cached
# in ~/.cache/krwq) is what make demo, check and bench build against; they
# pass it as KDIR themselves.  To build against it by hand:
#   make KDIR="$(scripts/test-kernel)"

# Kbuild reads the file named Kbuild, never this one.

KDIR ?= /lib/modules/$(shell uname -r)/build
# the release of KDIR's kernel, as in the modules' vermagic (Debian's
# headers have another string in include/config/kernel.release)
krel = $(shell sed -n 's/^\#define UTS_RELEASE "\(.*\)"$$/\1/p' \
	"$(KDIR)/include/generated/utsrelease.h" 2>/dev/null)
modlib = $(INSTALL_MOD_PATH)/lib/modules/$(krel)
depmod = if [ -d "$(modlib)" ]; then \
	$(DEPMOD) $(if $(INSTALL_MOD_PATH),-b "$(INSTALL_MOD_PATH)") -a $(krel); fi
# install's folder under /lib/modules/<release>, krwq's alone: uninstall
# removes it whole
KRWQ_MOD_DIR := updates/krwq
DEPMOD ?= /sbin/depmod
MODINFO ?= /sbin/modinfo

.PHONY: all modules install uninstall kdir-check user demo check check-race check-blktests \
	host-test fuzz bench \
	results clean help kernel lint core-flags-clang coverage python3

all: modules

# Fails at once, and says what to do, when KDIR is no kernel build tree
# (rather than falling back to building a kernel).
kdir-check:
	@if [ ! -f "$(KDIR)/Makefile" ] || [ -z "$(krel)" ]; then \
		echo "krwq: no kernel build tree at $(KDIR)" >&2; \
		if [ "$(origin KDIR)" = file ]; then \
			echo "krwq: install the running kernel's headers:" \
				"apt-get install --no-install-recommends linux-headers-$$(uname -r)," >&2; \
		fi; \
		echo "krwq: or build against another tree: make KDIR=DIR" \
			"(the project's test kernel: make KDIR=\"\$$(scripts/test-kernel)\")" >&2; \
		exit 1; \
	fi

modules: kdir-check
	$(MAKE) -C "$(KDIR)" M=$(CURDIR) modules

# install: the modules of the last build, which must be for KDIR's
# release, into $(INSTALL_MOD_PATH)/lib/modules/<release>/$(KRWQ_MOD_DIR),
# then depmod.  Build first as yourself (make), install as root.
install: kdir-check
	@v=$$($(MODINFO) -F vermagic krwq.ko 2>/dev/null) || \
		{ echo "krwq: no krwq.ko: build it first: make KDIR=$(KDIR)" >&2; exit 1; }; \
	case "$$v" in "$(krel) "*) ;; *) \
		echo "krwq: krwq.ko is built for $${v%% *}, not $(krel): make KDIR=$(KDIR) first" >&2; \
		exit 1 ;; esac
	$(MAKE) -C "$(KDIR)" M=$(CURDIR) INSTALL_MOD_DIR=$(KRWQ_MOD_DIR) modules_install
	$(depmod)

# uninstall: what install put there (the folder is krwq's alone), then depmod
uninstall: kdir-check
	rm -rf "$(modlib)/$(KRWQ_MOD_DIR)"
	@rmdir --ignore-fail-on-non-empty "$(modlib)/$(dir $(KRWQ_MOD_DIR))" 2>/dev/null || true
	$(depmod)

user:
	$(MAKE) -C user

# The harness is Python, so a fresh machine needs python3 before anything
# else: root gets it installed, anyone else the apt-get line to run.
python3:
	@command -v python3 > /dev/null || { \
		[ "$$(id -u)" -eq 0 ] || { echo "krwq: missing packages; run: sudo apt-get install -y --no-install-recommends python3" >&2; exit 1; }; \
		echo "krwq: installing python3" >&2; \
		apt-get update -q >&2 && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends python3 >&2; }

# the project's test kernel (prints its build tree)
kernel: python3
	scripts/test-kernel

demo: python3
	scripts/demo

check: python3
	scripts/check

# KCSAN: a second cached kernel; also the race stage of make check
check-race: python3
	scripts/check-race

# blktests' nvme and srp groups (or GROUPS: nvme/NNN srp/NNN...) on krwq beside
# rdma_rxe and siw, in one boot of Debian's kernel; too long for make check
# (docs/testing.md)
check-blktests: python3
	scripts/check-blktests $(GROUPS)

lint: python3
	scripts/lint

# line and branch coverage into build/coverage: the core on the host, and
# krwq.ko under the VM stages on a third cached kernel (gcov); not part of
# make check
coverage: python3
	scripts/coverage

host-test: build/host-asan/rq_test build/host-tsan/rq_test
	build/host-asan/rq_test
	TSAN_OPTIONS=halt_on_error=1 build/host-tsan/rq_test

include kunit/host/host.mk
include kunit/host/fuzz.mk

# libFuzzer on the core for FUZZ_SECONDS (make check runs a million executions)
FUZZ_SECONDS ?= 600
fuzz: python3
	FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_MERGE=1 scripts/check-fuzz

include bench/bench.mk

# The core's flags for clang (cxx-core/core.mk), for scripts/lint's
# clang-tidy and thread-safety runs.
core-flags-clang:
	@echo $(KRWQ_CORE_CLANG_CXXFLAGS) -Wall $(KRWQ_CORE_WARNFLAGS)

bench: python3
	scripts/bench

# docs/results.md from the last make check and make bench
results: python3
	python3 scripts/results.py doc docs/results.md

clean:
	rm -rf build generated
	rm -f $(shell find module kunit vmhelpers cxx-core bench -name '*.o' -o -name '.*.cmd' -o -name '*.s') \
		*.ko *.mod *.mod.c *.o .*.cmd Module.symvers modules.order \
		bench/*.ko bench/*.mod bench/*.mod.c bench/Module.symvers bench/modules.order

help:
	@echo "make demo       boot Debian's kernel in a VM, load krwq, show it working"
	@echo 'make check      every test; ends with "N passed, N failed"'
	@echo 'make check-race krwq under KCSAN (a second cached test kernel)'
	@echo 'make check-blktests  blktests'"'"' nvme and srp groups on RDMA (or GROUPS=nvme/NNN...) on krwq'
	@echo '                beside rdma_rxe and siw in Debian'"'"'s kernel; BLKTESTS_DIR=a clone, else cloned'
	@echo 'make coverage   line and branch coverage of the core (host) and of krwq.ko'
	@echo '                under the VM stages (a gcov test kernel) into build/coverage'
	@echo 'make            build krwq.ko against the running kernel (its headers)'
	@echo '                or KDIR=DIR; the KUnit modules too if DIR has CONFIG_KUNIT'
	@echo 'make install    install the build into /lib/modules/<release>/updates/krwq,'
	@echo '                depmod (KDIR=..., INSTALL_MOD_PATH=...); make uninstall'
	@echo 'make host-test  the core on the host: GoogleTest under ASan+UBSan, TSan'
	@echo 'make fuzz       libFuzzer on the core for FUZZ_SECONDS (default 600)'
	@echo 'make bench      benchmarks against rdmavt, rdma_rxe and a lock-free ring'
	@echo 'make results    docs/results.md from the last make check and make bench'
	@echo 'make lint       checkpatch, sparse, kernel-doc, clang-format, clang-tidy, shellcheck, pyflakes'
	@echo 'make user       user/ programs (libibverbs) into build/user'
	@echo 'make kernel     build (once) the cached test kernel; make KDIR="$$(scripts/test-kernel)"'
	@echo '                builds against it'
