# SPDX-License-Identifier: GPL-2.0
#
# host.mk - the C++ core built for user space with the host seam, and the
# shared receive-queue cases run under GoogleTest.  Included by the
# top-level Makefile; one build folder per sanitizer set:
#   make host-test      ASan + UBSan, then TSan
#   build/host-cov/     clang's source-based coverage, for scripts/coverage
# The core's own flags and its layout header come from cxx-core/core.mk.
HOST_SRC := $(CURDIR)
include cxx-core/core.mk

HOST_SAN_asan := -fsanitize=address,undefined -fno-sanitize-recover=all
HOST_SAN_tsan := -fsanitize=thread
# coverage: no sanitizer; built by clang, whose counts (LLVM_PROFILE_FILE)
# llvm-cov turns into an lcov tracefile
HOST_SAN_cov := -fprofile-instr-generate -fcoverage-mapping
HOST_CC_cov := clang
HOST_CXX_cov := clang++

HOST_CPPFLAGS := -I$(HOST_SRC)/cxx-core -I$(HOST_SRC)/hostshim/include \
	-I$(HOST_SRC)/module -I$(HOST_SRC)/kunit
# what the C side sees instead of the kernel's headers: a change to it
# (the host spinlock_t, say) changes module/rq.h's structs
HOST_INCLUDE_HDRS := $(wildcard hostshim/include/*/*.h)
HOST_WARN := -Wall -Wextra -Werror -Wno-unused-parameter
# The core on the host: the kernel's language flags, optimised as the
# module is, with debug information for the sanitizers' reports.
HOST_CORE_FLAGS := $(KRWQ_CORE_CXXFLAGS) -Wall $(KRWQ_CORE_WARNFLAGS) -O2 -g \
	-I$(HOST_SRC)/cxx-core -I$(KRWQ_HOST_LAYOUT_DIR)
# the same for clang (kunit/host/fuzz.mk, the coverage build)
HOST_CORE_FLAGS_CLANG := $(filter-out $(KRWQ_CORE_GCC_ONLY),$(HOST_CORE_FLAGS))
HOST_CORE_FLAGS_cov := $(HOST_CORE_FLAGS_CLANG)

# A variant's compilers and core flags: its own if it names them, else
# GCC's.
host_cc = $(or $(HOST_CC_$(1)),$(CC))
host_cxx = $(or $(HOST_CXX_$(1)),$(CXX))
host_core_flags = $(or $(HOST_CORE_FLAGS_$(1)),$(HOST_CORE_FLAGS))

# $(call host_rules,VARIANT)
define host_rules
build/host-$(1)/%.o: cxx-core/%.cpp $(KRWQ_HOST_LAYOUT_DIR)/krwq_layout.h $(wildcard cxx-core/*.h)
	@mkdir -p $$(dir $$@)
	$$(call host_cxx,$(1)) $$(call host_core_flags,$(1)) $$(HOST_SAN_$(1)) -c -o $$@ $$<

build/host-$(1)/host_seam.o: hostshim/host_seam.c module/rq.h kunit/rq_env.h $(HOST_INCLUDE_HDRS)
	@mkdir -p $$(dir $$@)
	$$(call host_cc,$(1)) -std=gnu11 -O1 -g $$(HOST_WARN) $$(HOST_SAN_$(1)) $$(HOST_CPPFLAGS) -c -o $$@ $$<

build/host-$(1)/rq_cases.o: kunit/rq_cases.c kunit/rq_env.h $(HOST_INCLUDE_HDRS)
	@mkdir -p $$(dir $$@)
	$$(call host_cc,$(1)) -std=gnu11 -O1 -g $$(HOST_WARN) $$(HOST_SAN_$(1)) $$(HOST_CPPFLAGS) -c -o $$@ $$<

build/host-$(1)/rq_test.o: kunit/host/rq_test.cpp kunit/rq_env.h $(HOST_INCLUDE_HDRS)
	@mkdir -p $$(dir $$@)
	$$(call host_cxx,$(1)) -std=gnu++20 -O1 -g $$(HOST_WARN) $$(HOST_SAN_$(1)) $$(HOST_CPPFLAGS) -c -o $$@ $$<

build/host-$(1)/rq_views.o: kunit/rq_views.c module/rq.h kunit/rq_env.h $(HOST_INCLUDE_HDRS)
	@mkdir -p $$(dir $$@)
	$$(call host_cc,$(1)) -std=gnu11 -O1 -g $$(HOST_WARN) $$(HOST_SAN_$(1)) $$(HOST_CPPFLAGS) -c -o $$@ $$<

build/host-$(1)/rq_test: $(KRWQ_CORE_UNITS:%=build/host-$(1)/%.o) build/host-$(1)/host_seam.o \
		build/host-$(1)/rq_cases.o build/host-$(1)/rq_views.o build/host-$(1)/rq_test.o
	$$(call host_cxx,$(1)) $$(HOST_SAN_$(1)) -o $$@ $$^ -lgtest -pthread
endef

$(eval $(call host_rules,asan))
$(eval $(call host_rules,tsan))
$(eval $(call host_rules,cov))
