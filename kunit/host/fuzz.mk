# SPDX-License-Identifier: GPL-2.0
#
# fuzz.mk - the receive-queue core under libFuzzer (kunit/host/rq_fuzz.cpp),
# built with clang: the core objects with the same freestanding flags as
# host.mk, plus coverage, ASan and UBSan.  Included by the top-level
# Makefile; scripts/check-fuzz runs it.
FUZZ_CC ?= clang
FUZZ_CXX ?= clang++
FUZZ_SAN := -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
FUZZ_OUT := build/fuzz

$(FUZZ_OUT)/generated/krwq_layout.h: module/layout.c module/rq.h kunit/host/host-include/linux/kbuild.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(HOST_CPPFLAGS) -o $(FUZZ_OUT)/layout-gen $<
	{ echo '#ifndef KRWQ_GENERATED_LAYOUT_H'; echo '#define KRWQ_GENERATED_LAYOUT_H'; \
	  $(FUZZ_OUT)/layout-gen; echo '#endif'; } > $@

$(FUZZ_OUT)/%.o: cxx-core/%.cpp $(FUZZ_OUT)/generated/krwq_layout.h $(wildcard cxx-core/*.h)
	$(FUZZ_CXX) $(HOST_CORE_FLAGS) $(HOST_WARN) $(FUZZ_SAN) -I$(HOST_SRC)/cxx-core \
		-I$(FUZZ_OUT)/generated -c -o $@ $<

$(FUZZ_OUT)/rq_fuzz.o: kunit/host/rq_fuzz.cpp cxx-core/krwq_core.h module/rq.h
	$(FUZZ_CXX) -std=gnu++20 -O1 -g $(HOST_WARN) $(FUZZ_SAN) $(HOST_CPPFLAGS) -c -o $@ $<

$(FUZZ_OUT)/rq_fuzz: $(HOST_CORE:%=$(FUZZ_OUT)/%.o) $(FUZZ_OUT)/rq_fuzz.o
	$(FUZZ_CXX) $(FUZZ_SAN) -o $@ $^
