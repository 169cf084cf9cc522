// SPDX-License-Identifier: GPL-2.0
// bench-ldlibs: -luring -lpthread
/*
 * Every way a process reaches a configfs binary attribute, against the
 * contract in Documentation/filesystems/configfs.rst ("Reading and writing a
 * binary attribute"): writes at any offset and in any order (pwrite, AIO and
 * io_uring, shuffled or descending), holes, pwritev2 flags,
 * O_APPEND/O_TRUNC/O_SYNC, ftruncate, mmap, splice, sendfile and
 * copy_file_range, faults half-way through a write, VFS-level refusals,
 * fsync as the one call that commits and reports (fdatasync fails with
 * EINVAL and commits nothing, as on 6.12; close(2) reports nothing, and the
 * release commits silently), a refused commit that stays refused, writers
 * killed by a signal (what they wrote is abandoned) or exiting (committed),
 * killed processes that only inherited the file, a writer killed after it
 * closed its descriptor, writes stalled mid-copy on a
 * userfaultfd page and cut short by SIGKILL or exit_group, the last writer
 * killed while another process's stalled write holds the file, a write
 * killed while it waits for the file, an fsync(2) while the killed writer
 * dumps core, a thread's lone exit(2), threads sharing a
 * descriptor, pidfd_getfd, read methods that shrink, overclaim or fill
 * nothing, AIO reads, readers racing commits, rmdir, fail-nth on every
 * allocation of the write and commit paths, memory cgroup limits on the
 * buffers (the sample reloaded for 16 MiB blobs), and module unload.
 *
 * Each case prints one outcome line. The same cases then run against 6.12's
 * configfs (configfs_pristine.ko): each outcome is asserted against what
 * 6.12 does, so that every difference the series makes is shown and
 * checked, not only ours.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <liburing.h>
#include <linux/aio_abi.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <signal.h>

#include "blob.h"
#include "tap.h"

#define ITEM	STORE_ROOT "/paths"
#define BLOB	ITEM "/blob"
#define IMAGE	ITEM "/image"
#define SAMPLE	"lk45_blobstore"

static int pristine;		/* running against 6.12's configfs */
static unsigned char *data;	/* 1 MiB of pattern */
static unsigned char base[1000];	/* the blob each case starts from */

static const char *en(int err)
{
	const char *name = strerrorname_np(err);

	return !err ? "OK" : name ? name : "?";
}

/* errno name of a syscall result: "OK" for >= 0 */
#define R(x) ((x) < 0 ? en(errno) : "OK")

static long counter(const char *name)
{
	return blob_counter(ITEM, name);
}

/*
 * What the blob holds: @aname if @a (of @alen bytes), @bname if @b, "old"
 * for the base blob, else "other" with its size. The answers rotate
 * through four buffers, so that one outcome line can hold several.
 */
static const char *stored_as(const void *a, size_t alen, const char *aname,
			     const void *b, size_t blen, const char *bname)
{
	static char outs[4][64];
	static int slot;
	char *out = outs[slot++ % 4];
	unsigned char *got = NULL;
	long n = blob_slurp(BLOB, &got);

	if (a && n == (long)alen && !memcmp(got, a, alen))
		snprintf(out, 64, "%s", aname);
	else if (b && n == (long)blen && !memcmp(got, b, blen))
		snprintf(out, 64, "%s", bname);
	else if (n == sizeof(base) && !memcmp(got, base, sizeof(base)))
		strcpy(out, "old");
	else
		snprintf(out, 64, "other(%ld bytes)", n);
	free(got);
	return out;
}

/* "old" (the base blob), "new" (@want), or "other" with its size */
static const char *stored(const void *want, size_t len)
{
	return stored_as(want, len, "new", NULL, 0, NULL);
}

/*
 * io_uring may still hold its own reference to the file when the CQE is
 * reaped (an io-wq worker drops it after posting), so close(2) there is not
 * always the last reference: the commit can come a moment later.  Wait for
 * the blob to change, up to two seconds, before judging it.
 */
static const char *stored_after_release(const void *want, size_t len)
{
	const char *s = stored(want, len);
	int i;

	for (i = 0; i < 40 && !strcmp(s, "old"); i++) {
		usleep(50000);
		s = stored(want, len);
	}
	return s;
}

/* Put the base blob in place (write + close, which both 6.12 and ours commit). */
static int reset_blob(void)
{
	struct upload u = blob_upload(BLOB, base, sizeof(base), sizeof(base));

	return u.open_err || u.write_err || u.close_err;
}

static char outcome[512];

#define OUT(...) snprintf(outcome, sizeof(outcome), __VA_ARGS__)

static int write_str(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY), r;

	r = fd >= 0 && write(fd, val, strlen(val)) == (ssize_t)strlen(val);
	if (fd >= 0)
		close(fd);
	return r ? 0 : -1;
}

/* 16 pieces of 4 KiB, in this order, for the shuffled writes */
static const int shuffle[16] = { 5, 12, 0, 9, 15, 3, 7, 1, 14, 10, 2, 8, 13, 4, 11, 6 };

/* ---- AIO ---- */

static long aio_run(int fd, struct iocb *cbs, int n, long *res)
{
	aio_context_t ctx = 0;
	struct iocb *ptrs[16];
	struct io_event ev[16];
	long r;
	int i;

	if (syscall(SYS_io_setup, 16, &ctx))
		return -errno;
	for (i = 0; i < n; i++) {
		cbs[i].aio_fildes = fd;
		cbs[i].aio_data = i;
		ptrs[i] = &cbs[i];
		res[i] = -ENODATA;
	}
	r = syscall(SYS_io_submit, ctx, n, ptrs);
	if (r < 0) {
		r = -errno;
		syscall(SYS_io_destroy, ctx);
		return r;
	}
	if (syscall(SYS_io_getevents, ctx, r, r, ev, NULL) != r)
		r = -EIO;
	for (i = 0; r > 0 && i < r; i++)
		res[ev[i].data] = ev[i].res;
	syscall(SYS_io_destroy, ctx);
	return r;
}

static const char *resname(long res)
{
	return res < 0 ? en(-res) : "OK";
}

static void aio_rw_cb(struct iocb *cb, int op, const void *buf, size_t len, long long off)
{
	memset(cb, 0, sizeof(*cb));
	cb->aio_lio_opcode = op;
	cb->aio_buf = (unsigned long)buf;
	cb->aio_nbytes = len;
	cb->aio_offset = off;
}

static void aio_write_cb(struct iocb *cb, const void *buf, size_t len, long long off)
{
	aio_rw_cb(cb, IOCB_CMD_PWRITE, buf, len, off);
}

/* one IOCB_CMD_FSYNC or IOCB_CMD_FDSYNC: io_submit's error, else the event's */
static long aio_sync(int fd, int op)
{
	struct iocb cb;
	long res, sub;

	memset(&cb, 0, sizeof(cb));
	cb.aio_lio_opcode = op;
	sub = aio_run(fd, &cb, 1, &res);
	return sub < 0 ? sub : res;
}

static const char *case_aio_out_of_order(void)
{
	struct iocb cb[2];
	long res[2];
	int fd, s, c;

	reset_blob();
	fd = open(BLOB, O_WRONLY);
	aio_write_cb(&cb[0], data + 3000, 3000, 3000);
	aio_write_cb(&cb[1], data, 3000, 0);
	aio_run(fd, cb, 2, res);
	s = fsync(fd) ? errno : 0;
	c = close(fd) ? errno : 0;
	OUT("w@3000=%s w@0=%s fsync=%s close=%s blob=%s", resname(res[0]),
	    resname(res[1]), en(s), en(c), stored(data, 6000));
	return outcome;
}

static const char *case_aio_in_order(void)
{
	struct iocb cb[2];
	long res[2], ds, fs, commits0, k1, k2;
	int fd, c;

	reset_blob();
	commits0 = counter("commits");
	fd = open(BLOB, O_WRONLY);
	aio_write_cb(&cb[0], data, 3000, 0);
	aio_write_cb(&cb[1], data + 3000, 3000, 3000);
	aio_run(fd, cb, 2, res);
	ds = aio_sync(fd, IOCB_CMD_FDSYNC);
	k1 = counter("commits") - commits0;
	fs = aio_sync(fd, IOCB_CMD_FSYNC);
	k2 = counter("commits") - commits0;
	c = close(fd) ? errno : 0;
	OUT("w@0=%s w@3000=%s aio-fdsync=%s commits=+%ld aio-fsync=%s commits=+%ld close=%s "
	    "blob=%s", resname(res[0]), resname(res[1]), resname(ds), k1, resname(fs), k2,
	    en(c), stored(data, 6000));
	return outcome;
}

static const char *case_aio_shuffled(void)
{
	struct iocb cb[16];
	long res[16], sub;
	int fd, i, ok = 0, s, c;

	reset_blob();
	fd = open(BLOB, O_WRONLY);
	for (i = 0; i < 16; i++)
		aio_write_cb(&cb[i], data + shuffle[i] * 4096, 4096, shuffle[i] * 4096);
	sub = aio_run(fd, cb, 16, res);
	for (i = 0; i < 16; i++)
		ok += res[i] == 4096;
	s = fsync(fd) ? errno : 0;
	c = close(fd) ? errno : 0;
	OUT("io_submit=%ld writes-ok=%d fsync=%s close=%s blob=%s", sub, ok, en(s), en(c),
	    stored(data, 16 * 4096));
	return outcome;
}

static const char *case_aio_read(void)
{
	static unsigned char a[100], b[100];
	struct iocb cb[2];
	long res[2], sub;
	int fd;

	reset_blob();
	memset(a, 0, sizeof(a));
	memset(b, 0, sizeof(b));
	fd = open(BLOB, O_RDONLY);
	aio_rw_cb(&cb[0], IOCB_CMD_PREAD, a, 100, 0);
	aio_rw_cb(&cb[1], IOCB_CMD_PREAD, b, 100, 100);
	sub = aio_run(fd, cb, 2, res);
	close(fd);
	OUT("io_submit=%ld r@0=%ld r@100=%ld bytes=%s", sub, res[0], res[1],
	    !memcmp(a, base, 100) && !memcmp(b, base + 100, 100) ? "right" : "wrong");
	return outcome;
}

/* ---- io_uring ---- */

static int uring_rw(struct io_uring *ring, int op, int fd, void *buf, unsigned int len,
		    long long off)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct io_uring_cqe *cqe;
	int res;

	if (op == IORING_OP_WRITE)
		io_uring_prep_write(sqe, fd, buf, len, off);
	else if (op == IORING_OP_READ)
		io_uring_prep_read(sqe, fd, buf, len, off);
	else
		io_uring_prep_fsync(sqe, fd, 0);
	io_uring_submit(ring);
	if (io_uring_wait_cqe(ring, &cqe))
		return -EIO;
	res = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return res;
}

static const char *case_uring_current_position(void)
{
	struct io_uring ring;
	int fd, w1, w2, s, c;

	if (io_uring_queue_init(4, &ring, 0))
		return "io_uring_queue_init failed";
	reset_blob();
	fd = open(BLOB, O_WRONLY);
	w1 = uring_rw(&ring, IORING_OP_WRITE, fd, data, 5000, -1);
	w2 = uring_rw(&ring, IORING_OP_WRITE, fd, data + 5000, 5000, -1);
	s = uring_rw(&ring, IORING_OP_FSYNC, fd, NULL, 0, 0);
	c = fsync(fd) ? errno : 0;
	close(fd);
	io_uring_queue_exit(&ring);
	OUT("w=%s w=%s uring-fsync=%s fsync=%s blob=%s", resname(w1), resname(w2),
	    resname(s), en(c), stored_after_release(data, 10000));
	return outcome;
}

static const char *case_uring_offsets(void)
{
	static unsigned char want[8000];
	struct io_uring ring;
	int fd, w1, w2, w3, s, c;

	if (io_uring_queue_init(4, &ring, 0))
		return "io_uring_queue_init failed";
	reset_blob();
	memcpy(want, data, 8000);
	memcpy(want + 100, data, 100);
	fd = open(BLOB, O_WRONLY);
	w1 = uring_rw(&ring, IORING_OP_WRITE, fd, data, 4000, 0);
	w2 = uring_rw(&ring, IORING_OP_WRITE, fd, data + 4000, 4000, 4000);
	/* the end is 8000: 100 is behind it, and overwrites 100..199 */
	w3 = uring_rw(&ring, IORING_OP_WRITE, fd, data, 100, 100);
	s = uring_rw(&ring, IORING_OP_FSYNC, fd, NULL, 0, 0);
	c = fsync(fd) ? errno : 0;
	close(fd);
	io_uring_queue_exit(&ring);
	OUT("w@0=%s w@4000=%s w@100=%s uring-fsync=%s fsync=%s blob=%s", resname(w1),
	    resname(w2), resname(w3), resname(s), en(c), stored_after_release(want, 8000));
	return outcome;
}

/* 16 writes of 4 KiB at shuffled offsets, submitted at once */
static const char *case_uring_shuffled(void)
{
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	int fd, i, ok = 0, s;

	if (io_uring_queue_init(16, &ring, 0))
		return "io_uring_queue_init failed";
	reset_blob();
	fd = open(BLOB, O_WRONLY);
	for (i = 0; i < 16; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

		io_uring_prep_write(sqe, fd, data + shuffle[i] * 4096, 4096, shuffle[i] * 4096);
		sqe->user_data = i;
	}
	io_uring_submit(&ring);
	for (i = 0; i < 16; i++) {
		if (io_uring_wait_cqe(&ring, &cqe))
			break;
		ok += cqe->res == 4096;
		io_uring_cqe_seen(&ring, cqe);
	}
	s = fsync(fd) ? errno : 0;
	close(fd);
	io_uring_queue_exit(&ring);
	OUT("writes-ok=%d fsync=%s blob=%s", ok, en(s), stored_after_release(data, 16 * 4096));
	return outcome;
}

static const char *case_uring_read(void)
{
	struct io_uring ring;
	unsigned char buf[100];
	int fd, r;

	if (io_uring_queue_init(4, &ring, 0))
		return "io_uring_queue_init failed";
	reset_blob();
	fd = open(BLOB, O_RDONLY);
	r = uring_rw(&ring, IORING_OP_READ, fd, buf, 100, 7);
	close(fd);
	io_uring_queue_exit(&ring);
	OUT("read@7=%d bytes=%s", r, r == 100 && !memcmp(buf, base + 7, 100) ? "right" : "wrong");
	return outcome;
}

/* ---- positional and flagged writes ---- */

static const char *case_pwrite_at_end(void)
{
	int fd, a, b, s, c;

	reset_blob();
	fd = open(BLOB, O_WRONLY);
	a = pwrite(fd, data, 2000, 0) == 2000 ? 0 : errno;
	b = pwrite(fd, data + 2000, 2000, 2000) == 2000 ? 0 : errno;
	s = fsync(fd) ? errno : 0;
	c = close(fd) ? errno : 0;
	OUT("p@0=%s p@2000=%s fsync=%s close=%s blob=%s", en(a), en(b), en(s), en(c),
	    stored(data, 4000));
	return outcome;
}

/* pwrite(2) does not move the file position: write(2) lands at 0 again. */
static const char *case_pwrite_then_write(void)
{
	int fd, a, b, s, c;

	reset_blob();
	fd = open(BLOB, O_WRONLY);
	a = pwrite(fd, data, 300, 0) == 300 ? 0 : errno;
	b = write(fd, data + 300, 300) < 0 ? errno : 0;
	s = fsync(fd) ? errno : 0;
	c = close(fd) ? errno : 0;
	OUT("p@0=%s write(at position 0)=%s fsync=%s close=%s blob=%s", en(a), en(b), en(s),
	    en(c), stored(data + 300, 300));
	return outcome;
}

/* 100 bytes at 4096, then 100 at 0 (the file position): zeroes between */
static const char *case_pwrite_gap(void)
{
	static unsigned char want[4196];
	int fd, a, b, s, c;

	reset_blob();
	memset(want, 0, sizeof(want));
	memcpy(want, data, 100);
	memcpy(want + 4096, data, 100);
	fd = open(BLOB, O_WRONLY);
	a = pwrite(fd, data, 100, 4096) < 0 ? errno : 0;
	b = write(fd, data, 100) < 0 ? errno : 0;
	s = fsync(fd) ? errno : 0;
	c = close(fd) ? errno : 0;
	OUT("p@4096=%s then-write=%s fsync=%s close=%s blob=%s", en(a), en(b), en(s), en(c),
	    stored(want, sizeof(want)));
	return outcome;
}

static const char *case_pwrite_behind(void)
{
	static unsigned char want[200];
	int fd, a, b, s, c;

	reset_blob();
	memcpy(want, data + 500, 100);
	memcpy(want + 100, data + 100, 100);
	fd = open(BLOB, O_WRONLY);
	a = write(fd, data, 200) < 0 ? errno : 0;
	b = pwrite(fd, data + 500, 100, 0) < 0 ? errno : 0;
	s = fsync(fd) ? errno : 0;
	c = close(fd) ? errno : 0;
	OUT("w=%s p@0=%s fsync=%s close=%s blob=%s", en(a), en(b), en(s), en(c),
	    stored(want, sizeof(want)));
	return outcome;
}

static const char *case_pwrite_descending(void)
{
	int fd, i, failed = 0, s, c;

	reset_blob();
	fd = open(BLOB, O_WRONLY);
	for (i = 15; i >= 0; i--)
		failed += pwrite(fd, data + i * 4096, 4096, i * 4096) != 4096;
	s = fsync(fd) ? errno : 0;
	c = close(fd) ? errno : 0;
	OUT("pwrites-failed=%d fsync=%s close=%s blob=%s", failed, en(s), en(c),
	    stored(data, 16 * 4096));
	return outcome;
}

/* 100 bytes at 0 and 100 at 8192: the hole between reads as zeroes */
static const char *case_hole(void)
{
	static unsigned char want[8292];
	unsigned char *got = NULL;
	long n, zeroes = 0, i;
	int fd, a, b, s, c;

	reset_blob();
	memset(want, 0, sizeof(want));
	memcpy(want, data, 100);
	memcpy(want + 8192, data + 100, 100);
	fd = open(BLOB, O_WRONLY);
	a = pwrite(fd, data, 100, 0) == 100 ? 0 : errno;
	b = pwrite(fd, data + 100, 100, 8192) == 100 ? 0 : errno;
	s = fsync(fd) ? errno : 0;
	c = close(fd) ? errno : 0;
	n = blob_slurp(BLOB, &got);
	for (i = 100; i < 8192 && i < n; i++)
		zeroes += !got[i];
	free(got);
	OUT("p@0=%s p@8192=%s fsync=%s close=%s size=%ld zeroes-in-100..8191=%ld blob=%s",
	    en(a), en(b), en(s), en(c), n, zeroes, stored(want, sizeof(want)));
	return outcome;
}

static const char *case_pwritev2_flags(void)
{
	struct iovec v;
	long commits0, commits1;
	int fd, cur, app, dsync, nowait, s, c;

	reset_blob();
	commits0 = counter("commits");
	fd = open(BLOB, O_WRONLY);
	v = (struct iovec){ data, 1000 };
	cur = pwritev2(fd, &v, 1, -1, 0) == 1000 ? 0 : errno;
	v = (struct iovec){ data + 1000, 1000 };
	dsync = pwritev2(fd, &v, 1, -1, RWF_DSYNC) == 1000 ? 0 : errno;
	commits1 = counter("commits");
	v = (struct iovec){ data + 5000, 1000 };
	nowait = pwritev2(fd, &v, 1, -1, RWF_NOWAIT) < 0 ? errno : 0;
	v = (struct iovec){ data + 2000, 1000 };
	app = pwritev2(fd, &v, 1, 12345, RWF_APPEND) == 1000 ? 0 : errno;
	s = fsync(fd) ? errno : 0;
	c = close(fd) ? errno : 0;
	OUT("cur=%s dsync=%s commits-before-fsync=%ld nowait=%s append@12345=%s fsync=%s "
	    "close=%s blob=%s", en(cur), en(dsync), commits1 - commits0, en(nowait),
	    en(app), en(s), en(c), stored(data, 3000));
	return outcome;
}

static const char *case_o_append(void)
{
	int fd, a, b, s, c;

	reset_blob();
	fd = open(BLOB, O_WRONLY | O_APPEND);
	a = write(fd, data, 700) == 700 ? 0 : errno;
	b = pwrite(fd, data + 700, 300, 99) == 300 ? 0 : errno;
	s = fsync(fd) ? errno : 0;
	c = close(fd) ? errno : 0;
	OUT("w=%s p@99=%s fsync=%s close=%s blob=%s", en(a), en(b), en(s), en(c),
	    stored(data, 1000));
	return outcome;
}

static const char *case_o_sync(void)
{
	long commits0, commits1;
	int fd, a, b, s, c;

	reset_blob();
	commits0 = counter("commits");
	fd = open(BLOB, O_WRONLY | O_SYNC);
	a = write(fd, data, 600) == 600 ? 0 : errno;
	b = write(fd, data + 600, 600) == 600 ? 0 : errno;
	commits1 = counter("commits");
	s = fsync(fd) ? errno : 0;
	c = close(fd) ? errno : 0;
	OUT("w=%s w=%s commits-before-fsync=%ld fsync=%s close=%s blob=%s", en(a), en(b),
	    commits1 - commits0, en(s), en(c), stored(data, 1200));
	return outcome;
}

/* fdatasync(2) after every write fails with EINVAL and commits nothing; fsync(2) commits. */
static const char *case_fdatasync_each(void)
{
	char ds[8 * 12] = "";
	long commits0, k1, k2, k3;
	const char *b1;
	int fd, i, failed = 0, s, c;

	reset_blob();
	commits0 = counter("commits");
	fd = open(BLOB, O_WRONLY);
	for (i = 0; i < 8; i++) {
		failed += write(fd, data + i * 1000, 1000) != 1000;
		snprintf(ds + strlen(ds), sizeof(ds) - strlen(ds), "%s%s", i ? "," : "",
			 fdatasync(fd) ? en(errno) : "OK");
	}
	k1 = counter("commits") - commits0;
	s = fsync(fd) ? errno : 0;
	k2 = counter("commits") - commits0;
	b1 = stored(data, 8000);
	c = close(fd) ? errno : 0;
	k3 = counter("commits") - commits0;
	OUT("writes-failed=%d fdatasyncs=%s commits=+%ld fsync=%s commits=+%ld blob=%s close=%s "
	    "commits=+%ld blob=%s", failed, ds, k1, en(s), k2, b1, en(c), k3, stored(data, 8000));
	return outcome;
}

static const char *case_truncate(void)
{
	int fd, o, t0, a, t1, s, c;
	struct stat st;
	char first[16];

	reset_blob();
	fd = open(BLOB, O_WRONLY | O_TRUNC);
	o = fd < 0 ? errno : 0;
	c = close(fd) ? errno : 0;
	snprintf(first, sizeof(first), "%s", stored(data, 1));
	fd = open(BLOB, O_WRONLY);
	t0 = ftruncate(fd, 0) ? errno : 0;
	a = write(fd, data, 500) == 500 ? 0 : errno;
	t1 = ftruncate(fd, 10) ? errno : 0;
	if (fstat(fd, &st))
		st.st_size = -1;
	s = fsync(fd) ? errno : 0;
	close(fd);
	OUT("open(O_TRUNC)=%s close=%s blob=%s; ftruncate=%s w=%s ftruncate(10)=%s stat-size=%lld "
	    "fsync=%s blob=%s", en(o), en(c), first, en(t0), en(a), en(t1),
	    (long long)st.st_size, en(s), stored(data, 500));
	return outcome;
}

/* ---- reading ---- */

static const char *case_positional_reads(void)
{
	unsigned char a[10], b[5], c[10], d[20];
	struct iovec v[2] = { { d, 10 }, { d + 10, 10 } };
	int fd, ok1, ok2, ok3, ok4;
	int sk;

	reset_blob();
	fd = open(BLOB, O_RDONLY);
	ok1 = pread(fd, a, 10, 100) == 10 && !memcmp(a, base + 100, 10);
	ok2 = read(fd, b, 5) == 5 && !memcmp(b, base, 5);
	ok3 = pread(fd, c, 10, 0) == 10 && !memcmp(c, base, 10);
	ok4 = preadv(fd, v, 2, 50) == 20 && !memcmp(d, base + 50, 20);
	sk = lseek(fd, 0, SEEK_SET) < 0 ? errno : 0;
	close(fd);
	OUT("pread@100=%s read=%s pread@0=%s preadv@50=%s lseek=%s", ok1 ? "right" : "wrong",
	    ok2 ? "right" : "wrong", ok3 ? "right" : "wrong", ok4 ? "right" : "wrong", en(sk));
	return outcome;
}

/*
 * The store's read_mode makes blob's read method misbehave when it fills
 * the buffer: "shrink" fills and returns half the size it gave, as an
 * attribute that shrank between the two calls; "overclaim" fills the
 * buffer and returns one byte more than its length.
 */
static int set_read_mode(const char *mode)
{
	return write_str(ITEM "/read_mode", mode);
}

static const char *case_read_shrink(void)
{
	unsigned char *got = NULL;
	long n;
	int set;

	blob_upload(BLOB, data, 10000, 10000);
	set = set_read_mode("shrink");
	n = blob_slurp(BLOB, &got);
	set |= set_read_mode("normal");
	OUT("read_mode=%s read=%ld first-half=%s", set ? "failed" : "set", n,
	    n >= 5000 && !memcmp(got, data, 5000) ? "right" : "wrong");
	free(got);
	reset_blob();
	return outcome;
}

/* a read's result: its count, or its errno's name (call it right after) */
static const char *count_or_err(ssize_t n, char *buf, size_t size)
{
	if (n < 0)
		return en(errno);
	snprintf(buf, size, "%zd", n);
	return buf;
}

/*
 * Reads a blob of 10000 bytes through one open file: first with the read
 * method in mode @first, then with it in mode @then.
 */
static const char *read_in_modes(const char *first, const char *then, const char *label)
{
	static unsigned char got[20000];
	char b1[32], b2[32];
	const char *r1, *r2;
	ssize_t n, m, total;
	int fd, set;

	blob_upload(BLOB, data, 10000, 10000);
	set = set_read_mode(first);
	fd = open(BLOB, O_RDONLY);
	memset(got, 0, sizeof(got));
	n = read(fd, got, sizeof(got));
	r1 = count_or_err(n, b1, sizeof(b1));
	set |= set_read_mode(then);
	m = read(fd, got + (n > 0 ? n : 0), sizeof(got) - (n > 0 ? n : 0));
	r2 = count_or_err(m, b2, sizeof(b2));
	close(fd);
	set |= set_read_mode("normal");
	total = (n > 0 ? n : 0) + (m > 0 ? m : 0);
	OUT("read_mode=%s read=%s %s=%s bytes=%s", set ? "failed" : "set", r1, label, r2,
	    total == 10000 && !memcmp(got, data, 10000) ? "right" : total ? "wrong" : "none");
	reset_blob();
	return outcome;
}

static const char *case_read_overclaim(void)
{
	return read_in_modes("overclaim", "overclaim", "again");
}

/* "empty" fills nothing and returns 0: the read returns 0, and asks again */
static const char *case_read_empty(void)
{
	return read_in_modes("empty", "normal", "then-normal");
}

static int try_mmap(int flags, int prot)
{
	int fd = open(BLOB, flags), e;
	void *p = mmap(NULL, 4096, prot, MAP_SHARED, fd, 0);

	e = p == MAP_FAILED ? errno : 0;
	if (p != MAP_FAILED)
		munmap(p, 4096);
	close(fd);
	return e;
}

static const char *case_mmap(void)
{
	OUT("mmap(O_RDONLY)=%s mmap(O_WRONLY)=%s", en(try_mmap(O_RDONLY, PROT_READ)),
	    en(try_mmap(O_WRONLY, PROT_WRITE)));
	return outcome;
}

static const char *case_splice_family(void)
{
	int fd, rfd, tmp, p[2], a, sf, cfr, sp, b, s, c, sfo, spo, cce, c2;
	long rejects0 = counter("rejects");
	loff_t off = 0;
	ssize_t cc;

	reset_blob();
	tmp = open("/tmp", O_TMPFILE | O_RDWR, 0600);
	a = write(tmp, data, 300) == 300 ? 0 : errno;
	pipe(p);
	write(p[1], data, 100);
	fd = open(BLOB, O_WRONLY);
	a |= write(fd, data, 100) == 100 ? 0 : errno;
	off = 0;
	sf = sendfile(fd, tmp, &off, 100) < 0 ? errno : 0;
	off = 0;
	cfr = copy_file_range(tmp, &off, fd, NULL, 100, 0) < 0 ? errno : 0;
	sp = splice(p[0], NULL, fd, NULL, 100, 0) < 0 ? errno : 0;
	b = write(fd, data + 100, 100) == 100 ? 0 : errno;
	s = fsync(fd) ? errno : 0;
	c = close(fd) ? errno : 0;
	rfd = open(BLOB, O_RDONLY);
	fd = open(IMAGE, O_WRONLY);
	cc = copy_file_range(rfd, NULL, fd, NULL, 100, 0);
	cce = cc < 0 ? errno : 0;
	c2 = close(fd) ? errno : 0;
	sfo = sendfile(tmp, rfd, NULL, 100) < 0 ? errno : 0;
	spo = splice(rfd, NULL, p[1], NULL, 100, 0) < 0 ? errno : 0;
	close(rfd);
	close(tmp);
	close(p[0]);
	close(p[1]);
	OUT("w=%s sendfile-in=%s copy_file_range-in=%s splice-in=%s w=%s fsync=%s close=%s "
	    "blob=%s; sendfile-out=%s splice-out=%s; blob to image: copy_file_range=%zd(%s) "
	    "close=%s rejects=+%ld", en(a), en(sf), en(cfr), en(sp), en(b), en(s), en(c),
	    stored(data, 200), en(sfo), en(spo), cc, en(cce), en(c2),
	    counter("rejects") - rejects0);
	return outcome;
}

/* ---- faults and refusals ---- */

static const char *case_fault_half_way(void)
{
	unsigned char *m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				-1, 0);
	ssize_t w, z;
	int fd, e, s, c;

	reset_blob();
	memcpy(m, data, 4096);
	munmap(m + 4096, 4096);
	fd = open(BLOB, O_WRONLY);
	w = write(fd, m, 8192);
	e = w < 0 ? errno : 0;
	z = write(fd, m, 0);
	s = fsync(fd) ? errno : 0;
	c = close(fd) ? errno : 0;
	munmap(m, 4096);
	OUT("write=%s(%zd) write(0 bytes)=%zd fsync=%s close=%s blob=%s", en(e), w, z, en(s),
	    en(c), stored(data, 4096));
	return outcome;
}

static const char *case_writev_fault(void)
{
	struct iovec v[2] = { { data, 100 }, { (void *)4096, 100 } };
	int fd, e, s, c;
	ssize_t w;

	reset_blob();
	fd = open(BLOB, O_WRONLY);
	w = writev(fd, v, 2);
	e = w < 0 ? errno : 0;
	s = fsync(fd) ? errno : 0;
	c = close(fd) ? errno : 0;
	OUT("writev=%s(%zd) fsync=%s close=%s blob=%s", en(e), w, en(s), en(c),
	    stored(data, 100));
	return outcome;
}

/* Refused by the VFS before configfs sees them: the upload goes on. */
static const char *case_vfs_refusals(void)
{
	static struct iovec many[IOV_MAX + 1];
	int fd, a, iov, arr, kern, b, s, c, i;

	for (i = 0; i <= IOV_MAX; i++)
		many[i] = (struct iovec){ data, 1 };
	reset_blob();
	fd = open(BLOB, O_WRONLY);
	a = write(fd, data, 300) == 300 ? 0 : errno;
	iov = writev(fd, many, IOV_MAX + 1) < 0 ? errno : 0;
	/* raw syscalls: the pointers are bad on purpose */
	arr = syscall(SYS_writev, fd, 8L, 1) < 0 ? errno : 0;
	kern = syscall(SYS_write, fd, -4096L, 100) < 0 ? errno : 0;
	b = write(fd, data + 300, 300) == 300 ? 0 : errno;
	s = fsync(fd) ? errno : 0;
	c = close(fd) ? errno : 0;
	OUT("w=%s writev(IOV_MAX+1)=%s writev(bad array)=%s write(kernel address)=%s w=%s "
	    "fsync=%s close=%s blob=%s", en(a), en(iov), en(arr), en(kern), en(b), en(s),
	    en(c), stored(data, 600));
	return outcome;
}

/* ---- the commit ---- */

static const char *case_fsync_reports(void)
{
	unsigned char *img;
	size_t size;
	long rejects0 = counter("rejects"), commits0, commits1;
	int fd, s1, s2, c, w1, w2, s3, s4, c2, ro;

	reset_blob();
	img = blob_image(data, 500, &size, 1);
	fd = open(IMAGE, O_WRONLY);
	write(fd, img, size);
	s1 = fsync(fd) ? errno : 0;
	s2 = fdatasync(fd) ? errno : 0;
	c = close(fd) ? errno : 0;
	free(img);

	commits0 = counter("commits");
	fd = open(BLOB, O_WRONLY);
	w1 = write(fd, data, 1000) == 1000 ? 0 : errno;
	s3 = fsync(fd) ? errno : 0;
	w2 = write(fd, data + 1000, 500) == 500 ? 0 : errno;
	s4 = fdatasync(fd) ? errno : 0;
	commits1 = counter("commits");
	c2 = close(fd) ? errno : 0;
	fd = open(BLOB, O_RDONLY);
	ro = fsync(fd) ? errno : 0;
	close(fd);
	OUT("bad image: fsync=%s fdatasync=%s close=%s rejects=+%ld; blob: w=%s fsync=%s "
	    "w=%s fdatasync=%s commits=+%ld close=%s commits=+%ld blob=%s; read-only fsync=%s",
	    en(s1), en(s2), en(c), counter("rejects") - rejects0, en(w1), en(s3), en(w2),
	    en(s4), commits1 - commits0, en(c2), counter("commits") - commits0,
	    stored(data, 1500), en(ro));
	return outcome;
}

/* A refused commit is final: fsync(2) repeats it, the release does not retry. */
static const char *case_refused_final(void)
{
	long rejects0 = counter("rejects"), r1;
	unsigned char *img;
	size_t size;
	int fd, s1, s2, c;

	img = blob_image(data, 500, &size, 1);
	fd = open(IMAGE, O_WRONLY);
	write(fd, img, size);
	free(img);
	s1 = fsync(fd) ? errno : 0;
	s2 = fsync(fd) ? errno : 0;
	r1 = counter("rejects") - rejects0;
	c = close(fd) ? errno : 0;
	OUT("fsync=%s fsync=%s rejects=+%ld close=%s rejects=+%ld", en(s1), en(s2), r1, en(c),
	    counter("rejects") - rejects0);
	return outcome;
}

/* A write after a refused commit: the next commit hands over all of it. */
static const char *case_refused_then_more(void)
{
	long rejects0 = counter("rejects"), r1, r2;
	unsigned char *img;
	size_t size;
	int fd, s1, w, s2, c;

	img = blob_image(data, 500, &size, 1);
	fd = open(IMAGE, O_WRONLY);
	write(fd, img, size);
	free(img);
	s1 = fsync(fd) ? errno : 0;
	r1 = counter("rejects") - rejects0;
	w = write(fd, "x", 1) == 1 ? 0 : errno;	/* one byte past the header's length */
	s2 = fsync(fd) ? errno : 0;
	r2 = counter("rejects") - rejects0;
	c = close(fd) ? errno : 0;
	OUT("fsync=%s rejects=+%ld w=%s fsync=%s rejects=+%ld close=%s rejects=+%ld", en(s1),
	    r1, en(w), en(s2), r2, en(c), counter("rejects") - rejects0);
	return outcome;
}

#define NR_THREADS	4
#define PER_THREAD	64
#define CHUNK		4096

struct sharer {
	pthread_t t;
	int fd, id, err;
};

static void *sharer_main(void *arg)
{
	struct sharer *s = arg;
	unsigned char buf[CHUNK];
	int i;

	for (i = 0; i < PER_THREAD; i++) {
		memset(buf, 'A' + s->id, CHUNK);
		memcpy(buf, &i, sizeof(i));
		if (write(s->fd, buf, CHUNK) != CHUNK)
			s->err = errno ? errno : EIO;
	}
	return NULL;
}

static const char *case_threads_share_fd(void)
{
	struct sharer s[NR_THREADS];
	int next[NR_THREADS] = { 0 };
	unsigned char *got = NULL;
	int fd, i, err = 0, whole = 0, ordered = 1, sy;
	long n;

	reset_blob();
	fd = open(BLOB, O_WRONLY);
	for (i = 0; i < NR_THREADS; i++) {
		s[i] = (struct sharer){ .fd = fd, .id = i };
		pthread_create(&s[i].t, NULL, sharer_main, &s[i]);
	}
	for (i = 0; i < NR_THREADS; i++) {
		pthread_join(s[i].t, NULL);
		err |= s[i].err;
	}
	sy = fsync(fd) ? errno : 0;
	close(fd);
	n = blob_slurp(BLOB, &got);
	for (i = 0; n == NR_THREADS * PER_THREAD * CHUNK && i < NR_THREADS * PER_THREAD; i++) {
		unsigned char *c = got + (size_t)i * CHUNK;
		int id = c[CHUNK - 1] - 'A', seq, k, same = 1;

		memcpy(&seq, c, sizeof(seq));
		for (k = sizeof(seq); k < CHUNK; k++)
			same &= c[k] == c[CHUNK - 1];
		if (!same || id < 0 || id >= NR_THREADS)
			continue;
		whole++;
		if (seq != next[id]++)
			ordered = 0;
	}
	free(got);
	OUT("writes=%s fsync=%s size=%ld whole-chunks=%d each-thread-in-order=%s", en(err),
	    en(sy), n, whole, ordered ? "yes" : "no");
	return outcome;
}

static int pidfd_getfd_of(pid_t pid, int fd)
{
	int pidfd = syscall(SYS_pidfd_open, pid, 0), r;

	if (pidfd < 0)
		return -1;
	r = syscall(SYS_pidfd_getfd, pidfd, fd, 0);
	close(pidfd);
	return r;
}

/*
 * Another process takes the writer's open file with pidfd_getfd() and holds
 * it while the writer closes: fsync(2) reports the refusal; close(2)
 * reports nothing, the writer's nor the holder's, which is the last and
 * commits (once: not again after fsync(2) refused it).
 */
static const char *case_pidfd_getfd(int use_fsync)
{
	int ready[2], got[2], go[2], fd, s = 0, c, st;
	long rejects0 = counter("rejects");
	unsigned char *img;
	size_t size;
	pid_t pid, writer = getpid();
	char b;

	reset_blob();
	pipe(ready);
	pipe(got);
	pipe(go);
	pid = fork();		/* before open(2): the child inherits nothing */
	if (!pid) {
		int n = -1, mine;

		read(ready[0], &n, sizeof(n));
		mine = pidfd_getfd_of(writer, n);
		write(got[1], "x", 1);
		read(go[0], &b, 1);
		_exit(mine < 0 ? 255 : close(mine) ? errno : 0);
	}
	img = blob_image(data, 500, &size, 1);
	fd = open(IMAGE, O_WRONLY);
	write(fd, img, size);
	free(img);
	write(ready[1], &fd, sizeof(fd));
	read(got[0], &b, 1);
	if (use_fsync)
		s = fsync(fd) ? errno : 0;
	c = close(fd) ? errno : 0;
	write(go[1], "x", 1);
	waitpid(pid, &st, 0);
	close(ready[0]);
	close(ready[1]);
	close(got[0]);
	close(got[1]);
	close(go[0]);
	close(go[1]);
	if (use_fsync)
		OUT("fsync=%s close=%s holder's-close=%s rejects=+%ld", en(s), en(c),
		    WIFEXITED(st) ? en(WEXITSTATUS(st)) : "killed",
		    counter("rejects") - rejects0);
	else
		OUT("close=%s holder's-close=%s rejects=+%ld", en(c),
		    WIFEXITED(st) ? en(WEXITSTATUS(st)) : "killed",
		    counter("rejects") - rejects0);
	return outcome;
}

/* ---- writers that die ---- */

static const char *death(int st)
{
	static char out[32];

	if (WIFSIGNALED(st))
		snprintf(out, sizeof(out), "SIG%s", sigabbrev_np(WTERMSIG(st)));
	else
		snprintf(out, sizeof(out), "exit(%d)", WEXITSTATUS(st));
	return out;
}

enum how { BY_SIGKILL, BY_ABORT, BY_EXIT1 };

/*
 * A child opens the blob, writes the first 3000 bytes of an upload and
 * dies: killed by SIGKILL, by abort(3), or by _exit(1). Only a death by a
 * signal abandons the upload; any exit(2) is a close like close(2).
 */
static const char *case_writer_dies(enum how how)
{
	long commits0;
	int p[2], st;
	pid_t pid;
	char b;

	reset_blob();
	commits0 = counter("commits");
	pipe(p);
	pid = fork();
	if (!pid) {
		struct rlimit no_core = { 0, 0 };
		int fd = open(BLOB, O_WRONLY);

		setrlimit(RLIMIT_CORE, &no_core);
		write(fd, data, 3000);
		if (how == BY_ABORT)
			abort();
		if (how == BY_EXIT1)
			_exit(1);
		write(p[1], "x", 1);
		pause();
		_exit(0);
	}
	if (how == BY_SIGKILL) {
		read(p[0], &b, 1);
		kill(pid, SIGKILL);
	}
	waitpid(pid, &st, 0);
	close(p[0]);
	close(p[1]);
	OUT("died=%s commits=+%ld blob=%s", death(st), counter("commits") - commits0,
	    stored(data, 3000));
	return outcome;
}

static const char *killed_by_sigkill(void) { return case_writer_dies(BY_SIGKILL); }
static const char *killed_by_abort(void) { return case_writer_dies(BY_ABORT); }
static const char *exits_with_1(void) { return case_writer_dies(BY_EXIT1); }

/* The parent writes; a child that only inherited the file is killed. */
static const char *case_nonwriter_killed(void)
{
	long commits0, k1, k2;
	int fd, p[2], st, w, s, c;
	pid_t pid;
	char b;

	reset_blob();
	commits0 = counter("commits");
	fd = open(BLOB, O_WRONLY);
	w = write(fd, data, 4000) == 4000 ? 0 : errno;
	pipe(p);
	pid = fork();
	if (!pid) {
		write(p[1], "x", 1);
		pause();
		_exit(0);
	}
	read(p[0], &b, 1);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	close(p[0]);
	close(p[1]);
	k1 = counter("commits") - commits0;
	s = fsync(fd) ? errno : 0;
	k2 = counter("commits") - commits0;
	c = close(fd) ? errno : 0;
	OUT("w=%s child=%s commits=+%ld fsync=%s commits=+%ld close=%s commits=+%ld blob=%s",
	    en(w), death(st), k1, en(s), k2, en(c), counter("commits") - commits0,
	    stored(data, 4000));
	return outcome;
}

/*
 * Fork a child that writes @n bytes from @src to @fd, closes @fd too if
 * @close_fd, reports in *@res (0, or the errno) and waits to be killed.
 */
static pid_t writer_child(int fd, const unsigned char *src, size_t n, int close_fd,
			  unsigned char *res)
{
	int p[2];
	pid_t pid;

	*res = 0xff;
	if (pipe(p))
		return -1;
	pid = fork();
	if (!pid) {
		unsigned char r;

		close(p[0]);
		r = write(fd, src, n) == (ssize_t)n ? 0 : errno;

		if (close_fd && close(fd))
			r = errno;
		write(p[1], &r, 1);
		pause();
		_exit(0);
	}
	close(p[1]);
	if (pid > 0 && read(p[0], res, 1) != 1)
		*res = 0xfe;
	close(p[0]);
	return pid;
}

/*
 * The parent writes 2000 bytes, a forked child the next 3000 (the last
 * write) and is killed while the parent still holds the open file.
 */
static const char *case_last_writer_killed(void)
{
	long commits0;
	int fd, st, w, s, w2, c;
	unsigned char cw;
	pid_t pid;

	reset_blob();
	commits0 = counter("commits");
	fd = open(BLOB, O_WRONLY);
	w = write(fd, data, 2000) == 2000 ? 0 : errno;
	pid = writer_child(fd, data + 2000, 3000, 0, &cw);
	if (pid <= 0) {
		close(fd);
		return "fork failed";
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	s = fsync(fd) ? errno : 0;
	w2 = write(fd, data + 5000, 1000) == 1000 ? 0 : errno;
	c = close(fd) ? errno : 0;
	OUT("w=%s child-w=%s child=%s fsync=%s w=%s close=%s commits=+%ld blob=%s", en(w),
	    en(cw), death(st), en(s), en(w2), en(c), counter("commits") - commits0,
	    stored(data, 6000));
	return outcome;
}

/*
 * A child writes 3000 bytes and commits them with fsync(2), writes 2000
 * more or nothing, and is killed: what fsync(2) committed stays, what came
 * after it is abandoned.
 */
static const char *case_killed_after_fsync(int more)
{
	unsigned char r[2] = { 0xff, 0xff };
	long commits0;
	int p[2], st;
	pid_t pid;

	reset_blob();
	commits0 = counter("commits");
	pipe(p);
	pid = fork();
	if (!pid) {
		int fd = open(BLOB, O_WRONLY);

		write(fd, data, 3000);
		r[0] = fsync(fd) ? errno : 0;
		r[1] = 0;
		if (more)
			r[1] = write(fd, data + 3000, 2000) == 2000 ? 0 : errno;
		write(p[1], r, 2);
		pause();
		_exit(0);
	}
	read(p[0], r, 2);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	close(p[0]);
	close(p[1]);
	OUT("fsync=%s then-w=%s child=%s commits=+%ld blob=%s", en(r[0]),
	    more ? en(r[1]) : "none", death(st), counter("commits") - commits0,
	    stored_as(data, 3000, "first-3000", data, 5000, "all-5000"));
	return outcome;
}

/* ---- writes stalled mid-copy, then cut short ---- */

enum stall_end { STALL_SIGKILL, STALL_EXIT_GROUP, STALL_EXEC, STALL_SIGKILL_HELD };

struct stall_write {
	int fd;
	const unsigned char *src;
	size_t len;
	off_t pos;
	ssize_t ret;
	int err;
};

static void *stall_writer(void *arg)
{
	struct stall_write *w = arg;

	w->ret = pwrite(w->fd, w->src, w->len, w->pos);
	w->err = errno;
	return NULL;
}

/*
 * In a child: write the first @pre bytes of the upload, then have a thread
 * pwrite(2) @len bytes at @pos from a buffer whose first page holds data and
 * whose second page is missing in a userfaultfd range, so that the copy
 * stops there and waits. Once the fault is seen, the child ends: killed by
 * SIGKILL, or by _exit(0), an exit_group(2) that cuts the stalled write
 * short, or by an exec that does (of this program, which exits with 0,
 * the descriptor still open). With STALL_SIGKILL_HELD the parent opened
 * the file and holds it: after the kill it calls fsync(2) and writes. The
 * outcome says whether the write stalled.
 */
static const char *case_stalled_write(size_t pre, off_t pos, size_t len, enum stall_end how)
{
	int held = how == STALL_SIGKILL_HELD ? open(BLOB, O_WRONLY) : -1;
	const char *hs = "", *hw = "";
	unsigned char stalled = 0;
	char after[64] = "";
	long commits0;
	int p[2], st;
	pid_t pid;

	reset_blob();
	commits0 = counter("commits");
	pipe(p);
	pid = fork();
	if (!pid) {
		struct uffdio_api api = { .api = UFFD_API };
		struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
		struct stall_write w = { .len = len, .pos = pos };
		int fd = held >= 0 ? held : open(BLOB, O_WRONLY);
		int uffd = syscall(SYS_userfaultfd, O_CLOEXEC);
		unsigned char *area = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
					   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		struct pollfd pfd = { .fd = uffd, .events = POLLIN };
		struct uffd_msg msg;
		pthread_t t;

		/* the first page is present before the range is registered */
		memcpy(area, data, 4096);
		reg.range.start = (unsigned long)area;
		reg.range.len = 8192;
		if (write(fd, data, pre) != (ssize_t)pre || uffd < 0 ||
		    ioctl(uffd, UFFDIO_API, &api) || ioctl(uffd, UFFDIO_REGISTER, &reg))
			_exit(2);
		w.fd = fd;
		w.src = area + 4096 - (len < 4096 ? len / 2 : 4096);
		pthread_create(&t, NULL, stall_writer, &w);
		stalled = poll(&pfd, 1, 20000) == 1 && read(uffd, &msg, sizeof(msg)) ==
			  sizeof(msg) && msg.event == UFFD_EVENT_PAGEFAULT;
		write(p[1], &stalled, 1);
		if (how == STALL_EXIT_GROUP)
			_exit(0);
		if (how == STALL_EXEC)
			execl("/proc/self/exe", "stalled-exec", "--exit", NULL);
		pause();
		_exit(0);
	}
	close(p[1]);
	read(p[0], &stalled, 1);
	if (how == STALL_SIGKILL || how == STALL_SIGKILL_HELD)
		kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	close(p[0]);
	if (held >= 0) {
		hs = fsync(held) ? en(errno) : "OK";
		hw = write(held, data, 10) == 10 ? "OK" : en(errno);
		snprintf(after, sizeof(after), " fsync=%s w=%s close=%s", hs, hw,
			 close(held) ? en(errno) : "OK");
	}
	OUT("stalled=%s died=%s%s commits=+%ld blob=%s", stalled ? "yes" : "no", death(st),
	    after, counter("commits") - commits0,
	    stored_as(data, pre, pre == 3000 ? "first-3000" : "first-8192", NULL, 0, NULL));
	return outcome;
}

/* 3000 bytes written, then 2000 at 3000 of which the second 1000 stall */
static const char *stalled_extend_exit_group(void)
{
	return case_stalled_write(3000, 3000, 2000, STALL_EXIT_GROUP);
}

static const char *stalled_extend_exec(void)
{
	return case_stalled_write(3000, 3000, 2000, STALL_EXEC);
}

static const char *stalled_extend_sigkill(void)
{
	return case_stalled_write(3000, 3000, 2000, STALL_SIGKILL);
}

/* 8192 bytes written, then 8192 at 4096: the first 4096 overwrite, then stall */
static const char *stalled_overwrite_exit_group(void)
{
	return case_stalled_write(8192, 4096, 8192, STALL_EXIT_GROUP);
}

static const char *stalled_overwrite_sigkill_held(void)
{
	return case_stalled_write(8192, 4096, 8192, STALL_SIGKILL_HELD);
}

/*
 * A child makes the last write, closes its descriptor and is killed; the
 * parent, which holds the file too, calls fsync(2) while the child is a
 * zombie not yet reaped, then once it is. The child finished its upload:
 * its death after the close abandons nothing.
 */
static const char *case_closed_then_killed(void)
{
	unsigned char cw;
	long commits0;
	int fd, st, s1, s2, c;
	siginfo_t si = { 0 };
	pid_t pid;

	reset_blob();
	commits0 = counter("commits");
	fd = open(BLOB, O_WRONLY);
	if (fd < 0)
		return "open failed";
	pid = writer_child(fd, data, 3000, 1, &cw);
	if (pid <= 0) {
		close(fd);
		return "fork failed";
	}
	kill(pid, SIGKILL);
	/* a zombie, not reaped */
	waitid(P_PID, pid, &si, WEXITED | WNOWAIT);
	s1 = fsync(fd) ? errno : 0;
	waitpid(pid, &st, 0);
	s2 = fsync(fd) ? errno : 0;
	c = close(fd) ? errno : 0;
	OUT("child-w=%s child=%s fsync-before-reaping=%s fsync=%s close=%s commits=+%ld "
	    "blob=%s", en(cw), death(st), en(s1), en(s2), en(c), counter("commits") - commits0,
	    stored(data, 3000));
	return outcome;
}

/*
 * A thread of the writer makes the last write and ends with exit(2) (that
 * thread alone): its process keeps the descriptor table open, so nothing is
 * closed. The process is then killed: the write was its, and is abandoned.
 */
static void *write_then_exit_thread(void *arg)
{
	int fd = *(int *)arg;

	write(fd, data, 3000);
	syscall(SYS_exit, 0);
	return NULL;
}

static const char *case_thread_wrote_then_exited(void)
{
	long commits0, k1;
	int p[2], st;
	pid_t pid;
	char b = 0;

	reset_blob();
	commits0 = counter("commits");
	if (pipe(p))
		return "pipe failed";
	pid = fork();
	if (!pid) {
		int fd = open(BLOB, O_WRONLY);
		pthread_t t;

		pthread_create(&t, NULL, write_then_exit_thread, &fd);
		pthread_join(t, NULL);
		write(p[1], "x", 1);
		pause();
		_exit(0);
	}
	close(p[1]);
	if (pid < 0) {
		close(p[0]);
		return "fork failed";
	}
	read(p[0], &b, 1);
	close(p[0]);
	k1 = counter("commits") - commits0;
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	OUT("thread-exited=%s commits=+%ld then-process=%s commits=+%ld blob=%s",
	    b == 'x' ? "yes" : "no", k1, death(st), counter("commits") - commits0,
	    stored(data, 3000));
	return outcome;
}

/* ---- the open file busy: a stalled write holds it ---- */

/*
 * A forked process whose thread pwrite(2)s 2000 bytes at @pos of @fd: the
 * first 1000 from a present page, the rest from a userfaultfd page left
 * missing, so that the write holds the open file until the process is told
 * through h->cmd to fill the page ('c': the write completes, storing
 * data[pos .. pos + 2000)) or to exit_group(0) ('e': the write is cut
 * short). It reports whether the write stalled, and with 'c' its result.
 */
struct holder {
	pid_t pid;
	int cmd[2], rep[2];
	unsigned char stalled;
};

static void holder_run(struct holder *h, int fd, off_t pos)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	struct stall_write w = { .fd = fd, .len = 2000, .pos = pos };
	int uffd = syscall(SYS_userfaultfd, O_CLOEXEC);
	unsigned char *area = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct pollfd pfd = { .fd = uffd, .events = POLLIN };
	struct uffdio_copy copy = { 0 };
	struct uffd_msg msg;
	unsigned char r;
	pthread_t t;
	char cmd = 0;

	close(h->cmd[1]);
	close(h->rep[0]);
	if (area == MAP_FAILED || uffd < 0)
		_exit(2);
	/* page 0 present, page 1 missing, page 2 the fill for page 1 */
	memcpy(area + 3096, data + pos, 1000);
	memcpy(area + 8192, data + pos + 1000, 4096);
	reg.range.start = (unsigned long)area;
	reg.range.len = 8192;
	if (ioctl(uffd, UFFDIO_API, &api) || ioctl(uffd, UFFDIO_REGISTER, &reg))
		_exit(2);
	w.src = area + 3096;
	pthread_create(&t, NULL, stall_writer, &w);
	h->stalled = poll(&pfd, 1, 20000) == 1 && read(uffd, &msg, sizeof(msg)) ==
		     sizeof(msg) && msg.event == UFFD_EVENT_PAGEFAULT;
	write(h->rep[1], &h->stalled, 1);
	if (read(h->cmd[0], &cmd, 1) != 1 || cmd != 'c')
		_exit(0);
	copy.dst = (unsigned long)area + 4096;
	copy.src = (unsigned long)area + 8192;
	copy.len = 4096;
	if (ioctl(uffd, UFFDIO_COPY, &copy))
		_exit(3);
	pthread_join(t, NULL);
	r = w.ret == 2000 ? 0 : w.ret < 0 ? w.err : 0xfe;
	write(h->rep[1], &r, 1);
	_exit(0);
}

static int holder_start(struct holder *h, int fd, off_t pos)
{
	if (pipe(h->cmd))
		return -1;
	if (pipe(h->rep)) {
		close(h->cmd[0]);
		close(h->cmd[1]);
		return -1;
	}
	h->stalled = 0;
	h->pid = fork();
	if (!h->pid)
		holder_run(h, fd, pos);
	close(h->cmd[0]);
	close(h->rep[1]);
	if (h->pid < 0) {
		close(h->cmd[1]);
		close(h->rep[0]);
		return -1;
	}
	if (read(h->rep[0], &h->stalled, 1) != 1)
		h->stalled = 0;
	return 0;
}

/* Tell the holder @cmd, reap it; the write's result, "none" if cut short */
static const char *holder_end(struct holder *h, char cmd, char death_out[32])
{
	static char res[16];
	unsigned char r = 0xff;
	int st;

	write(h->cmd[1], &cmd, 1);
	if (cmd == 'c' && read(h->rep[0], &r, 1) != 1)
		r = 0xff;
	waitpid(h->pid, &st, 0);
	snprintf(death_out, 32, "%s", death(st));
	close(h->cmd[1]);
	close(h->rep[0]);
	if (cmd != 'c')
		return "none";
	snprintf(res, sizeof(res), "%s", r == 0xff ? "lost" : r == 0xfe ? "short" : en(r));
	return res;
}

/*
 * A child makes the last write, 3000 bytes, and is killed while another
 * process's write, stalled mid-copy, holds the open file: ->flush cannot
 * take it, and the abandon falls to the next holder. If the stalled write
 * then completes, it came later and the upload goes on; if it is cut short
 * having added nothing, the parent's fsync(2) finds the upload abandoned.
 */
static const char *case_killed_while_held(char end)
{
	char cd[32], hd[32];
	unsigned char cw;
	struct holder h;
	long commits0;
	int fd, st, s, c;
	const char *hw;
	pid_t pid;

	reset_blob();
	commits0 = counter("commits");
	fd = open(BLOB, O_WRONLY);
	if (fd < 0)
		return "open failed";
	pid = writer_child(fd, data, 3000, 0, &cw);
	if (pid <= 0) {
		close(fd);
		return "fork failed";
	}
	if (holder_start(&h, fd, 3000)) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		close(fd);
		return "pipe failed";
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	snprintf(cd, sizeof(cd), "%s", death(st));
	hw = holder_end(&h, end, hd);
	s = fsync(fd) ? errno : 0;
	c = close(fd) ? errno : 0;
	OUT("child-w=%s child=%s stalled=%s holder-w=%s holder=%s fsync=%s close=%s "
	    "commits=+%ld blob=%s", en(cw), cd, h.stalled ? "yes" : "no", hw, hd, en(s),
	    en(c), counter("commits") - commits0,
	    stored_as(data, 5000, "all-5000", data, 3000, "first-3000"));
	return outcome;
}

static const char *killed_while_held_completes(void) { return case_killed_while_held('c'); }
static const char *killed_while_held_cut_short(void) { return case_killed_while_held('e'); }

/*
 * Whether @pid sleeps uninterruptibly in @fn (/proc/PID/wchan skips the
 * scheduler's and the mutex's own functions), not in a page fault or
 * reclaim on its way there.
 */
static int asleep_in(pid_t pid, const char *fn)
{
	char path[64], buf[512], *rp;
	int fd, n, d;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	rp = strrchr(buf, ')');
	d = rp && rp[1] == ' ' && rp[2] == 'D';
	snprintf(path, sizeof(path), "/proc/%d/wchan", pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	return d && !strcmp(buf, fn);
}

/*
 * The parent writes 3000 bytes; another process's write stalls mid-copy
 * and holds the open file; a third process's pwrite(2) of 10 bytes at 0
 * waits behind it, and is killed while it waits. It stores nothing and
 * abandons nothing; then the stalled write completes. (6.12 waits
 * unkillably: its waiter dies only after it got the file and wrote.)
 */
static const char *case_waiter_killed(void)
{
	int fd, w, st = 0, s, c, i, died = 0, waiting = 0;
	char hd[32];
	struct holder h;
	long commits0;
	const char *hw;
	pid_t pid;

	reset_blob();
	commits0 = counter("commits");
	fd = open(BLOB, O_WRONLY);
	if (fd < 0)
		return "open failed";
	w = write(fd, data, 3000) == 3000 ? 0 : errno;
	if (holder_start(&h, fd, 3000)) {
		close(fd);
		return "pipe failed";
	}
	pid = fork();
	if (!pid) {
		unsigned char ten[10];

		memset(ten, 0xee, sizeof(ten));
		pwrite(fd, ten, sizeof(ten), 0);
		_exit(0);
	}
	if (pid < 0) {
		holder_end(&h, 'c', hd);
		close(fd);
		return "fork failed";
	}
	/* asleep in the write: the only sleep there is the wait for the file */
	for (i = 0; i < 200 && !waiting; i++) {
		usleep(50000);
		waiting = asleep_in(pid, "configfs_bin_write_iter");
	}
	kill(pid, SIGKILL);
	for (i = 0; i < 100 && !died; i++) {
		died = waitpid(pid, &st, WNOHANG) == pid;
		if (!died)
			usleep(50000);
	}
	hw = holder_end(&h, 'c', hd);
	if (!died)
		waitpid(pid, &st, 0);
	s = fsync(fd) ? errno : 0;
	c = close(fd) ? errno : 0;
	OUT("w=%s stalled=%s waiting=%s waiter=%s died-while-held=%s holder-w=%s holder=%s "
	    "fsync=%s close=%s commits=+%ld blob=%s", en(w), h.stalled ? "yes" : "no",
	    waiting ? "yes" : "no", death(st), died ? "yes" : "no", hw, hd, en(s),
	    en(c), counter("commits") - commits0, stored_as(data, 5000, "all-5000", NULL, 0,
							  NULL));
	return outcome;
}

/* ---- an fsync(2) while the killed writer dumps core ---- */

#define CORE_FLAG "/tmp/bin-attr-core"
#define CORE_PIPE_LIMIT "/proc/sys/kernel/core_pipe_limit"

static void touch(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT, 0600);

	if (fd >= 0)
		close(fd);
}

/*
 * core_pattern's helper: when the test asked for it (CORE_FLAG.PID.wait),
 * say that the dump began and hold the dumping process until the test says
 * go (30 s at most); then take the core.
 */
static int core_helper(const char *pid)
{
	char path[128];
	char buf[65536];
	int i;

	snprintf(path, sizeof(path), CORE_FLAG ".%s.wait", pid);
	if (!access(path, F_OK)) {
		snprintf(path, sizeof(path), CORE_FLAG ".%s.started", pid);
		touch(path);
		snprintf(path, sizeof(path), CORE_FLAG ".%s.go", pid);
		for (i = 0; i < 600 && access(path, F_OK); i++)
			usleep(50000);
	}
	while (read(0, buf, sizeof(buf)) > 0)
		;
	return 0;
}

/*
 * A child makes the last write and aborts; while it dumps core into a
 * core_pattern pipe that holds it, the parent, which shares the open file,
 * calls fsync(2). The child's descriptors are not closed yet: the fsync
 * commits what was written, as it would have a moment before the signal.
 */
static const char *case_fsync_during_core_dump(void)
{
	char self[96], pattern[128], saved[256] = "", limit[32] = "0";
	char fw[64], fs[64], fg[64];
	int fd, p[2] = { -1, -1 }, q[2] = { -1, -1 }, st, s, c, i, dumping = 0, n, pf;
	long commits0, k1;
	pid_t pid;
	char b;

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	pf = open("/proc/sys/kernel/core_pattern", O_RDONLY);
	if (n <= 0 || pf < 0)
		return "cannot read core_pattern";
	self[n] = 0;
	n = read(pf, saved, sizeof(saved) - 1);
	close(pf);
	saved[n > 0 ? n : 0] = 0;
	pf = open(CORE_PIPE_LIMIT, O_RDONLY);
	if (pf >= 0) {
		n = read(pf, limit, sizeof(limit) - 1);
		limit[n > 0 ? n : 0] = 0;
		close(pf);
	}
	snprintf(pattern, sizeof(pattern), "|%s --core-helper %%p", self);
	/* the dump then waits for the helper, whatever the core's size */
	if (write_str(CORE_PIPE_LIMIT, "1") ||
	    write_str("/proc/sys/kernel/core_pattern", pattern)) {
		write_str(CORE_PIPE_LIMIT, limit);
		return "cannot set core_pattern";
	}

	reset_blob();
	commits0 = counter("commits");
	fd = open(BLOB, O_WRONLY);
	if (fd < 0 || pipe(p) || pipe(q)) {
		for (i = 0; i < 2; i++) {
			if (p[i] >= 0)
				close(p[i]);
			if (q[i] >= 0)
				close(q[i]);
		}
		if (fd >= 0)
			close(fd);
		write_str("/proc/sys/kernel/core_pattern", saved);
		write_str(CORE_PIPE_LIMIT, limit);
		return "open or pipe failed";
	}
	/* p: the child says it wrote; q: the parent says abort */
	pid = fork();
	if (!pid) {
		struct rlimit core = { RLIM_INFINITY, RLIM_INFINITY };

		close(p[0]);
		close(q[1]);
		setrlimit(RLIMIT_CORE, &core);
		write(fd, data, 3000);
		write(p[1], "x", 1);
		read(q[0], &b, 1);
		abort();
	}
	close(p[1]);
	close(q[0]);
	read(p[0], &b, 1);
	snprintf(fw, sizeof(fw), CORE_FLAG ".%d.wait", pid);
	snprintf(fs, sizeof(fs), CORE_FLAG ".%d.started", pid);
	snprintf(fg, sizeof(fg), CORE_FLAG ".%d.go", pid);
	touch(fw);
	write(q[1], "g", 1);
	for (i = 0; i < 400 && !dumping; i++) {
		dumping = !access(fs, F_OK);
		if (!dumping)
			usleep(50000);
	}
	s = fsync(fd) ? errno : 0;
	k1 = counter("commits") - commits0;
	touch(fg);
	waitpid(pid, &st, 0);
	c = close(fd) ? errno : 0;
	close(p[0]);
	close(q[1]);
	unlink(fw);
	unlink(fs);
	unlink(fg);
	write_str("/proc/sys/kernel/core_pattern", saved);
	write_str(CORE_PIPE_LIMIT, limit);
	OUT("dumping=%s fsync=%s commits=+%ld child=%s%s close=%s commits=+%ld blob=%s",
	    dumping ? "yes" : "no", en(s), k1, death(st), WCOREDUMP(st) ? "(core)" : "",
	    en(c), counter("commits") - commits0, stored(data, 3000));
	return outcome;
}

static const char *killed_after_fsync(void) { return case_killed_after_fsync(0); }
static const char *killed_after_fsync_and_more(void) { return case_killed_after_fsync(1); }

/* ---- racing readers ---- */

#define RACE_SMALL	3000
#define RACE_BIG	20000

static volatile int race_stop;

static void *race_writer(void *arg)
{
	long *rounds = arg;

	while (!race_stop) {
		blob_upload(BLOB, data, RACE_SMALL, RACE_SMALL);
		blob_upload(BLOB, data + 1, RACE_BIG, RACE_BIG);
		(*rounds)++;
	}
	return NULL;
}

static const char *case_readers_race_commits(int reads)
{
	pthread_t w;
	long rounds = 0, torn = 0, again = 0, i;

	blob_upload(BLOB, data, RACE_SMALL, RACE_SMALL);
	race_stop = 0;
	pthread_create(&w, NULL, race_writer, &rounds);
	for (i = 0; i < reads; i++) {
		unsigned char *got = NULL;
		long n = blob_slurp(BLOB, &got);

		/* The sample fails a read of a blob that grew meanwhile. */
		if (n == -EAGAIN)
			again++;
		else if (!((n == RACE_SMALL && !memcmp(got, data, n)) ||
			   (n == RACE_BIG && !memcmp(got, data + 1, n))))
			torn++;
		free(got);
	}
	race_stop = 1;
	pthread_join(w, NULL);
	OUT("%ld reads racing %ld pairs of commits: %ld neither the old blob nor the new, "
	    "%ld EAGAIN", (long)reads, rounds, torn, again);
	return outcome;
}

/* ---- rmdir ---- */

static const char *case_rmdir_open(void)
{
	int fd, w, s, c, r;

	mkdir(STORE_ROOT "/gone", 0755);
	fd = open(STORE_ROOT "/gone/blob", O_WRONLY);
	w = write(fd, data, 100) == 100 ? 0 : errno;
	r = rmdir(STORE_ROOT "/gone") ? errno : 0;
	s = fsync(fd) ? errno : 0;
	c = close(fd) ? errno : 0;
	OUT("w=%s rmdir=%s fsync=%s close=%s", en(w), en(r), en(s), en(c));
	return outcome;
}

/* ---- fail-nth on every allocation of the write and commit paths ---- */

#define DBG	"/sys/kernel/debug/"

/*
 * failslab and fail_page_alloc set to fail every allocation of a task whose
 * make-it-fail is set, from the one fail-nth picks on (fail-nth counts down
 * first; once it fired, the attributes decide). Their old values are put
 * back afterwards.
 */
static struct {
	const char *path, *val;
	char old[32];
} persist_attrs[] = {
#define PA(attr, v) { .path = DBG attr, .val = v }
	PA("failslab/task-filter", "Y"), PA("failslab/probability", "100"),
	PA("failslab/interval", "1"), PA("failslab/space", "0"), PA("failslab/times", "-1"),
	PA("fail_page_alloc/task-filter", "Y"), PA("fail_page_alloc/probability", "100"),
	PA("fail_page_alloc/interval", "1"), PA("fail_page_alloc/space", "0"),
	PA("fail_page_alloc/times", "-1"),
	/* vmalloc()'s pages are __GFP_HIGHMEM, which it leaves alone by default */
	PA("fail_page_alloc/ignore-gfp-highmem", "N"),
#undef PA
};

#define NR_PERSIST	(sizeof(persist_attrs) / sizeof(persist_attrs[0]))

static int persist_arm(void)
{
	size_t i;
	int bad = 0;

	for (i = 0; i < NR_PERSIST; i++) {
		int fd = open(persist_attrs[i].path, O_RDONLY);
		ssize_t n = fd < 0 ? -1 : read(fd, persist_attrs[i].old,
						 sizeof(persist_attrs[i].old) - 1);

		if (fd >= 0)
			close(fd);
		persist_attrs[i].old[n > 0 ? n : 0] = 0;
		persist_attrs[i].old[strcspn(persist_attrs[i].old, "\n")] = 0;
		bad |= n <= 0 || write_str(persist_attrs[i].path, persist_attrs[i].val);
	}
	return bad;
}

static void persist_restore(void)
{
	size_t i;

	for (i = 0; i < NR_PERSIST; i++)
		if (persist_attrs[i].old[0])
			write_str(persist_attrs[i].path, persist_attrs[i].old);
}

/*
 * Fail the Nth allocation of an upload of 80000 bytes in two writes and its
 * commit, for N = 1, 2, ... until an upload runs without a failure: that
 * one allocation alone (fail-nth), or, with @persist, that one and every
 * later one until the upload is over. Ours commits with fsync(2), called
 * after a failed write too, and again once the injection is off; each run
 * must end one of three ways, and never with a wrong blob:
 *  - a write failed with ENOMEM: the upload is abandoned, so a later write
 *    and both fsync(2) calls return ENOMEM, nothing is committed, not even
 *    at the release, and the old blob stays;
 *  - the commit failed (the store's copy of the blob, ENOMEM): both fsync(2)
 *    calls return ENOMEM (a refused commit is final), nothing is committed,
 *    the old blob stays;
 *  - the upload succeeded whole, the failure absorbed by a fallback (the
 *    doubled buffer by the exact one, kmalloc() by vmalloc()): one commit,
 *    of the new blob.
 * close(2) returns 0 every time. 6.12 commits with close(2), the only call
 * that commits there; its runs are reported, not asserted.
 */
static const char *case_fail_nth_sweep(int persist, long *bad, int *write_failed,
				       int *commit_failed)
{
	int nth, mif = -1, n, clean_ok = 0;
	char num[16], rest[16];

	*bad = 0;
	*write_failed = *commit_failed = 0;
	if (write_str(DBG "failslab/ignore-gfp-wait", "N") ||
	    write_str(DBG "fail_page_alloc/ignore-gfp-wait", "N") ||
	    write_str(DBG "fail_page_alloc/min-order", "0") ||
	    write_str(DBG "failslab/verbose", "0") ||
	    write_str(DBG "fail_page_alloc/verbose", "0"))
		return "no failslab/fail_page_alloc in debugfs";
	nth = open("/proc/thread-self/fail-nth", O_RDWR);
	if (nth < 0)
		return "no /proc/thread-self/fail-nth";
	if (persist) {
		mif = open("/proc/thread-self/make-it-fail", O_WRONLY);
		if (mif < 0 || persist_arm()) {
			persist_restore();
			close(nth);
			if (mif >= 0)
				close(mif);
			return "cannot arm failslab/fail_page_alloc through debugfs";
		}
	}
	for (n = 1; n < 2000; n++) {
		int fd, e1 = 0, e2 = 0, s1 = 0, s2 = 0, c, injected, good;
		long commits0, k;
		const char *st;

		reset_blob();
		commits0 = counter("commits");
		fd = open(BLOB, O_WRONLY);
		snprintf(num, sizeof(num), "%d", n);
		write(nth, num, strlen(num));
		if (persist)
			write(mif, "1", 1);
		if (write(fd, data, 40000) != 40000)
			e1 = errno;
		if ((!pristine || !e1) && write(fd, data + 40000, 40000) != 40000)
			e2 = errno;
		if (!pristine && fsync(fd))
			s1 = errno;
		if (persist)
			write(mif, "0", 1);
		memset(rest, 0, sizeof(rest));
		pread(nth, rest, sizeof(rest) - 1, 0);
		write(nth, "0", 1);
		injected = atoi(rest) == 0;
		if (!pristine && fsync(fd))
			s2 = errno;
		c = close(fd) ? errno : 0;
		k = counter("commits") - commits0;
		st = stored(data, 80000);
		if (pristine) {
			/* the release commits whatever was written */
			good = !strcmp(st, (e1 || e2) ? "old" : "new");
			clean_ok += good;
		} else if (e1 || e2) {
			int e = e1 ? e1 : e2;

			good = e == ENOMEM && (!e1 || e2 == e1) && s1 == e && s2 == e && !c &&
			       !k && !strcmp(st, "old");
			*write_failed += good;
		} else if (s1) {
			good = s1 == ENOMEM && s2 == ENOMEM && !c && !k && !strcmp(st, "old");
			*commit_failed += good;
		} else {
			good = !s2 && !c && k == 1 && !strcmp(st, "new");
			clean_ok += good;
		}
		if (!good && ++*bad <= 5)
			printf("# fail-nth %d%s: writes %s %s, fsync %s %s, close %s, commits +%ld, "
			       "stored %s\n", n, persist ? " on" : "", en(e1), en(e2), en(s1),
			       en(s2), en(c), k, st);
		if (!injected)
			break;
	}
	if (persist) {
		persist_restore();
		close(mif);
	}
	close(nth);
	if (pristine)
		OUT("%d faults injected: %d uploads kept the old blob or stored the new one whole, "
		    "%ld stored a blob nobody wrote whole", n - 1, clean_ok - 1, *bad);
	else
		OUT("%d faults injected: %d failed a write (abandoned: fsync ENOMEM), %d failed the "
		    "commit (fsync ENOMEM, final), %d uploads still succeeded whole, %ld ended "
		    "otherwise", n - 1, *write_failed, *commit_failed, clean_ok - 1, *bad);
	return outcome;
}

/* ---- memory cgroup limits ---- */

#define CG		"/sys/fs/cgroup"
#define CGX		CG "/lk45_configfs_bin"
#define BIG		(16u << 20)	/* the upload tried in the cgroup */
#define MIB		(1u << 20)
#define NREADERS	32

static unsigned char *big;	/* BIG bytes: data 16 times over */
static int cg_mounted, cg_enabled;

/* A cgroup of memory.max 8M; NULL, or why there is none. */
static const char *cg_setup(void)
{
	if (access(CG "/cgroup.controllers", F_OK)) {
		if (mount("none", CG, "cgroup2", 0, NULL))
			return "cannot mount cgroup2 at " CG;
		cg_mounted = 1;
	}
	if (!has_word(CG "/cgroup.controllers", "memory"))
		return "no memory controller in cgroup2 at " CG " (CONFIG_MEMCG off, or bound to v1)";
	if (!has_word(CG "/cgroup.subtree_control", "memory")) {
		if (write_str(CG "/cgroup.subtree_control", "+memory"))
			return "cannot enable +memory in " CG "/cgroup.subtree_control";
		cg_enabled = 1;
	}
	rmdir(CGX);
	if (mkdir(CGX, 0755))
		return "cannot mkdir " CGX;
	if (write_str(CGX "/memory.max", "8M") || read_long(CGX "/memory.max") != 8 << 20) {
		rmdir(CGX);
		return "cannot set memory.max of " CGX " to 8M";
	}
	return NULL;
}

static void cg_teardown(void)
{
	rmdir(CGX);
	if (cg_enabled)
		write_str(CG "/cgroup.subtree_control", "-memory");
	if (cg_mounted)
		umount(CG);
	cg_enabled = cg_mounted = 0;
}

/* Move @pid into the cgroup; "yes" or "no". */
static const char *cg_move(pid_t pid)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%d", pid);
	return write_str(CGX "/cgroup.procs", buf) ? "no" : "yes";
}

/*
 * A child for the cgroup: it works in and reports through a shared page,
 * and waits to be moved. It stays killable by the OOM killer: configfs'
 * buffers must fail with ENOMEM past the limit, not invoke it, so a kill
 * (no report) fails the case. It touches that page and
 * errno before the move, so that after it no page fault of its own has to
 * be charged: only configfs' buffers meet the limit.
 */
struct cg_child {
	pid_t pid;
	int go[2];
	volatile int *ready;
};

static void *cg_shared(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	memset(p, 0, size);
	return p;
}

/* In the child: make ready, then wait for the parent's go. */
static void cg_child_wait(struct cg_child *k, void *report, size_t size)
{
	char b;

	memset(report, 0, size);
	errno = 0;
	read(k->go[0], &b, 1);
}

/* In the parent: move the child, let it go, wait up to 60 s for its report. */
static const char *cg_child_run(struct cg_child *k)
{
	const char *moved = cg_move(k->pid);
	int i;

	write(k->go[1], "x", 1);
	for (i = 0; i < 6000 && !*k->ready; i++)
		usleep(10000);
	return moved;
}

/*
 * The child uploads 16 MiB in writes of 1 MiB through an open file the
 * parent opened and closes last, so that a commit, if any, is made outside
 * the cgroup.
 */
static const char *case_memcg_upload(void)
{
	struct rep { int ready, err, again, fsync; } *r = cg_shared(sizeof(*r));
	struct cg_child k;
	long commits0;
	int fd, st, c;
	const char *moved;

	if (!r)
		return "mmap failed";
	r->err = r->fsync = -1;
	reset_blob();
	commits0 = counter("commits");
	fd = open(BLOB, O_WRONLY);
	pipe(k.go);
	k.ready = &r->ready;
	k.pid = fork();
	if (!k.pid) {
		size_t off;
		int err = 0;

		cg_child_wait(&k, r, sizeof(*r));
		for (off = 0; off < BIG && !err; off += MIB)
			if (write(fd, big + off, MIB) != MIB)
				err = errno;
		r->err = err;
		if (err)
			r->again = write(fd, big, 4096) < 0 ? errno : 0;
		r->fsync = fsync(fd) ? errno : 0;
		r->ready = 1;
		_exit(0);
	}
	moved = cg_child_run(&k);
	waitpid(k.pid, &st, 0);
	c = close(fd) ? errno : 0;
	close(k.go[0]);
	close(k.go[1]);
	OUT("moved=%s report=%s writes=%s%s%s fsync=%s child=%s close=%s commits=+%ld blob=%s",
	    moved, r->ready ? "yes" : "no", en(r->err), r->err ? " again=" : "",
	    r->err ? en(r->again) : "", en(r->fsync), death(st), en(c),
	    counter("commits") - commits0, stored(big, BIG));
	munmap(r, sizeof(*r));
	return outcome;
}

/*
 * 32 open files of a 1 MiB blob, all opened first, then each read a byte,
 * all kept open: in the cgroup, then outside any limit.
 */
static const char *case_memcg_readers(void)
{
	struct rep {
		int ready, ok, enomem, other, wrong, i, fds[NREADERS];
		unsigned char c;
	} *r = cg_shared(sizeof(*r));
	int done[2], st, i, outside = 0, fds[NREADERS];
	struct cg_child k;
	long cur, peak, max;
	const char *moved;

	if (!r)
		return "mmap failed";
	blob_upload(BLOB, data, MIB, MIB);
	pipe(k.go);
	pipe(done);
	k.ready = &r->ready;
	k.pid = fork();
	if (!k.pid) {
		cg_child_wait(&k, r, sizeof(*r));
		for (r->i = 0; r->i < NREADERS; r->i++)
			r->fds[r->i] = open(BLOB, O_RDONLY);
		for (r->i = 0; r->i < NREADERS; r->i++) {
			if (read(r->fds[r->i], &r->c, 1) == 1) {
				r->ok++;
				r->wrong += r->c != data[0];
			} else if (errno == ENOMEM) {
				r->enomem++;
			} else {
				r->other++;
			}
		}
		r->ready = 1;
		read(done[0], &r->c, 1);
		_exit(0);
	}
	moved = cg_child_run(&k);
	cur = read_long(CGX "/memory.current");
	peak = read_long(CGX "/memory.peak");
	max = read_long(CGX "/memory.max");
	write(done[1], "x", 1);
	waitpid(k.pid, &st, 0);
	for (i = 0; i < NREADERS; i++) {
		unsigned char c;

		fds[i] = open(BLOB, O_RDONLY);
		outside += read(fds[i], &c, 1) == 1 && c == data[0];
	}
	for (i = 0; i < NREADERS; i++)
		close(fds[i]);
	for (i = 0; i < 2; i++) {
		close(k.go[i]);
		close(done[i]);
	}
	printf("# in the cgroup: %d of %d reads took their copy, %d ENOMEM, %d other; "
	       "memory.current %ld, memory.peak %ld, memory.max %ld\n", r->ok, NREADERS,
	       r->enomem, r->other, cur, peak, max);
	OUT("moved=%s report=%s some-ENOMEM=%s other-errors=%d wrong-bytes=%d "
	    "current<=max=%s peak<=max=%s; outside: %d/%d read", moved,
	    r->ready ? "yes" : "no", r->enomem > 0 ? "yes" : "no", r->other, r->wrong,
	    cur >= 0 && cur <= max ? "yes" : "no", peak < 0 ? "none" : peak <= max ? "yes" : "no",
	    outside, NREADERS);
	munmap(r, sizeof(*r));
	reset_blob();
	return outcome;
}

/*
 * Reload the sample with another max_blob, on a fresh item (an io-wq
 * worker may hold a file of it for a moment yet: retry the unload).
 */
static int reload_sample(const char *max_blob)
{
	char cmd[320];

	snprintf(cmd, sizeof(cmd), "for i in $(seq 25); do rmmod " SAMPLE " 2>/dev/null && "
		 "break; sleep 0.2; done; insmod /lib/modules/$(uname -r)/extra/" SAMPLE
		 ".ko max_blob=%s", max_blob);
	if (rmdir(ITEM) || system(cmd) || mkdir(ITEM, 0755))
		return -1;
	return reset_blob();
}

/* ---- the run ---- */

struct tcase {
	const char *what;
	const char *(*run)(void);
	const char *ours;	/* the contract */
	const char *v612;	/* 6.12's configfs */
};

static const char *pidfd_with_fsync(void) { return case_pidfd_getfd(1); }
static const char *pidfd_close_only(void) { return case_pidfd_getfd(0); }

static const struct tcase cases[] = {
	{ "AIO writes at offsets 3000 then 0, in one io_submit", case_aio_out_of_order,
	  "w@3000=OK w@0=OK fsync=OK close=OK blob=new",
	  "w@3000=OK w@0=OK fsync=EINVAL close=OK blob=new" },
	{ "AIO writes at 0 then 3000, then IOCB_CMD_FDSYNC and IOCB_CMD_FSYNC", case_aio_in_order,
	  "w@0=OK w@3000=OK aio-fdsync=EINVAL commits=+0 aio-fsync=OK commits=+1 close=OK blob=new",
	  "w@0=OK w@3000=OK aio-fdsync=EINVAL commits=+0 aio-fsync=EINVAL commits=+0 close=OK "
	  "blob=new" },
	{ "AIO: 16 writes of 4 KiB at shuffled offsets in one io_submit", case_aio_shuffled,
	  "io_submit=16 writes-ok=16 fsync=OK close=OK blob=new",
	  "io_submit=16 writes-ok=16 fsync=EINVAL close=OK blob=new" },
	{ "AIO reads (IOCB_CMD_PREAD) at 0 and 100 of one open file", case_aio_read,
	  "io_submit=2 r@0=100 r@100=100 bytes=right", "io_submit=2 r@0=100 r@100=100 bytes=right" },
	{ "io_uring writes at the current position, IORING_OP_FSYNC",
	  case_uring_current_position, "w=OK w=OK uring-fsync=OK fsync=OK blob=new",
	  "w=OK w=OK uring-fsync=EINVAL fsync=EINVAL blob=new" },
	{ "io_uring writes at 0, at the end, then behind the end", case_uring_offsets,
	  "w@0=OK w@4000=OK w@100=OK uring-fsync=OK fsync=OK blob=new",
	  "w@0=OK w@4000=OK w@100=OK uring-fsync=EINVAL fsync=EINVAL blob=new" },
	{ "io_uring: 16 writes of 4 KiB at shuffled offsets, submitted at once",
	  case_uring_shuffled, "writes-ok=16 fsync=OK blob=new",
	  "writes-ok=16 fsync=EINVAL blob=new" },
	{ "io_uring read at offset 7", case_uring_read, "read@7=100 bytes=right",
	  "read@7=100 bytes=right" },
	{ "pwrite(2) at 0, then at the end", case_pwrite_at_end,
	  "p@0=OK p@2000=OK fsync=OK close=OK blob=new",
	  "p@0=OK p@2000=OK fsync=EINVAL close=OK blob=new" },
	{ "pwrite(2) of 16 pieces of 4 KiB at descending offsets", case_pwrite_descending,
	  "pwrites-failed=0 fsync=OK close=OK blob=new",
	  "pwrites-failed=0 fsync=EINVAL close=OK blob=new" },
	{ "pwrite(2) past the end, then write(2) at position 0", case_pwrite_gap,
	  "p@4096=OK then-write=OK fsync=OK close=OK blob=new",
	  "p@4096=OK then-write=OK fsync=EINVAL close=OK blob=new" },
	{ "pwrite(2) at 0 and at 8192: a hole of zeroes", case_hole,
	  "p@0=OK p@8192=OK fsync=OK close=OK size=8292 zeroes-in-100..8191=8092 blob=new",
	  "p@0=OK p@8192=OK fsync=EINVAL close=OK size=8292 zeroes-in-100..8191=8092 blob=new" },
	{ "pwrite(2) behind the end", case_pwrite_behind,
	  "w=OK p@0=OK fsync=OK close=OK blob=new",
	  "w=OK p@0=OK fsync=EINVAL close=OK blob=new" },
	{ "pwritev2(2): offset -1, RWF_DSYNC, RWF_NOWAIT, RWF_APPEND aimed at 12345",
	  case_pwritev2_flags,
	  "cur=OK dsync=OK commits-before-fsync=0 nowait=EOPNOTSUPP append@12345=OK fsync=OK "
	  "close=OK blob=new",
	  "cur=OK dsync=OK commits-before-fsync=0 nowait=EOPNOTSUPP append@12345=OK "
	  "fsync=EINVAL close=OK blob=other(13345 bytes)" },
	{ "pwrite(2) at 0, then write(2) at the file position, still 0", case_pwrite_then_write,
	  "p@0=OK write(at position 0)=OK fsync=OK close=OK blob=new",
	  "p@0=OK write(at position 0)=OK fsync=EINVAL close=OK blob=new" },
	{ "O_APPEND: write(2), then pwrite(2) aimed at 99", case_o_append,
	  "w=OK p@99=OK fsync=OK close=OK blob=new",
	  "w=OK p@99=OK fsync=EINVAL close=OK blob=other(700 bytes)" },
	{ "O_SYNC writes commit nothing by themselves", case_o_sync,
	  "w=OK w=OK commits-before-fsync=0 fsync=OK close=OK blob=new",
	  "w=OK w=OK commits-before-fsync=0 fsync=EINVAL close=OK blob=new" },
	{ "fdatasync(2) after each of 8 writes, then fsync(2), then close(2)",
	  case_fdatasync_each,
	  "writes-failed=0 fdatasyncs=EINVAL,EINVAL,EINVAL,EINVAL,EINVAL,EINVAL,EINVAL,EINVAL "
	  "commits=+0 fsync=OK commits=+1 "
	  "blob=new close=OK commits=+1 blob=new",
	  "writes-failed=0 fdatasyncs=EINVAL,EINVAL,EINVAL,EINVAL,EINVAL,EINVAL,EINVAL,EINVAL "
	  "commits=+0 fsync=EINVAL commits=+0 blob=old close=OK commits=+1 blob=new" },
	{ "O_TRUNC and ftruncate(2)", case_truncate,
	  "open(O_TRUNC)=OK close=OK blob=old; ftruncate=OK w=OK ftruncate(10)=OK stat-size=10 "
	  "fsync=OK blob=new",
	  "open(O_TRUNC)=OK close=OK blob=old; ftruncate=OK w=OK ftruncate(10)=OK stat-size=10 "
	  "fsync=EINVAL blob=new" },
	{ "pread(2), read(2), preadv(2) of one version; lseek(2)", case_positional_reads,
	  "pread@100=right read=right pread@0=right preadv@50=right lseek=ESPIPE",
	  "pread@100=right read=right pread@0=right preadv@50=right lseek=ESPIPE" },
	{ "a read method that fills and returns half the size it gave", case_read_shrink,
	  "read_mode=set read=5000 first-half=right", "read_mode=set read=10000 first-half=right" },
	{ "a read method that returns one byte more than its buffer", case_read_overclaim,
	  "read_mode=set read=EIO again=EIO bytes=none",
	  "read_mode=set read=10000 again=0 bytes=right" },
	{ "a read method that fills nothing and returns 0, then fills the blob",
	  case_read_empty, "read_mode=set read=0 then-normal=10000 bytes=right",
	  "read_mode=set read=10000 then-normal=0 bytes=wrong" },
	{ "mmap(2)", case_mmap, "mmap(O_RDONLY)=ENODEV mmap(O_WRONLY)=EACCES",
	  "mmap(O_RDONLY)=ENODEV mmap(O_WRONLY)=EACCES" },
	{ "sendfile(2), copy_file_range(2), splice(2) in and out", case_splice_family,
	  "w=OK sendfile-in=EINVAL copy_file_range-in=EXDEV splice-in=EINVAL w=OK fsync=OK "
	  "close=OK blob=new; sendfile-out=EINVAL splice-out=EINVAL; blob to image: "
	  "copy_file_range=0(OK) close=OK rejects=+0",
	  "w=OK sendfile-in=EINVAL copy_file_range-in=EXDEV splice-in=EINVAL w=OK fsync=EINVAL "
	  "close=OK blob=new; sendfile-out=EINVAL splice-out=EINVAL; blob to image: "
	  "copy_file_range=0(OK) close=OK rejects=+0" },
	{ "write(2) whose buffer faults half-way", case_fault_half_way,
	  "write=EFAULT(-1) write(0 bytes)=0 fsync=EFAULT close=OK blob=old",
	  "write=OK(4096) write(0 bytes)=-1 fsync=EINVAL close=OK blob=other(8192 bytes)" },
	{ "writev(2) whose second iovec faults", case_writev_fault,
	  "writev=EFAULT(-1) fsync=EFAULT close=OK blob=old",
	  "writev=OK(100) fsync=EINVAL close=OK blob=other(200 bytes)" },
	{ "refusals of the VFS leave the upload as it was", case_vfs_refusals,
	  "w=OK writev(IOV_MAX+1)=EINVAL writev(bad array)=EFAULT write(kernel address)=EFAULT "
	  "w=OK fsync=OK close=OK blob=new",
	  "w=OK writev(IOV_MAX+1)=EINVAL writev(bad array)=EFAULT write(kernel address)=EFAULT "
	  "w=OK fsync=EINVAL close=OK blob=new" },
	{ "fsync(2) commits and reports, fdatasync(2) fails; nothing is committed twice",
	  case_fsync_reports,
	  "bad image: fsync=EBADMSG fdatasync=EINVAL close=OK rejects=+1; blob: w=OK "
	  "fsync=OK w=OK fdatasync=EINVAL commits=+1 close=OK commits=+2 blob=new; read-only "
	  "fsync=OK",
	  "bad image: fsync=EINVAL fdatasync=EINVAL close=OK rejects=+1; blob: w=OK "
	  "fsync=EINVAL w=OK fdatasync=EINVAL commits=+0 close=OK commits=+1 blob=new; "
	  "read-only fsync=EINVAL" },
	{ "a refused commit is final: bad image, fsync(2) twice, close(2)", case_refused_final,
	  "fsync=EBADMSG fsync=EBADMSG rejects=+1 close=OK rejects=+1",
	  "fsync=EINVAL fsync=EINVAL rejects=+0 close=OK rejects=+1" },
	{ "a write after a refused commit: the next commit hands over all of it",
	  case_refused_then_more,
	  "fsync=EBADMSG rejects=+1 w=OK fsync=EMSGSIZE rejects=+2 close=OK rejects=+2",
	  "fsync=EINVAL rejects=+0 w=OK fsync=EINVAL rejects=+0 close=OK rejects=+1" },
	{ "4 threads writing 4 KiB pieces through one descriptor", case_threads_share_fd,
	  "writes=OK fsync=OK size=1048576 whole-chunks=256 each-thread-in-order=yes",
	  "writes=OK fsync=EINVAL size=1048576 whole-chunks=256 each-thread-in-order=yes" },
	{ "pidfd_getfd(2) holder; the writer calls fsync(2) before close(2)",
	  pidfd_with_fsync, "fsync=EBADMSG close=OK holder's-close=OK rejects=+1",
	  "fsync=EINVAL close=OK holder's-close=OK rejects=+1" },
	{ "pidfd_getfd(2) holder; the writer only closes", pidfd_close_only,
	  "close=OK holder's-close=OK rejects=+1", "close=OK holder's-close=OK rejects=+1" },
	{ "a writer killed by SIGKILL after 3000 bytes", killed_by_sigkill,
	  "died=SIGKILL commits=+0 blob=old", "died=SIGKILL commits=+1 blob=new" },
	{ "a writer that calls abort(3) after 3000 bytes", killed_by_abort,
	  "died=SIGABRT commits=+0 blob=old", "died=SIGABRT commits=+1 blob=new" },
	{ "a writer that calls _exit(1) after 3000 bytes: an ordinary close", exits_with_1,
	  "died=exit(1) commits=+1 blob=new", "died=exit(1) commits=+1 blob=new" },
	{ "the parent writes; a child that only inherited the file is killed",
	  case_nonwriter_killed,
	  "w=OK child=SIGKILL commits=+0 fsync=OK commits=+1 close=OK commits=+1 blob=new",
	  "w=OK child=SIGKILL commits=+0 fsync=EINVAL commits=+0 close=OK commits=+1 blob=new" },
	{ "a child makes the last write and is killed; the parent holds the file",
	  case_last_writer_killed,
	  "w=OK child-w=OK child=SIGKILL fsync=ECANCELED w=ECANCELED close=OK commits=+0 "
	  "blob=old",
	  "w=OK child-w=OK child=SIGKILL fsync=EINVAL w=OK close=OK commits=+1 blob=new" },
	{ "a child writes, closes and is killed; the parent calls fsync(2) before and "
	  "after reaping it", case_closed_then_killed,
	  "child-w=OK child=SIGKILL fsync-before-reaping=OK fsync=OK close=OK commits=+1 "
	  "blob=new",
	  "child-w=OK child=SIGKILL fsync-before-reaping=EINVAL fsync=EINVAL close=OK "
	  "commits=+1 blob=new" },
	{ "a writer killed after fsync(2) committed, nothing written since",
	  killed_after_fsync,
	  "fsync=OK then-w=none child=SIGKILL commits=+1 blob=first-3000",
	  "fsync=EINVAL then-w=none child=SIGKILL commits=+1 blob=first-3000" },
	{ "a writer killed after fsync(2) committed and 2000 bytes more",
	  killed_after_fsync_and_more,
	  "fsync=OK then-w=OK child=SIGKILL commits=+1 blob=first-3000",
	  "fsync=EINVAL then-w=OK child=SIGKILL commits=+1 blob=all-5000" },
	{ "a thread makes the last write and exits alone with exit(2); the process is "
	  "then killed", case_thread_wrote_then_exited,
	  "thread-exited=yes commits=+0 then-process=SIGKILL commits=+0 blob=old",
	  "thread-exited=yes commits=+0 then-process=SIGKILL commits=+1 blob=new" },
	{ "a child makes the last write and aborts; the parent calls fsync(2) while the "
	  "child dumps core into a core_pattern pipe", case_fsync_during_core_dump,
	  "dumping=yes fsync=OK commits=+1 child=SIGABRT(core) close=OK commits=+1 blob=new",
	  "dumping=yes fsync=EINVAL commits=+0 child=SIGABRT(core) close=OK commits=+1 "
	  "blob=new" },
	{ "a child makes the last write and is killed while another process's write, "
	  "stalled mid-copy, holds the file; that write then completes",
	  killed_while_held_completes,
	  "child-w=OK child=SIGKILL stalled=yes holder-w=OK holder=exit(0) fsync=OK close=OK "
	  "commits=+1 blob=all-5000",
	  "child-w=OK child=SIGKILL stalled=yes holder-w=OK holder=exit(0) fsync=EINVAL "
	  "close=OK commits=+1 blob=all-5000" },
	{ "the same, but the stalled write, adding bytes past the end, is cut short by "
	  "its process's exit_group(0)", killed_while_held_cut_short,
	  "child-w=OK child=SIGKILL stalled=yes holder-w=none holder=exit(0) "
	  "fsync=ECANCELED close=OK commits=+0 blob=old",
	  "child-w=OK child=SIGKILL stalled=yes holder-w=none holder=exit(0) fsync=EINVAL "
	  "close=OK commits=+1 blob=other(5000 bytes)" },
	{ "a pwrite(2) waiting behind a stalled write is killed while it waits; the "
	  "stalled write then completes", case_waiter_killed,
	  "w=OK stalled=yes waiting=yes waiter=SIGKILL died-while-held=yes holder-w=OK "
	  "holder=exit(0) fsync=OK close=OK commits=+1 blob=all-5000",
	  "w=OK stalled=yes waiting=yes waiter=SIGKILL died-while-held=no holder-w=OK "
	  "holder=exit(0) fsync=EINVAL close=OK commits=+1 blob=other(5000 bytes)" },
	{ "a write adding bytes past the end stalls mid-copy on a userfaultfd page; "
	  "the writer's exit_group(0) cuts it short", stalled_extend_exit_group,
	  "stalled=yes died=exit(0) commits=+1 blob=first-3000",
	  "stalled=yes died=exit(0) commits=+1 blob=other(5000 bytes)" },
	{ "a write adding bytes past the end stalls mid-copy; another thread of the "
	  "writer execs, which cuts it short; the new program exits with 0",
	  stalled_extend_exec, "stalled=yes died=exit(0) commits=+1 blob=first-3000",
	  "stalled=yes died=exit(0) commits=+1 blob=other(5000 bytes)" },
	{ "a write adding bytes past the end stalls mid-copy; the writer is killed",
	  stalled_extend_sigkill, "stalled=yes died=SIGKILL commits=+0 blob=old",
	  "stalled=yes died=SIGKILL commits=+1 blob=other(5000 bytes)" },
	{ "a write over the blob's last 4096 bytes and past its end stalls after "
	  "overwriting them; the writer's exit_group(0) cuts it short",
	  stalled_overwrite_exit_group, "stalled=yes died=exit(0) commits=+0 blob=old",
	  "stalled=yes died=exit(0) commits=+1 blob=other(12288 bytes)" },
	{ "the same overwrite stalls; the writer, a child sharing the parent's open file, "
	  "is killed; the parent calls fsync(2) and writes", stalled_overwrite_sigkill_held,
	  "stalled=yes died=SIGKILL fsync=ECANCELED w=ECANCELED close=OK commits=+0 blob=old",
	  "stalled=yes died=SIGKILL fsync=EINVAL w=OK close=OK commits=+1 "
	  "blob=other(12288 bytes)" },
	{ "rmdir(2) with the upload open", case_rmdir_open,
	  "w=OK rmdir=OK fsync=ENOENT close=OK",
	  "w=OK rmdir=OK fsync=EINVAL close=OK" },
};

static const struct tcase memcg_cases[] = {
	{ "memory.max 8M: a child in the cgroup uploads 16 MiB in writes of 1 MiB",
	  case_memcg_upload,
	  "moved=yes report=yes writes=ENOMEM again=ENOMEM fsync=ENOMEM child=exit(0) close=OK "
	  "commits=+0 blob=old",
	  "moved=yes report=yes writes=OK fsync=EINVAL child=exit(0) close=OK commits=+1 "
	  "blob=new" },
	{ "memory.max 8M: 32 readers of a 1 MiB blob in the cgroup, then 32 outside",
	  case_memcg_readers,
	  "moved=yes report=yes some-ENOMEM=yes other-errors=0 wrong-bytes=0 current<=max=yes "
	  "peak<=max=yes; outside: 32/32 read",
	  "moved=yes report=yes some-ENOMEM=no other-errors=0 wrong-bytes=0 current<=max=yes "
	  "peak<=max=yes; outside: 32/32 read" },
};

static void run_table(const struct tcase *t, size_t n)
{
	const char *who = pristine ? "6.12" : "ours";
	size_t i;

	for (i = 0; i < n; i++) {
		const char *want = pristine ? t[i].v612 : t[i].ours;
		const char *got = t[i].run();

		tap_result(!strcmp(got, want), "%s: %s: %s", who, t[i].what, got);
		if (strcmp(got, want))
			printf("# want: %s\n", want);
	}
}

/* The memory cgroup cases, on the sample reloaded for 16 MiB blobs. */
static void run_memcg(void)
{
	const char *who = pristine ? "6.12" : "ours";
	const char *why;

	if (reload_sample("33554432")) {
		tap_result(0, "%s: reload " SAMPLE " with max_blob=33554432", who);
		return;
	}
	why = cg_setup();
	if (why) {
		printf("ok %d - %s: memory cgroup cases # SKIP %s\n", ++tap_n, who, why);
		cg_teardown();
		return;
	}
	run_table(memcg_cases, sizeof(memcg_cases) / sizeof(memcg_cases[0]));
	cg_teardown();
	tap_result(access(CGX, F_OK) && errno == ENOENT, "%s: the cgroup is removed", who);
}

static void run_cases(void)
{
	const char *who = pristine ? "6.12" : "ours";
	int write_failed, commit_failed;
	long bad;

	run_table(cases, sizeof(cases) / sizeof(cases[0]));
	{
		const char *got = case_readers_race_commits(pristine ? 600 : 2000);
		long torn = 0;

		sscanf(strstr(got, "commits: ") + 9, "%ld", &torn);
		if (pristine)
			printf("ok %d - 6.12: readers racing commits: %s # informational\n",
			       ++tap_n, got);
		else
			tap_result(!torn, "ours: readers racing commits: %s", got);
	}
	{
		/* one allocation fails: the fallbacks absorb most */
		const char *got = case_fail_nth_sweep(0, &bad, &write_failed, &commit_failed);

		if (pristine)
			printf("ok %d - 6.12: fail-nth sweep: %s # informational\n", ++tap_n, got);
		else
			tap_result(!bad && strstr(got, "faults injected"),
				   "%s: fail-nth sweep: %s", who, got);
	}
	{
		/* from the Nth on, every allocation fails: writes and commits fail */
		const char *got = case_fail_nth_sweep(1, &bad, &write_failed, &commit_failed);

		if (pristine)
			printf("ok %d - 6.12: fail-nth sweep, failing from the Nth on: %s "
			       "# informational\n", ++tap_n, got);
		else
			tap_result(!bad && write_failed && commit_failed &&
				   strstr(got, "faults injected"),
				   "%s: fail-nth sweep, failing from the Nth on: %s", who, got);
	}
	run_memcg();
}

/* Load the sample on the configfs module at @configfs (NULL: ours, by modprobe). */
static int setup(const char *configfs)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd),
		 "%s && { mountpoint -q /sys/kernel/config || "
		 "mount -t configfs none /sys/kernel/config; } && "
		 "insmod /lib/modules/$(uname -r)/extra/" SAMPLE ".ko max_blob=4194304",
		 configfs ? configfs : "modprobe configfs");
	if (system(cmd) || mkdir(ITEM, 0755))
		return -1;
	return reset_blob();
}

/* A mount namespace another test is making copies the configfs mount for
 * a moment: its module may stay busy that long after the umount.
 */
#define RMMOD_RETRY(m) "for i in $(seq 25); do rmmod " m " 2>/dev/null && exit 0; " \
		       "sleep 0.2; done; rmmod " m

static int teardown(void)
{
	return rmdir(ITEM) || system("rmmod " SAMPLE " && umount /sys/kernel/config && "
				     RMMOD_RETRY("configfs_pristine"));
}

int main(int argc, char **argv)
{
	int fd, busy;
	size_t i;

	if (argc == 2 && !strcmp(argv[1], "--exit"))
		return 0;
	if (argc == 3 && !strcmp(argv[1], "--core-helper"))
		return core_helper(argv[2]);
	/* a helper child that died early must not take the test down */
	signal(SIGPIPE, SIG_IGN);
	/* a run cut short may have left the core-dump case's pattern */
	{
		char pat[256] = "";
		int pf = open("/proc/sys/kernel/core_pattern", O_RDONLY);

		if (pf >= 0) {
			if (read(pf, pat, sizeof(pat) - 1) < 0)
				pat[0] = 0;
			close(pf);
		}
		if (strstr(pat, "--core-helper"))
			write_str("/proc/sys/kernel/core_pattern", "core");
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	data = malloc(1 << 20);
	blob_fill(data, 1 << 20, 11);
	for (i = 0; i < sizeof(base); i++)
		base[i] = 0xb0 ^ (unsigned char)i;
	/* touched here, so that no child charges its pages to a cgroup */
	big = malloc(BIG);
	for (i = 0; i < BIG / MIB; i++)
		memcpy(big + i * MIB, data, MIB);

	if (setup(NULL)) {
		tap_result(0, "load configfs and " SAMPLE);
		return tap_done();
	}
	run_cases();

	/* The module cannot go while a file of its attributes is open. */
	fd = open(BLOB, O_RDONLY);
	tap_is_long(rmdir(ITEM), 0, "ours: rmdir of the item with its blob open");
	busy = system("rmmod " SAMPLE " 2>/dev/null");
	tap_result(busy != 0, "ours: rmmod " SAMPLE " with the file open fails");
	tap_is_long(close(fd), 0, "ours: close of the reader returns 0");
	tap_is_long(system("rmmod " SAMPLE " && umount /sys/kernel/config && "
			   RMMOD_RETRY("configfs")),
		    0, "ours: then the sample and configfs unload");

	pristine = 1;
	if (setup("insmod /bench/pristine/configfs_pristine.ko")) {
		tap_result(0, "load 6.12's configfs and " SAMPLE);
		return tap_done();
	}
	run_cases();
	tap_is_long(teardown(), 0, "6.12's configfs unloads");
	tap_is_long(system("modprobe configfs"), 0, "ours is back");
	free(big);
	free(data);
	return tap_done();
}
