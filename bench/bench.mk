# SPDX-License-Identifier: GPL-2.0
#
# bench.mk - the host part of `make bench`: the C++ core, built from the
# same sources, flags (cxx-core/core.mk, through host.mk) and host seam as
# kunit/host/host.mk but without sanitizers, linked into a Google
# Benchmark program beside Boost.Lockfree's spsc_queue.  Included by the
# top-level Makefile after host.mk.
BENCH_OUT := build/host-bench
BENCH_CFLAGS := -std=gnu11 -O2 -g $(HOST_WARN) $(HOST_CPPFLAGS)

$(BENCH_OUT)/%.o: cxx-core/%.cpp $(KRWQ_HOST_LAYOUT_DIR)/krwq_layout.h $(wildcard cxx-core/*.h)
	@mkdir -p $(dir $@)
	$(CXX) $(HOST_CORE_FLAGS) -c -o $@ $<

$(BENCH_OUT)/host_seam.o: hostshim/host_seam.c module/rq.h kunit/rq_env.h \
		$(HOST_INCLUDE_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) -c -o $@ $<

$(BENCH_OUT)/host_bench.o: bench/host_bench.cpp kunit/rq_env.h $(KRWQ_HOST_LAYOUT_DIR)/krwq_layout.h \
		$(HOST_INCLUDE_HDRS)
	@mkdir -p $(dir $@)
	$(CXX) -std=gnu++20 -O2 -g $(HOST_WARN) $(HOST_CPPFLAGS) -I$(KRWQ_HOST_LAYOUT_DIR) \
		-c -o $@ $<

$(BENCH_OUT)/host_bench: $(KRWQ_CORE_UNITS:%=$(BENCH_OUT)/%.o) $(BENCH_OUT)/host_seam.o \
		$(BENCH_OUT)/host_bench.o
	$(CXX) -o $@ $^ -lbenchmark -pthread

# An in-guest memcpy of the sizes the end-to-end part moves: the copying
# loopback's physical limit (static, so the guest needs no extra library).
build/bench/memcpy_bw: bench/memcpy_bw.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -Wall -Wextra -Werror -static -o $@ $<

# UDP datagrams as long as RoCEv2's between the wire's two namespaces: the
# floor of any RoCEv2 stack on that path.
build/bench/udp_floor: bench/udp_floor.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -Wall -Wextra -Werror -static -o $@ $<

# The null system call and a WQE written into a mapped ring: the floors of
# a verb that enters the kernel and of ABI 2's ibv_post_recv.
build/bench/floors: bench/floors.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -Wall -Wextra -Werror -static -o $@ $<
