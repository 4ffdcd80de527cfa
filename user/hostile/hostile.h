/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hostile.h - krwq_hostile: bad input, a raw uverbs fuzzer and allocation
 * faults thrown at an RDMA device through user space: the modes main()
 * (hostile.c) runs.  What they share is in raw.h.
 */
#ifndef KRWQ_HOSTILE_H
#define KRWQ_HOSTILE_H

int hostile_verbs(const char *dev);
int hostile_fuzz(const char *dev, double seconds, unsigned int seed);
int hostile_faults(const char *dev);
/* inline.c: a part of hostile_verbs(), on its open device */
void inline_race_checks(void);

#endif /* KRWQ_HOSTILE_H */
