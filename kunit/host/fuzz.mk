# SPDX-License-Identifier: GPL-2.0
#
# fuzz.mk - the receive-queue core under libFuzzer (kunit/host/rq_fuzz.cpp),
# built with clang: the core objects with cxx-core/core.mk's flags (less
# the GCC-only ones) and host.mk's optimisation, plus coverage, ASan and
# UBSan.  Included by the top-level Makefile after host.mk;
# scripts/check-fuzz runs it.
FUZZ_CXX ?= clang++
FUZZ_SAN := -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
FUZZ_OUT := build/fuzz

$(FUZZ_OUT)/%.o: cxx-core/%.cpp $(KRWQ_HOST_LAYOUT_DIR)/krwq_layout.h $(wildcard cxx-core/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CXX) $(HOST_CORE_FLAGS_CLANG) $(FUZZ_SAN) -c -o $@ $<

# The harness's own comparisons are not traced: they steer nothing the
# core's do not, and tracing them cost a quarter of every execution.
$(FUZZ_OUT)/rq_fuzz.o: kunit/host/rq_fuzz.cpp cxx-core/krwq_core.h module/rq.h $(HOST_INCLUDE_HDRS) \
		kunit/host/fuzz.mk
	@mkdir -p $(dir $@)
	$(FUZZ_CXX) -std=gnu++20 -O1 -g $(HOST_WARN) $(FUZZ_SAN) -fno-sanitize-coverage=trace-cmp \
		$(HOST_CPPFLAGS) -c -o $@ $<

$(FUZZ_OUT)/rq_fuzz: $(KRWQ_CORE_UNITS:%=$(FUZZ_OUT)/%.o) $(FUZZ_OUT)/rq_fuzz.o
	$(FUZZ_CXX) $(FUZZ_SAN) -o $@ $^

# The seed corpus replayed for coverage (scripts/coverage): the target,
# without sanitizers, linked with libFuzzer's driver and host.mk's
# coverage build of the core (only the core's counts are reported).
build/host-cov/rq_fuzz.o: kunit/host/rq_fuzz.cpp cxx-core/krwq_core.h module/rq.h $(HOST_INCLUDE_HDRS)
	@mkdir -p $(dir $@)
	$(FUZZ_CXX) -std=gnu++20 -O1 -g $(HOST_WARN) $(HOST_CPPFLAGS) -c -o $@ $<

build/host-cov/rq_fuzz: $(KRWQ_CORE_UNITS:%=build/host-cov/%.o) build/host-cov/rq_fuzz.o
	$(FUZZ_CXX) -fsanitize=fuzzer $(HOST_SAN_cov) -o $@ $^
