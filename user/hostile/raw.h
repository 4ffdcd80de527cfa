/* SPDX-License-Identifier: GPL-2.0 */
/*
 * raw.h - the helpers the modes of krwq_hostile share (raw.c): the
 * kernel asked without libibverbs.
 */
#ifndef KRWQ_RAW_H
#define KRWQ_RAW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Objects of the device as the RDMA core's restrack counts them. */
struct res {
	long pd, cq, qp, mr, srq, ctx;
	bool ok;
};

bool res_read(const char *dev, struct res *r);
bool res_same(const struct res *a, const struct res *b);
const char *res_str(const struct res *r);

/*
 * One uverbs write() command: header, then @len bytes of @body, whose
 * first 8 bytes are the response pointer of most commands.  @in_words
 * and @out_words go into the header as given (so they can lie).
 * Return: 0 or -errno.
 */
int raw_write(int fd, uint32_t cmd, uint16_t in_words, uint16_t out_words,
	      const void *body, size_t len);
/* The same with honest word counts: the response is @resp of @resp_len. */
int raw_cmd(int fd, uint32_t cmd, void *body, size_t len, void *resp,
	    size_t resp_len);

const char *errno_name(int e);

#endif /* KRWQ_RAW_H */
