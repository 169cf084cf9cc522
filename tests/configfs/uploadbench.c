// SPDX-License-Identifier: GPL-2.0
/*
 * uploadbench: one timed upload of a pattern into a file, the way the
 * configfs benchmark's rows need it, so that a configfs binary attribute
 * and a tmpfs file are written by the same code.
 *
 *   uploadbench MODE PATH SIZE CHUNK
 *
 * MODE: write       write(2) CHUNK bytes at a time, then close(2)
 *       fdatasync   the same with fdatasync(2) after every write (EINVAL,
 *                   which a configfs attribute returns, is not a failure)
 *       descending  pwrite(2) CHUNK bytes at a time at descending offsets
 *       fsync       write, then fsync(2) before close(2)
 *
 * The time runs from open(2) to the return of close(2) (PATH is opened with
 * O_CREAT | O_TRUNC, which a configfs attribute ignores). Prints
 * "bytes=N ns=T" and exits 0, or names the failing call and exits 1.
 */
#define _GNU_SOURCE
#include "blob.h"

static int fail(const char *call, int err)
{
	printf("%s=%s\n", call, blob_errname(err));
	return 1;
}

int main(int argc, char **argv)
{
	struct timespec t0, t1;
	unsigned char *data;
	size_t size, chunk, off;
	const char *mode;
	int fd;

	if (argc != 5) {
		fprintf(stderr, "usage: uploadbench write|fdatasync|descending|fsync PATH SIZE CHUNK\n");
		return 2;
	}
	mode = argv[1];
	size = strtoull(argv[3], NULL, 0);
	chunk = strtoull(argv[4], NULL, 0);
	if (!size || !chunk || size % chunk) {
		fprintf(stderr, "uploadbench: SIZE must be a multiple of CHUNK\n");
		return 2;
	}
	data = malloc(size);
	if (!data)
		return 2;
	blob_fill(data, size, 0);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return fail("open", errno);
	for (off = 0; off < size; off += chunk) {
		ssize_t n;

		if (!strcmp(mode, "descending"))
			n = pwrite(fd, data + size - chunk - off, chunk,
				   size - chunk - off);
		else
			n = write(fd, data + off, chunk);

		if (n != (ssize_t)chunk)
			return fail("write", n < 0 ? errno : EIO);
		if (!strcmp(mode, "fdatasync") && fdatasync(fd) && errno != EINVAL)
			return fail("fdatasync", errno);
	}
	if (!strcmp(mode, "fsync") && fsync(fd))
		return fail("fsync", errno);
	if (close(fd))
		return fail("close", errno);
	clock_gettime(CLOCK_MONOTONIC, &t1);

	printf("bytes=%zu ns=%lld\n", size,
	       (t1.tv_sec - t0.tv_sec) * 1000000000LL + t1.tv_nsec - t0.tv_nsec);
	free(data);
	return 0;
}
