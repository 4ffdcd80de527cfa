# SPDX-License-Identifier: GPL-2.0
#
# host.mk - the C++ core built for user space with the host seam, and the
# shared receive-queue cases run under GoogleTest.  Included by the
# top-level Makefile; one build folder per sanitizer set:
#   make host-test      ASan + UBSan, then TSan
# The core's own flags and its layout header come from cxx-core/core.mk.
HOST_SRC := $(CURDIR)
include cxx-core/core.mk

HOST_SAN_asan := -fsanitize=address,undefined -fno-sanitize-recover=all
HOST_SAN_tsan := -fsanitize=thread

HOST_CPPFLAGS := -I$(HOST_SRC)/cxx-core -I$(HOST_SRC)/kunit/host/host-include \
	-I$(HOST_SRC)/module -I$(HOST_SRC)/kunit
# what the C side sees instead of the kernel's headers: a change to it
# (the host spinlock_t, say) changes module/rq.h's structs
HOST_INCLUDE_HDRS := $(wildcard kunit/host/host-include/*/*.h)
HOST_WARN := -Wall -Wextra -Werror -Wno-unused-parameter
# The core on the host: the kernel's language flags, optimised as the
# module is, with debug information for the sanitizers' reports.
HOST_CORE_FLAGS := $(KRWQ_CORE_CXXFLAGS) -Wall $(KRWQ_CORE_WARNFLAGS) -O2 -g \
	-I$(HOST_SRC)/cxx-core -I$(KRWQ_HOST_LAYOUT_DIR)

# $(call host_rules,VARIANT)
define host_rules
build/host-$(1)/%.o: cxx-core/%.cpp $(KRWQ_HOST_LAYOUT_DIR)/krwq_layout.h $(wildcard cxx-core/*.h)
	@mkdir -p $$(dir $$@)
	$$(CXX) $$(HOST_CORE_FLAGS) $$(HOST_SAN_$(1)) -c -o $$@ $$<

build/host-$(1)/host_seam.o: kunit/host/host_seam.c module/rq.h kunit/rq_env.h $(HOST_INCLUDE_HDRS)
	@mkdir -p $$(dir $$@)
	$$(CC) -std=gnu11 -O1 -g $$(HOST_WARN) $$(HOST_SAN_$(1)) $$(HOST_CPPFLAGS) -c -o $$@ $$<

build/host-$(1)/rq_cases.o: kunit/rq_cases.c kunit/rq_env.h $(HOST_INCLUDE_HDRS)
	@mkdir -p $$(dir $$@)
	$$(CC) -std=gnu11 -O1 -g $$(HOST_WARN) $$(HOST_SAN_$(1)) $$(HOST_CPPFLAGS) -c -o $$@ $$<

build/host-$(1)/rq_test.o: kunit/host/rq_test.cpp kunit/rq_env.h $(HOST_INCLUDE_HDRS)
	@mkdir -p $$(dir $$@)
	$$(CXX) -std=gnu++20 -O1 -g $$(HOST_WARN) $$(HOST_SAN_$(1)) $$(HOST_CPPFLAGS) -c -o $$@ $$<

build/host-$(1)/rq_views.o: kunit/rq_views.c module/rq.h kunit/rq_env.h $(HOST_INCLUDE_HDRS)
	@mkdir -p $$(dir $$@)
	$$(CC) -std=gnu11 -O1 -g $$(HOST_WARN) $$(HOST_SAN_$(1)) $$(HOST_CPPFLAGS) -c -o $$@ $$<

build/host-$(1)/rq_test: $(KRWQ_CORE_UNITS:%=build/host-$(1)/%.o) build/host-$(1)/host_seam.o \
		build/host-$(1)/rq_cases.o build/host-$(1)/rq_views.o build/host-$(1)/rq_test.o
	$$(CXX) $$(HOST_SAN_$(1)) -o $$@ $$^ -lgtest -pthread
endef

$(eval $(call host_rules,asan))
$(eval $(call host_rules,tsan))
