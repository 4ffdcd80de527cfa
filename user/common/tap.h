/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tap.h - TAP version 13 output for krwq_verbs_test and krwq_ring_test,
 * and the bookkeeping that turns a group's failures into one result per
 * check.
 *
 * A group runs some setup and then a fixed, named list of checks.  While
 * a check runs, every failed expectation calls fail(), which keeps the
 * first three reasons; report() then prints "ok" or "not ok" for the group's
 * next check and starts the next one afresh.  A group that gives up early
 * (a setup step failed) simply returns: the runner reports each check it
 * did not reach as failed, so the plan printed up front always holds.
 */
#ifndef KRWQ_TAP_H
#define KRWQ_TAP_H

#include <stdbool.h>

struct run {
	const char *group;
	const char *const *names;	/* the group's checks, NULL-terminated */
	unsigned int done;		/* checks reported so far */
	unsigned int failures;		/* since the last report() */
	char why[3][400];		/* the first three of them */
};

void tap_plan(unsigned int n);
void tap_result(bool ok, const char *name, const char *reason);
void tap_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
unsigned int tap_failed(void);
unsigned int tap_count(void);
int tap_finish(void);

/* Record a failure of the current check.  Always returns false. */
bool fail(struct run *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Report the group's next check: ok iff nothing failed since the last. */
void report(struct run *r);

#define TAP_MAX_CHECKS 8

/* A named group of checks; fn reports each of checks[] in order. */
struct tap_group {
	const char *name;
	void (*fn)(struct run *r);
	const char *checks[TAP_MAX_CHECKS + 1];	/* NULL-terminated */
};

/* Print the plan: every check of the @n groups. */
void tap_plan_groups(const struct tap_group *groups, unsigned int n);

/*
 * Run the @n groups in order, each under a 120 s watchdog that bails out
 * with a whole summary line if a verb blocks; a check a group did not
 * reach is reported failed.  With @setup_error set, every check fails
 * with it instead.
 */
void tap_run_groups(const struct tap_group *groups, unsigned int n,
		    const char *setup_error);

#endif /* KRWQ_TAP_H */
