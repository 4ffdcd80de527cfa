# SPDX-License-Identifier: GPL-2.0
#
# host.mk - the C++ core built for user space with the host seam, and the
# shared receive-queue cases run under GoogleTest.  Included by the
# top-level Makefile; one build folder per sanitizer set:
#   make host-test      ASan + UBSan, then TSan
HOST_SRC := $(CURDIR)
HOST_CORE := receive_queue seam

HOST_SAN_asan := -fsanitize=address,undefined -fno-sanitize-recover=all
HOST_SAN_tsan := -fsanitize=thread

HOST_CPPFLAGS := -I$(HOST_SRC)/cxx-core -I$(HOST_SRC)/kunit/host/host-include \
	-I$(HOST_SRC)/module -I$(HOST_SRC)/kunit
HOST_WARN := -Wall -Wextra -Werror -Wno-unused-parameter
# The core on the host: the same freestanding rules as in the kernel.
HOST_CORE_FLAGS := -std=gnu++20 -ffreestanding -nostdinc++ -fno-exceptions -fno-rtti \
	-fno-threadsafe-statics -O2 -g

# $(call host_rules,VARIANT)
define host_rules
build/host-$(1)/generated/krwq_layout.h: module/layout.c module/rq.h kunit/host/host-include/linux/kbuild.h
	@mkdir -p $$(dir $$@)
	$$(CC) $$(HOST_CPPFLAGS) -o build/host-$(1)/layout-gen $$<
	{ echo '#ifndef KRWQ_GENERATED_LAYOUT_H'; echo '#define KRWQ_GENERATED_LAYOUT_H'; \
	  build/host-$(1)/layout-gen; echo '#endif'; } > $$@

build/host-$(1)/%.o: cxx-core/%.cpp build/host-$(1)/generated/krwq_layout.h $(wildcard cxx-core/*.h)
	$$(CXX) $$(HOST_CORE_FLAGS) $$(HOST_WARN) $$(HOST_SAN_$(1)) -I$(HOST_SRC)/cxx-core \
		-Ibuild/host-$(1)/generated -c -o $$@ $$<

build/host-$(1)/host_seam.o: kunit/host/host_seam.c module/rq.h kunit/rq_env.h
	$$(CC) -std=gnu11 -O1 -g $$(HOST_WARN) $$(HOST_SAN_$(1)) $$(HOST_CPPFLAGS) -c -o $$@ $$<

build/host-$(1)/rq_cases.o: kunit/rq_cases.c kunit/rq_env.h
	$$(CC) -std=gnu11 -O1 -g $$(HOST_WARN) $$(HOST_SAN_$(1)) $$(HOST_CPPFLAGS) -c -o $$@ $$<

build/host-$(1)/rq_test.o: kunit/host/rq_test.cpp kunit/rq_env.h kunit/host/host-include/kunit/test.h
	$$(CXX) -std=gnu++20 -O1 -g $$(HOST_WARN) $$(HOST_SAN_$(1)) $$(HOST_CPPFLAGS) -c -o $$@ $$<

build/host-$(1)/rq_views.o: kunit/rq_views.c module/rq.h kunit/rq_env.h
	$$(CC) -std=gnu11 -O1 -g $$(HOST_WARN) $$(HOST_SAN_$(1)) $$(HOST_CPPFLAGS) -c -o $$@ $$<

build/host-$(1)/rq_test: $(HOST_CORE:%=build/host-$(1)/%.o) build/host-$(1)/host_seam.o \
		build/host-$(1)/rq_cases.o build/host-$(1)/rq_views.o build/host-$(1)/rq_test.o
	$$(CXX) $$(HOST_SAN_$(1)) -o $$@ $$^ -lgtest -pthread
endef

$(eval $(call host_rules,asan))
$(eval $(call host_rules,tsan))
