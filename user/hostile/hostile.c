// SPDX-License-Identifier: GPL-2.0
/*
 * hostile.c - krwq_hostile: what a hostile or broken user process can throw
 * at an RDMA device, and what must come back.
 *
 *   krwq_hostile [-d DEVICE] verbs        bad input to every verb (TAP)
 *   krwq_hostile [-d DEVICE] fuzz SECONDS [SEED]
 *                                         random and truncated uverbs
 *                                         write() and ioctl() commands
 *   krwq_hostile [-d DEVICE] faults       allocation faults (fail-nth)
 *                                         in every creating verb (TAP)
 *
 * Each mode prints TAP and ends with "P passed, F failed"; the exit
 * status is 0 iff nothing failed.  The modes are in verbs.c (with
 * inline.c), fuzz.c and fault.c; the helpers they share in raw.c.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hostile.h"

/* --- main ---------------------------------------------------------------- */

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-d DEVICE] verbs | fuzz SECONDS [SEED] | faults\n",
		prog);
	exit(2);
}

static void watchdog(int sig)
{
	static const char m[] = "Bail out! krwq_hostile: watchdog expired\n";

	(void)sig;
	if (write(1, m, sizeof(m) - 1) < 0)
		_exit(3);
	_exit(3);
}

int main(int argc, char **argv)
{
	const char *dev = "krwq0";
	int opt;

	while ((opt = getopt(argc, argv, "d:h")) != -1) {
		if (opt == 'd')
			dev = optarg;
		else
			usage(argv[0]);
	}
	if (optind >= argc)
		usage(argv[0]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGALRM, watchdog);
	alarm(600);
	if (!strcmp(argv[optind], "verbs") && optind + 1 == argc)
		return hostile_verbs(dev);
	if (!strcmp(argv[optind], "faults") && optind + 1 == argc)
		return hostile_faults(dev);
	if (!strcmp(argv[optind], "fuzz") && optind + 2 <= argc &&
	    optind + 3 >= argc) {
		double secs = strtod(argv[optind + 1], NULL);
		unsigned int seed = optind + 2 < argc ?
			strtoul(argv[optind + 2], NULL, 0) : (unsigned int)getpid();

		if (secs <= 0 || secs > 500)
			usage(argv[0]);
		return hostile_fuzz(dev, secs, seed);
	}
	usage(argv[0]);
	return 2;
}
