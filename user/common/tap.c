// SPDX-License-Identifier: GPL-2.0
/*
 * tap.c - TAP version 13 output: the plan, one "ok N - name" or
 * "not ok N - name" line per check with a "# reason" line after each
 * failure, and "P passed, F failed" as the very last line.
 */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"

#define WATCHDOG_SECONDS 120

static unsigned int n_results, n_passed, n_failed;
static unsigned int n_planned;
static const char *current_group = "setup";
static const char *setup_error;

void tap_plan(unsigned int n)
{
	n_planned = n;
	printf("TAP version 13\n1..%u\n", n);
	fflush(stdout);
}

void tap_result(bool ok, const char *name, const char *reason)
{
	n_results++;
	if (ok)
		n_passed++;
	else
		n_failed++;
	printf("%s %u - %s\n", ok ? "ok" : "not ok", n_results, name);
	if (!ok && (!reason || !*reason))
		reason = "failed (no reason given)";
	/* each line of the reason as a diagnostic line */
	while (!ok && *reason) {
		size_t n = strcspn(reason, "\n");

		printf("# %.*s\n", (int)n, reason);
		reason += n + (reason[n] == '\n');
	}
	fflush(stdout);
}

void tap_note(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

unsigned int tap_failed(void)
{
	return n_failed;
}

unsigned int tap_count(void)
{
	return n_results;
}

int tap_finish(void)
{
	printf("%u passed, %u failed\n", n_passed, n_failed);
	fflush(stdout);
	return n_failed ? 1 : 0;
}

bool fail(struct run *r, const char *fmt, ...)
{
	va_list ap;

	if (r->failures < 3) {
		va_start(ap, fmt);
		vsnprintf(r->why[r->failures], sizeof(r->why[0]), fmt, ap);
		va_end(ap);
	}
	r->failures++;
	return false;
}

static void report_as(struct run *r, bool ok, const char *reason)
{
	const char *name = r->names[r->done];
	char line[600];

	if (!name) {
		/* a group reporting more checks than it declared: a bug here */
		fprintf(stderr, "tap: group %s reports an undeclared check\n",
			r->group);
		abort();
	}
	snprintf(line, sizeof(line), "%s: %s", r->group, name);
	tap_result(ok, line, reason);
	r->done++;
	r->failures = 0;
}

void report(struct run *r)
{
	char reason[sizeof(r->why) + 80];
	unsigned int i;
	int n;

	n = snprintf(reason, sizeof(reason), "%s", r->why[0]);
	for (i = 1; i < r->failures && i < 3; i++)
		n += snprintf(reason + n, sizeof(reason) - n, "\nalso: %s",
			      r->why[i]);
	if (r->failures > 3)
		snprintf(reason + n, sizeof(reason) - n, "\n(and %u more failures)",
			 r->failures - 3);
	report_as(r, !r->failures, reason);
}

static void run_group(const struct tap_group *g, void (*fn)(struct run *r))
{
	struct run r = { .group = g->name, .names = g->checks };

	fn(&r);
	if (r.names[r.done] && r.failures)
		report(&r);	/* the failure that made the group give up */
	while (r.names[r.done])
		report_as(&r, false, "not reached: an earlier step of this group failed");
}

/*
 * The last resort if some verb blocks: say so, keep the output whole.
 * snprintf() into a local buffer is not on POSIX's async-signal-safe list,
 * but it takes no stdio stream lock, and the line goes out with write().
 */
static void watchdog(int sig)
{
	char line[256];
	int n;

	(void)sig;
	n = snprintf(line, sizeof(line),
		     "Bail out! no progress for %d s in group \"%s\"\n%u passed, %u failed\n",
		     WATCHDOG_SECONDS, current_group, n_passed,
		     n_failed + (n_planned - n_results));
	if (n < 0)
		_exit(2);
	if ((size_t)n >= sizeof(line))
		n = sizeof(line) - 1;
	if (write(STDOUT_FILENO, line, n) < 0)
		_exit(2);
	_exit(1);
}

static void setup_failed(struct run *r)
{
	fail(r, "setup: %s", setup_error);
}

void tap_plan_groups(const struct tap_group *groups, unsigned int n)
{
	unsigned int g, i, checks = 0;

	for (g = 0; g < n; g++)
		for (i = 0; groups[g].checks[i]; i++)
			checks++;
	tap_plan(checks);
}

void tap_run_groups(const struct tap_group *groups, unsigned int n,
		    const char *error)
{
	unsigned int g;

	setup_error = error;
	signal(SIGALRM, watchdog);
	for (g = 0; g < n; g++) {
		current_group = groups[g].name;
		alarm(WATCHDOG_SECONDS);
		run_group(&groups[g], error ? setup_failed : groups[g].fn);
	}
	alarm(0);
}
