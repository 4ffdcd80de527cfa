# SPDX-License-Identifier: GPL-2.0
#
# bench.mk - the host part of `make bench`: the C++ core, built from the
# same sources and host seam as kunit/host/host.mk but at -O2 without
# sanitizers, linked into a Google Benchmark program beside Boost.Lockfree's
# spsc_queue.  Included by the top-level Makefile after host.mk.
BENCH_OUT := build/host-bench
BENCH_CFLAGS := -std=gnu11 -O2 -g $(HOST_WARN) $(HOST_CPPFLAGS)

$(BENCH_OUT)/generated/krwq_layout.h: module/layout.c module/rq.h kunit/host/host-include/linux/kbuild.h
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CPPFLAGS) -o $(BENCH_OUT)/layout-gen $<
	{ echo '#ifndef KRWQ_GENERATED_LAYOUT_H'; echo '#define KRWQ_GENERATED_LAYOUT_H'; \
	  $(BENCH_OUT)/layout-gen; echo '#endif'; } > $@

$(BENCH_OUT)/%.o: cxx-core/%.cpp $(BENCH_OUT)/generated/krwq_layout.h $(wildcard cxx-core/*.h)
	$(CXX) $(HOST_CORE_FLAGS) $(HOST_WARN) -I$(HOST_SRC)/cxx-core \
		-I$(BENCH_OUT)/generated -c -o $@ $<

$(BENCH_OUT)/host_seam.o: kunit/host/host_seam.c module/rq.h kunit/rq_env.h
	$(CC) $(BENCH_CFLAGS) -c -o $@ $<

$(BENCH_OUT)/host_bench.o: bench/host_bench.cpp kunit/rq_env.h $(BENCH_OUT)/generated/krwq_layout.h
	$(CXX) -std=gnu++20 -O2 -g $(HOST_WARN) $(HOST_CPPFLAGS) -I$(BENCH_OUT)/generated \
		-c -o $@ $<

$(BENCH_OUT)/host_bench: $(HOST_CORE:%=$(BENCH_OUT)/%.o) $(BENCH_OUT)/host_seam.o \
		$(BENCH_OUT)/host_bench.o
	$(CXX) -o $@ $^ -lbenchmark -pthread

# An in-guest memcpy of the sizes the end-to-end part moves: the copying
# loopback's physical limit (static, so the guest needs no extra library).
build/bench/memcpy_bw: bench/memcpy_bw.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -Wall -Wextra -Werror -static -o $@ $<
