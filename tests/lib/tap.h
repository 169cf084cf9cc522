/* SPDX-License-Identifier: GPL-2.0 */
/* Minimal TAP for guest tests in C. */
#ifndef LK45_TAP_H
#define LK45_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static int tap_n, tap_failed;

static inline void tap_result(int pass, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", pass ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);	/* a shell reading it times each result */
	if (!pass)
		tap_failed = 1;
}

#define tap_is_long(got, want, desc) do {					\
	long long g_ = (got), w_ = (want);					\
	tap_result(g_ == w_, "%s", desc);					\
	if (g_ != w_)								\
		printf("# got %lld, want %lld\n", g_, w_);			\
} while (0)

static inline int tap_done(void)
{
	printf("1..%d\n", tap_n);
	fflush(stdout);
	return tap_failed;
}

#endif
