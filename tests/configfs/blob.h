/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers for the configfs binary attribute tests, demo and benchmark. */
#ifndef LK45_BLOB_H
#define LK45_BLOB_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define STORE_ROOT "/sys/kernel/config/lk45_blobstore"

/* crc32_le(~0, p, n) as the kernel computes it: reflected 0xedb88320,
 * no final inversion.
 */
static inline uint32_t blob_crc32(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint32_t crc = ~0u;
	int k;

	while (n--) {
		crc ^= *b++;
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320u & -(crc & 1));
	}
	return crc;
}

static inline void blob_fill(unsigned char *p, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (unsigned char)(i * 31 + seed * 7 + (i >> 12));
}

/* An image for the store's "image" attribute around @len payload bytes;
 * *@size is set to the image size. @crc_delta spoils the checksum.
 */
static inline unsigned char *blob_image(const unsigned char *payload, size_t len,
					size_t *size, uint32_t crc_delta)
{
	unsigned char *img = malloc(len + 12);
	uint32_t v;

	if (!img)
		return NULL;
	memcpy(img, "LK45", 4);
	v = (uint32_t)len;		/* little endian hosts and guests only */
	memcpy(img + 4, &v, 4);
	memcpy(img + 8, payload, len);
	v = blob_crc32(payload, len) + crc_delta;
	memcpy(img + 8 + len, &v, 4);
	*size = len + 12;
	return img;
}

struct upload {
	int open_err, write_err, close_err;	/* errno, 0 for success */
	int fsync_err;				/* when asked to fsync */
	size_t written;
	long long ns;				/* open to close, inclusive */
};

static inline long long blob_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Upload @len bytes in writes of @chunk; stops at the first failed write.
 * With @do_fsync, commits with fsync(2) before the close(2), after a failed
 * write too (it then returns that write's error). fsync(2) is the only call
 * that reports a commit: close(2) returns 0, and the commit made when the
 * file is released (when nothing was written since fsync(2)) reaches nobody.
 */
static inline struct upload blob_upload_ex(const char *path, const void *data,
					   size_t len, size_t chunk, int do_fsync)
{
	struct upload u = { 0 };
	long long t0 = blob_now_ns();
	int fd = open(path, O_WRONLY);

	if (fd < 0) {
		u.open_err = errno;
		return u;
	}
	while (u.written < len) {
		size_t n = len - u.written < chunk ? len - u.written : chunk;
		ssize_t r = write(fd, (const char *)data + u.written, n);

		if (r < 0) {
			u.write_err = errno;
			break;
		}
		u.written += r;
	}
	if (do_fsync && fsync(fd))
		u.fsync_err = errno;
	if (close(fd))
		u.close_err = errno;
	u.ns = blob_now_ns() - t0;
	return u;
}

static inline struct upload blob_upload(const char *path, const void *data,
					size_t len, size_t chunk)
{
	return blob_upload_ex(path, data, len, chunk, 0);
}

/* The same, committed and reported by fsync(2) (u.fsync_err). */
static inline struct upload blob_commit(const char *path, const void *data,
					size_t len, size_t chunk)
{
	return blob_upload_ex(path, data, len, chunk, 1);
}

/* Read a whole file into a malloc()ed buffer; returns its length or -errno. */
static inline long blob_slurp(const char *path, unsigned char **out)
{
	size_t cap = 1 << 16, len = 0;
	unsigned char *buf = malloc(cap);
	int fd = open(path, O_RDONLY);
	ssize_t r;

	if (fd < 0 || !buf) {
		free(buf);
		return fd < 0 ? -errno : -ENOMEM;
	}
	for (;;) {
		if (len == cap) {
			unsigned char *n = realloc(buf, cap *= 2);

			if (!n) {
				close(fd);
				free(buf);
				return -ENOMEM;
			}
			buf = n;
		}
		r = read(fd, buf + len, cap - len);
		if (r < 0) {
			close(fd);
			free(buf);
			return -errno;
		}
		if (!r)
			break;
		len += r;
	}
	close(fd);
	*out = buf;
	return len;
}

/* The text counter @name (commits, rejects) of the store item at @item,
 * or -1.
 */
static inline long blob_counter(const char *item, const char *name)
{
	char p[256], buf[32] = "";
	ssize_t n;
	int fd;

	snprintf(p, sizeof(p), "%s/%s", item, name);
	fd = open(p, O_RDONLY);
	n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	return n > 0 ? strtol(buf, NULL, 10) : -1;
}

static inline const char *blob_errname(int err)
{
	return err ? strerrorname_np(err) : "OK";
}

/* The number a file such as a cgroup's memory.peak holds; -1 if none. */
static inline long read_long(const char *path)
{
	char buf[64] = "";
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	return n > 0 ? strtol(buf, NULL, 10) : -1;
}

/* 1 when the space-separated list in @path (cgroup.controllers) has @word */
static inline int has_word(const char *path, const char *word)
{
	char buf[512] = "", *tok, *save;
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return 0;
	for (tok = strtok_r(buf, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save))
		if (!strcmp(tok, word))
			return 1;
	return 0;
}

#endif
