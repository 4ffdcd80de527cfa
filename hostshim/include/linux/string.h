/* SPDX-License-Identifier: GPL-2.0 */
/* Host stand-in: the kernel's memset() and friends are the C library's. */
#include <string.h>
