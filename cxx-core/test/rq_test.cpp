// SPDX-License-Identifier: GPL-2.0
//
// rq_test.cpp - runs the shared receive-queue cases (kunit/rq_cases.c)
// under GoogleTest, one TEST per case, against the host seam.
#include <gtest/gtest.h>

#include <cstdarg>
#include <cstdio>
#include <thread>
#include <vector>

extern "C" {
#include "rq_cases.h"
}

struct rq_host_test {};

extern "C" bool rq_host_check(rq_test *, bool ok, const char *what, long long a, long long b,
			      const char *file, int line)
{
	if (!ok)
		ADD_FAILURE_AT(file, line) << "expected " << what << " (got " << a << " vs " << b << ")";
	return ok;
}

extern "C" void rq_host_info(rq_test *, const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	std::printf("    # %s\n", buf);
}

extern "C" void rq_env_run(rq_test *, int n, void (*fn)(void *), void **args)
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
	explicit SharedCase(void (*fn)(rq_test *)) : fn_(fn) {}
	void TestBody() override
	{
		rq_host_test t;
		fn_(&t);
	}

private:
	void (*fn_)(rq_test *);
};

void register_cases()
{
#define RQ_REGISTER(name)                                                                  \
	testing::RegisterTest("ReceiveQueue", #name, nullptr, nullptr, __FILE__, __LINE__, \
			      []() -> testing::Test * { return new SharedCase(rq_case_##name); });
	RQ_CASES(RQ_REGISTER)
#undef RQ_REGISTER
}

}  // namespace

int main(int argc, char **argv)
{
	testing::InitGoogleTest(&argc, argv);
	register_cases();
	return RUN_ALL_TESTS();
}
