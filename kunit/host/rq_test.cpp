// SPDX-License-Identifier: GPL-2.0
//
// rq_test.cpp - runs the shared receive-queue cases (kunit/rq_cases.c)
// under GoogleTest, one TEST per case, against the host seam.
#include <gtest/gtest.h>

#include <cstdarg>
#include <cstdio>
#include <thread>
#include <vector>

#include <kunit/test.h>

extern "C" {
#include "rq_env.h"
}

extern "C" bool kunit_host_check(kunit *, bool ok, const char *what, long long a, long long b,
				 const char *file, int line)
{
	if (!ok)
		ADD_FAILURE_AT(file, line)
			<< "expected " << what << " (got " << a << " vs " << b << ")";
	return ok;
}

extern "C" void kunit_host_info(kunit *, const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	std::printf("    # %s\n", buf);
}

extern "C" void rq_env_run(kunit *, int n, void (*fn)(void *), void **args)
{
	std::vector<std::thread> threads;
	for (int i = 0; i < n; i++)
		threads.emplace_back(fn, args[i]);
	for (auto &th : threads)
		th.join();
}

namespace {

class SharedCase : public testing::Test {
public:
	explicit SharedCase(void (*fn)(kunit *)) : fn_(fn) {}
	void TestBody() override
	{
		kunit t{};
		fn_(&t);
	}

private:
	void (*fn_)(kunit *);
};

// One GoogleTest test per entry of the KUnit case table.
void register_cases()
{
	for (const kunit_case *c = krwq_rq_cases; c->run_case; c++) {
		auto *fn = c->run_case;
		testing::RegisterTest("krwq_rq", c->name, nullptr, nullptr, __FILE__, __LINE__,
				      [fn]() -> testing::Test * { return new SharedCase(fn); });
	}
}

} // namespace

int main(int argc, char **argv)
{
	testing::InitGoogleTest(&argc, argv);
	register_cases();
	return RUN_ALL_TESTS();
}
