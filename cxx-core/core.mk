# SPDX-License-Identifier: GPL-2.0
#
# core.mk - how the C++ core is compiled, written down once.  Kbuild (the
# module), kunit/host/host.mk (GoogleTest), kunit/host/fuzz.mk (libFuzzer),
# bench/bench.mk (Google Benchmark) and scripts/lint (clang-tidy and
# clang's thread-safety analysis, through `make core-flags-clang`) all take
# the core's flags and its layout header from here.  Each build adds only
# what is its own: the kernel's c_flags, sanitizers, -O and -g, include
# paths.

# The core's translation units: cxx-core/<unit>.cpp.
KRWQ_CORE_UNITS := receive_queue seam

# The language.  C++20 in GNU's dialect (the kernel's C is gnu11), with
# nothing that needs a C++ runtime in a module: no standard headers, no
# exceptions, no RTTI, no guarded static initialisation, no atexit
# destructors.  The kernel is built with -fno-strict-aliasing and the core
# reads C's structs through its own views (layout.h), so it is built that
# way everywhere, host builds included.
# -fno-tree-loop-distribute-patterns: a copy loop over a scatter list stays
# a loop instead of becoming a memcpy() call (see copy_sges()).
KRWQ_CORE_CXXFLAGS := -std=gnu++20 -ffreestanding -nostdinc++ -fno-exceptions -fno-rtti \
	-fno-threadsafe-statics -fno-use-cxa-atexit -fno-strict-aliasing \
	-fno-tree-loop-distribute-patterns

# Warnings, on top of -Wall (the kernel's c_flags carry it; host builds add
# it themselves).
KRWQ_CORE_WARNFLAGS := -Wextra -Wimplicit-fallthrough -Wno-unused-parameter \
	-Wno-missing-field-initializers -Werror

# GCC builds the module, clang the fuzzer and the lint checks.  Flags GCC
# has and clang lacks are dropped for clang: clang has no switch that
# keeps its loop-idiom pass from turning copy_sges() into memcpy(), which
# costs a host build nothing.
KRWQ_CORE_GCC_ONLY := -fno-tree-loop-distribute-patterns
KRWQ_CORE_CLANG_CXXFLAGS := $(filter-out $(KRWQ_CORE_GCC_ONLY),$(KRWQ_CORE_CXXFLAGS))

# --- the layout the core is checked against ----------------------------------
# module/layout.c turns the real C definitions (module/rq.h, the kernel's
# struct ib_sge and struct ib_recv_wr) into generated/krwq_layout.h, which
# cxx-core/layout.h static_asserts its views against.
ifneq ($(KERNELRELEASE),)
# In the kernel: layout.c is compiled to assembly with this kernel's flags
# and its markers become the header, as the kernel makes asm-offsets.h
# (the result cannot be run: the kernel may be cross-compiled).
$(obj)/generated/krwq_layout.h: $(obj)/module/layout.s FORCE
	$(call filechk,offsets,KRWQ_GENERATED_LAYOUT_H)

targets += module/layout.s generated/krwq_layout.h
else
# On the host: layout.c is built against hostshim/include (where
# linux/kbuild.h prints instead of emitting markers) and run.  One header
# serves every host build (GCC or clang: the same x86-64 ABI).
KRWQ_HOST_LAYOUT_DIR := build/host-layout/generated

$(KRWQ_HOST_LAYOUT_DIR)/krwq_layout.h: module/layout.c module/rq.h \
		$(wildcard hostshim/include/linux/*.h hostshim/include/rdma/*.h)
	@mkdir -p $(dir $@)
	$(CC) -Ihostshim/include -Imodule -o build/host-layout/layout-gen $<
	{ echo '#ifndef KRWQ_GENERATED_LAYOUT_H'; echo '#define KRWQ_GENERATED_LAYOUT_H'; \
	  build/host-layout/layout-gen; echo '#endif'; } > $@.tmp
	mv $@.tmp $@
endif
