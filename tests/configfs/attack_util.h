/* SPDX-License-Identifier: GPL-2.0 */
/* Small helpers shared by the configfs attack tests (extra_*). */
#ifndef CONFIGFS_ATTACK_UTIL_H
#define CONFIGFS_ATTACK_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"

#define ERR(x) ((x) < 0 ? errno : 0)

/* an errno's name, "OK" for 0 */
static inline const char *en(int err)
{
	const char *name = err > 0 ? strerrorname_np(err) : NULL;

	return !err ? "OK" : name ? name : "?";
}

static inline void tap_skip(const char *what, const char *why)
{
	printf("ok %d - %s # SKIP %s\n", ++tap_n, what, why);
	fflush(stdout);
}

/* a write whose result the caller does not need */
static inline void put(int fd, const void *p, size_t n)
{
	ssize_t r = write(fd, p, n);

	(void)r;
}

static inline int get(int fd, void *p, size_t n)
{
	return read(fd, p, n) == (ssize_t)n ? 0 : -1;
}

static inline int write_str(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY), ok;

	ok = fd >= 0 && write(fd, val, strlen(val)) == (ssize_t)strlen(val);
	if (fd >= 0)
		close(fd);
	return ok ? 0 : -1;
}

#endif
