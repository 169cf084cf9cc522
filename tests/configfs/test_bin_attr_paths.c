// SPDX-License-Identifier: GPL-2.0
// bench-ldlibs: -luring -lpthread
/*
 * Every way a process reaches a configfs binary attribute, against the
 * contract in Documentation/filesystems/configfs.rst ("Reading and writing
 * a binary attribute"): AIO and io_uring with and without offsets, pwrite,
 * pwritev2 flags, O_APPEND/O_TRUNC/O_SYNC, ftruncate, mmap, splice,
 * sendfile and copy_file_range, faults half-way through a write, VFS-level
 * refusals, fsync as the commit that always reports, threads sharing a
 * descriptor, pidfd_getfd, readers racing commits, rmdir, fail-nth on every
 * allocation of the write and commit paths, and module unload.
 *
 * Each case prints one outcome line. The same cases then run against 6.12's
 * configfs (configfs_pristine.ko): each outcome is asserted against what
 * 6.12 does, so the README's list of where 6.12 differs is checked too.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <liburing.h>
#include <linux/aio_abi.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
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
	return err ? strerrorname_np(err) : "OK";
}

/* errno name of a syscall result: "OK" for >= 0 */
#define R(x) ((x) < 0 ? en(errno) : "OK")

static long counter(const char *name)
{
	return blob_counter(ITEM, name);
}

/* "old" (the base blob), "new" (@want), or "other" with its size */
static const char *stored(const void *want, size_t len)
{
	static char out[64];
	unsigned char *got = NULL;
	long n = blob_slurp(BLOB, &got);

	if (n == (long)len && !memcmp(got, want, len))
		strcpy(out, "new");
	else if (n == sizeof(base) && !memcmp(got, base, sizeof(base)))
		strcpy(out, "old");
	else
		snprintf(out, sizeof(out), "other(%ld bytes)", n);
	free(got);
	return out;
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

/* ---- AIO ---- */

static long aio_run(int fd, struct iocb *cbs, int n, long *res)
{
	aio_context_t ctx = 0;
	struct iocb *ptrs[8];
	struct io_event ev[8];
	long r;
	int i;

	if (syscall(SYS_io_setup, 8, &ctx))
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

static void aio_write_cb(struct iocb *cb, const void *buf, size_t len, long long off)
{
	memset(cb, 0, sizeof(*cb));
	cb->aio_lio_opcode = IOCB_CMD_PWRITE;
	cb->aio_buf = (unsigned long)buf;
	cb->aio_nbytes = len;
	cb->aio_offset = off;
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
	long res[2], fres[1], sub;
	int fd, c;

	reset_blob();
	fd = open(BLOB, O_WRONLY);
	aio_write_cb(&cb[0], data, 3000, 0);
	aio_write_cb(&cb[1], data + 3000, 3000, 3000);
	aio_run(fd, cb, 2, res);
	memset(cb, 0, sizeof(cb[0]));
	cb[0].aio_lio_opcode = IOCB_CMD_FSYNC;
	sub = aio_run(fd, cb, 1, fres);
	c = close(fd) ? errno : 0;
	OUT("w@0=%s w@3000=%s aio-fsync=%s close=%s blob=%s", resname(res[0]),
	    resname(res[1]), sub < 0 ? resname(sub) : resname(fres[0]), en(c),
	    stored(data, 6000));
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
	struct io_uring ring;
	int fd, w1, w2, w3, s, c;

	if (io_uring_queue_init(4, &ring, 0))
		return "io_uring_queue_init failed";
	reset_blob();
	fd = open(BLOB, O_WRONLY);
	w1 = uring_rw(&ring, IORING_OP_WRITE, fd, data, 4000, 0);
	w2 = uring_rw(&ring, IORING_OP_WRITE, fd, data + 4000, 4000, 4000);
	/* the end is 8000: 100 is behind it */
	w3 = uring_rw(&ring, IORING_OP_WRITE, fd, data, 100, 100);
	s = uring_rw(&ring, IORING_OP_FSYNC, fd, NULL, 0, 0);
	c = fsync(fd) ? errno : 0;
	close(fd);
	io_uring_queue_exit(&ring);
	OUT("w@0=%s w@4000=%s w@100=%s uring-fsync=%s fsync=%s blob=%s", resname(w1),
	    resname(w2), resname(w3), resname(s), en(c), stored_after_release(data, 8000));
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

/* pwrite(2) does not move the file position: write(2) is aimed behind. */
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
	    en(c), stored(data, 600));
	return outcome;
}

static const char *case_pwrite_gap(void)
{
	int fd, a, b, s, c;

	reset_blob();
	fd = open(BLOB, O_WRONLY);
	a = pwrite(fd, data, 100, 4096) < 0 ? errno : 0;
	b = write(fd, data, 100) < 0 ? errno : 0;
	s = fsync(fd) ? errno : 0;
	c = close(fd) ? errno : 0;
	OUT("p@4096=%s then-write=%s fsync=%s close=%s blob=%s", en(a), en(b), en(s), en(c),
	    stored(data, 100));
	return outcome;
}

static const char *case_pwrite_behind(void)
{
	int fd, a, b, s, c;

	reset_blob();
	fd = open(BLOB, O_WRONLY);
	a = write(fd, data, 200) < 0 ? errno : 0;
	b = pwrite(fd, data + 500, 100, 0) < 0 ? errno : 0;
	s = fsync(fd) ? errno : 0;
	c = close(fd) ? errno : 0;
	OUT("w=%s p@0=%s fsync=%s close=%s blob=%s", en(a), en(b), en(s), en(c),
	    stored(data, 200));
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
 * it while the writer closes: the writer's close(2) cannot report, fsync(2)
 * can, and the holder's close(2), now the last, reports too.
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

/* A writer killed mid-upload: its exit closes the file, which commits. */
static const char *case_killed_writer(void)
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
		int fd = open(BLOB, O_WRONLY);

		write(fd, data, 5000);
		write(p[1], "x", 1);
		pause();
		_exit(0);
	}
	read(p[0], &b, 1);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	close(p[0]);
	close(p[1]);
	OUT("killed=%s commits=+%ld blob=%s", WIFSIGNALED(st) ? "yes" : "no",
	    counter("commits") - commits0, stored(data, 5000));
	return outcome;
}

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
	long rounds = 0, torn = 0, i;

	blob_upload(BLOB, data, RACE_SMALL, RACE_SMALL);
	race_stop = 0;
	pthread_create(&w, NULL, race_writer, &rounds);
	for (i = 0; i < reads; i++) {
		unsigned char *got = NULL;
		long n = blob_slurp(BLOB, &got);

		if (!((n == RACE_SMALL && !memcmp(got, data, n)) ||
		      (n == RACE_BIG && !memcmp(got, data + 1, n))))
			torn++;
		free(got);
	}
	race_stop = 1;
	pthread_join(w, NULL);
	OUT("%ld reads racing %ld pairs of commits: %ld neither the old blob nor the new",
	    (long)reads, rounds, torn);
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

static int write_str(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY), r;

	r = fd >= 0 && write(fd, val, strlen(val)) == (ssize_t)strlen(val);
	if (fd >= 0)
		close(fd);
	return r ? 0 : -1;
}

/*
 * Fail the Nth allocation of an upload of 80000 bytes in two writes and its
 * commit, for N = 1, 2, ... until an upload runs without a failure. Every
 * run must end as a clean success (the new blob stored) or a reported
 * failure (the old blob stored); ours commits with fsync(2), 6.12 with
 * close(2), the only call that commits there.
 */
static const char *case_fail_nth_sweep(long *bad)
{
	int nth, n, failed = 0, clean_ok = 0;
	char num[16], rest[16];

	*bad = 0;
	if (write_str("/sys/kernel/debug/failslab/ignore-gfp-wait", "N") ||
	    write_str("/sys/kernel/debug/fail_page_alloc/ignore-gfp-wait", "N") ||
	    write_str("/sys/kernel/debug/fail_page_alloc/min-order", "0") ||
	    write_str("/sys/kernel/debug/failslab/verbose", "0") ||
	    write_str("/sys/kernel/debug/fail_page_alloc/verbose", "0"))
		return "no failslab/fail_page_alloc in debugfs";
	nth = open("/proc/thread-self/fail-nth", O_RDWR);
	if (nth < 0)
		return "no /proc/thread-self/fail-nth";
	for (n = 1; n < 2000; n++) {
		int fd, e = 0, s = 0, c, injected, good;
		const char *st;

		reset_blob();
		fd = open(BLOB, O_WRONLY);
		snprintf(num, sizeof(num), "%d", n);
		write(nth, num, strlen(num));
		if (write(fd, data, 40000) != 40000)
			e = errno;
		if (!e && write(fd, data + 40000, 40000) != 40000)
			e = errno;
		if (!e && !pristine && fsync(fd))
			s = errno;
		c = -1;
		if (pristine) {
			c = close(fd) ? errno : 0;
			e = e ? e : c;
		}
		memset(rest, 0, sizeof(rest));
		pread(nth, rest, sizeof(rest) - 1, 0);
		write(nth, "0", 1);
		injected = atoi(rest) == 0;
		if (c < 0)
			c = close(fd) ? errno : 0;
		st = stored(data, 80000);
		/*
		 * The last call to report decides. A failed write abandons the
		 * upload: close(2) repeats its error and the old blob stays. An
		 * fsync(2) that could not map the blob (ENOMEM) leaves it due,
		 * and close(2) commits it; any other fsync(2) error is final.
		 */
		if (e)
			good = !strcmp(st, "old") && c == e;
		else if (s && !(s == ENOMEM && !c))
			good = !strcmp(st, "old") && c == s;
		else
			good = !strcmp(st, "new") && !c;
		if (!good && ++*bad <= 5)
			printf("# fail-nth %d: write %s, fsync %s, close %s, stored %s\n", n,
			       en(e), en(s), en(c), st);
		if (good && (e || c))
			failed++;
		else if (good)
			clean_ok++;
		if (!injected)
			break;
	}
	close(nth);
	OUT("%d faults injected: %d reported and kept the old blob, %d uploads still "
	    "succeeded whole, %ld lost a failure or committed a wrong blob", n - 1, failed,
	    clean_ok - 1, *bad);
	return outcome;
}

/* ---- the run ---- */

struct tcase {
	const char *what;
	const char *(*run)(void);
	const char *ours;	/* the contract */
	const char *v612;	/* 6.12's configfs, as measured */
};

static const char *pidfd_with_fsync(void) { return case_pidfd_getfd(1); }
static const char *pidfd_close_only(void) { return case_pidfd_getfd(0); }

static const struct tcase cases[] = {
	{ "AIO writes at offsets 3000 then 0, in one io_submit", case_aio_out_of_order,
	  "w@3000=ESPIPE w@0=ESPIPE fsync=ESPIPE close=ESPIPE blob=old", 
	  "w@3000=OK w@0=OK fsync=EINVAL close=OK blob=new" },
	{ "AIO writes at 0 then 3000, then IOCB_CMD_FSYNC", case_aio_in_order,
	  "w@0=OK w@3000=OK aio-fsync=OK close=OK blob=new", 
	  "w@0=OK w@3000=OK aio-fsync=EINVAL close=OK blob=new" },
	{ "io_uring writes at the current position, IORING_OP_FSYNC",
	  case_uring_current_position, "w=OK w=OK uring-fsync=OK fsync=OK blob=new",
	  "w=OK w=OK uring-fsync=EINVAL fsync=EINVAL blob=new" },
	{ "io_uring writes at 0, at the end, then behind the end", case_uring_offsets,
	  "w@0=OK w@4000=OK w@100=ESPIPE uring-fsync=ESPIPE fsync=ESPIPE blob=old",
	  "w@0=OK w@4000=OK w@100=OK uring-fsync=EINVAL fsync=EINVAL blob=other(8000 bytes)" },
	{ "io_uring read at offset 7", case_uring_read, "read@7=100 bytes=right", 
	  "read@7=100 bytes=right" },
	{ "pwrite(2) at 0, then at the end", case_pwrite_at_end,
	  "p@0=OK p@2000=OK fsync=OK close=OK blob=new", 
	  "p@0=OK p@2000=OK fsync=EINVAL close=OK blob=new" },
	{ "pwrite(2) past the end", case_pwrite_gap,
	  "p@4096=ESPIPE then-write=ESPIPE fsync=ESPIPE close=ESPIPE blob=old", 
	  "p@4096=OK then-write=OK fsync=EINVAL close=OK blob=other(4196 bytes)" },
	{ "pwrite(2) behind the end", case_pwrite_behind,
	  "w=OK p@0=ESPIPE fsync=ESPIPE close=ESPIPE blob=old", 
	  "w=OK p@0=OK fsync=EINVAL close=OK blob=other(200 bytes)" },
	{ "pwritev2(2): offset -1, RWF_DSYNC, RWF_NOWAIT, RWF_APPEND aimed at 12345",
	  case_pwritev2_flags,
	  "cur=OK dsync=OK commits-before-fsync=0 nowait=EOPNOTSUPP append@12345=OK fsync=OK "
	  "close=OK blob=new",
	  "cur=OK dsync=OK commits-before-fsync=0 nowait=EOPNOTSUPP append@12345=OK "
	  "fsync=EINVAL close=OK blob=other(13345 bytes)" },
	{ "pwrite(2) at 0, then write(2) at the file position, still 0", case_pwrite_then_write,
	  "p@0=OK write(at position 0)=ESPIPE fsync=ESPIPE close=ESPIPE blob=old",
	  "p@0=OK write(at position 0)=OK fsync=EINVAL close=OK blob=other(300 bytes)" },
	{ "O_APPEND: write(2), then pwrite(2) aimed at 99", case_o_append,
	  "w=OK p@99=OK fsync=OK close=OK blob=new", 
	  "w=OK p@99=OK fsync=EINVAL close=OK blob=other(700 bytes)" },
	{ "O_SYNC writes commit nothing by themselves", case_o_sync,
	  "w=OK w=OK commits-before-fsync=0 fsync=OK close=OK blob=new", 
	  "w=OK w=OK commits-before-fsync=0 fsync=EINVAL close=OK blob=new" },
	{ "O_TRUNC and ftruncate(2)", case_truncate,
	  "open(O_TRUNC)=OK close=OK blob=old; ftruncate=OK w=OK ftruncate(10)=OK stat-size=10 "
	  "fsync=OK blob=new",
	  "open(O_TRUNC)=OK close=OK blob=old; ftruncate=OK w=OK ftruncate(10)=OK stat-size=10 "
	  "fsync=EINVAL blob=new" },
	{ "pread(2), read(2), preadv(2) of one version; lseek(2)", case_positional_reads,
	  "pread@100=right read=right pread@0=right preadv@50=right lseek=ESPIPE", 
	  "pread@100=right read=right pread@0=right preadv@50=right lseek=ESPIPE" },
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
	  "write=EFAULT(-1) write(0 bytes)=0 fsync=EFAULT close=EFAULT blob=old", 
	  "write=OK(4096) write(0 bytes)=-1 fsync=EINVAL close=OK blob=other(8192 bytes)" },
	{ "writev(2) whose second iovec faults", case_writev_fault,
	  "writev=EFAULT(-1) fsync=EFAULT close=EFAULT blob=old", 
	  "writev=OK(100) fsync=EINVAL close=OK blob=other(200 bytes)" },
	{ "refusals of the VFS leave the upload as it was", case_vfs_refusals,
	  "w=OK writev(IOV_MAX+1)=EINVAL writev(bad array)=EFAULT write(kernel address)=EFAULT "
	  "w=OK fsync=OK close=OK blob=new", 
	  "w=OK writev(IOV_MAX+1)=EINVAL writev(bad array)=EFAULT write(kernel address)=EFAULT w=OK fsync=EINVAL close=OK blob=new" },
	{ "fsync(2)/fdatasync(2) commit and report; nothing is committed twice",
	  case_fsync_reports,
	  "bad image: fsync=EBADMSG fdatasync=EBADMSG close=EBADMSG rejects=+1; blob: w=OK "
	  "fsync=OK w=OK fdatasync=OK commits=+2 close=OK commits=+2 blob=new; read-only "
	  "fsync=OK",
	  "bad image: fsync=EINVAL fdatasync=EINVAL close=OK rejects=+1; blob: w=OK "
	  "fsync=EINVAL w=OK fdatasync=EINVAL commits=+0 close=OK commits=+1 blob=new; "
	  "read-only fsync=EINVAL" },
	{ "4 threads writing 4 KiB pieces through one descriptor", case_threads_share_fd,
	  "writes=OK fsync=OK size=1048576 whole-chunks=256 each-thread-in-order=yes", 
	  "writes=OK fsync=EINVAL size=1048576 whole-chunks=256 each-thread-in-order=yes" },
	{ "pidfd_getfd(2) holder; the writer calls fsync(2) before close(2)",
	  pidfd_with_fsync, "fsync=EBADMSG close=OK holder's-close=EBADMSG rejects=+1", 
	  "fsync=EINVAL close=OK holder's-close=OK rejects=+1" },
	{ "pidfd_getfd(2) holder; the writer only closes", pidfd_close_only,
	  "close=OK holder's-close=EBADMSG rejects=+1", 
	  "close=OK holder's-close=OK rejects=+1" },
	{ "a writer killed by SIGKILL after 5000 bytes: its exit closes and commits",
	  case_killed_writer, "killed=yes commits=+1 blob=new", "killed=yes commits=+1 blob=new" },
	{ "rmdir(2) with the upload open", case_rmdir_open,
	  "w=OK rmdir=OK fsync=ENOENT close=ENOENT", 
	  "w=OK rmdir=OK fsync=EINVAL close=OK" },};

static void run_cases(void)
{
	const char *who = pristine ? "6.12" : "ours";
	long bad;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *want = pristine ? cases[i].v612 : cases[i].ours;
		const char *got = cases[i].run();

		tap_result(!strcmp(got, want), "%s: %s: %s", who, cases[i].what, got);
		if (strcmp(got, want))
			printf("# want: %s\n", want);
	}
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
		const char *got = case_fail_nth_sweep(&bad);

		if (pristine)
			printf("ok %d - 6.12: fail-nth sweep: %s # informational\n", ++tap_n, got);
		else
			tap_result(!bad && strstr(got, "faults injected"), "ours: fail-nth sweep: %s",
				   got);
	}
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

int main(void)
{
	int fd, busy;
	size_t i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	data = malloc(1 << 20);
	blob_fill(data, 1 << 20, 11);
	for (i = 0; i < sizeof(base); i++)
		base[i] = 0xb0 ^ (unsigned char)i;

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
	free(data);
	return tap_done();
}
