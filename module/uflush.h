/* SPDX-License-Identifier: GPL-2.0 */
/*
 * uflush.h - a device's budget for re-flushing mapped receive rings in
 * ERR (qp.c; the limits are in krwq.h), for qp.c and its KUnit case.
 */
#ifndef KRWQ_UFLUSH_H
#define KRWQ_UFLUSH_H

#include <linux/types.h>

struct krwq_dev;

u32 krwq_uflush_budget(struct krwq_dev *dev, u32 want);
void krwq_uflush_spend(struct krwq_dev *dev, u32 grant, u32 used);

#endif /* KRWQ_UFLUSH_H */
