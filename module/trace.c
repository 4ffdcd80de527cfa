// SPDX-License-Identifier: GPL-2.0
/*
 * trace.c - instantiates the trace events of trace.h; the other files
 * include trace.h and call trace_krwq_*().
 */
#define CREATE_TRACE_POINTS
#include "trace.h"
