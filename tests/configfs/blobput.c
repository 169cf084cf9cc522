// SPDX-License-Identifier: GPL-2.0
/*
 * blobput: upload to a configfs binary attribute and say what write(2),
 * fsync(2) and close(2) returned, for the shell tests, the demo and the
 * benchmark.
 *
 *   blobput ATTR FILE [CHUNK]          upload FILE's bytes
 *   blobput ATTR -p SIZE [CHUNK]       upload SIZE bytes of a fixed pattern
 *   blobput ATTR -z                    one write(fd, buf, 0), then close
 *   blobput -f ATTR ...                the same, committing with fsync(2)
 *                                      before close(2)
 *
 * Prints "bytes=N write=ERR close=ERR ns=T" (ERR: OK or an errno name),
 * with -f "bytes=N write=ERR fsync=ERR close=ERR ns=T" (-z: no ns=), and
 * exits 0 only when every call succeeded. Only fsync= carries the write
 * method's verdict: close(2) returns 0, and without -f the blob is
 * committed when the file is released, with a result nobody gets.
 */
#define _GNU_SOURCE
#include "blob.h"

int main(int argc, char **argv)
{
	size_t len, chunk = 4096;
	unsigned char *data = NULL;
	struct upload u;
	int do_fsync = argc > 1 && !strcmp(argv[1], "-f");

	if (do_fsync) {
		argv++;
		argc--;
	}
	if (argc < 3 || (!strcmp(argv[2], "-p") && argc < 4)) {
		fprintf(stderr, "usage: blobput [-f] ATTR FILE [CHUNK] | blobput [-f] ATTR -p SIZE [CHUNK] | blobput [-f] ATTR -z\n");
		return 2;
	}
	if (!strcmp(argv[2], "-z")) {
		int fd = open(argv[1], O_WRONLY), w, s, c;

		if (fd < 0) {
			printf("open=%s\n", blob_errname(errno));
			return 1;
		}
		w = write(fd, "", 0) < 0 ? errno : 0;
		s = do_fsync && fsync(fd) < 0 ? errno : 0;
		c = close(fd) < 0 ? errno : 0;
		printf("bytes=0 write=%s%s%s close=%s\n", blob_errname(w),
		       do_fsync ? " fsync=" : "", do_fsync ? blob_errname(s) : "",
		       blob_errname(c));
		return w || s || c;
	}
	if (!strcmp(argv[2], "-p")) {
		len = strtoull(argv[3], NULL, 0);
		data = malloc(len ? len : 1);
		if (!data)
			return 2;
		blob_fill(data, len, 0);
		if (argc > 4)
			chunk = strtoull(argv[4], NULL, 0);
	} else {
		long n = blob_slurp(argv[2], &data);

		if (n < 0) {
			fprintf(stderr, "blobput: %s: %s\n", argv[2], strerror(-n));
			return 2;
		}
		len = n;
		if (argc > 3)
			chunk = strtoull(argv[3], NULL, 0);
	}
	if (!chunk)
		chunk = len ? len : 1;
	u = blob_upload_ex(argv[1], data, len, chunk, do_fsync);
	if (u.open_err) {
		printf("open=%s\n", blob_errname(u.open_err));
		return 1;
	}
	printf("bytes=%zu write=%s%s%s close=%s ns=%lld\n", u.written,
	       blob_errname(u.write_err), do_fsync ? " fsync=" : "",
	       do_fsync ? blob_errname(u.fsync_err) : "", blob_errname(u.close_err), u.ns);
	free(data);
	return u.write_err || u.fsync_err || u.close_err;
}
