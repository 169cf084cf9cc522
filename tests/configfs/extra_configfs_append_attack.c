// SPDX-License-Identifier: GPL-2.0
// bench-ldlibs: -luring -lpthread
/*
 * Adversarial cases for O_APPEND / RWF_APPEND on a configfs binary
 * attribute, and for samples/configfs' blob attribute (01-childless/blob,
 * max 64 KiB, blob_commits counter), written by a tester told to break
 * the contract: appends through write, pwrite, pwritev2, io_uring and AIO,
 * after a hole, at the maximum, after a failed write, from two threads on
 * one descriptor, and readers racing commits (whole blobs or EAGAIN).
 *
 * Run with TESTS=extra_configfs_append_attack (extra_* tests are not run
 * by default).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <linux/aio_abi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "blob.h"
#include "tap.h"

#define DIR_ "/sys/kernel/config/01-childless"
#define BLOB DIR_ "/blob"
#define COMMITS DIR_ "/blob_commits"
#define MAX (64 * 1024)

static const char *en(int e)
{
	const char *n = e > 0 ? strerrorname_np(e) : NULL;

	return !e ? "OK" : n ? n : "?";
}

static long commits(void)
{
	return read_long(COMMITS);
}

/* expect blob == want[0..n) */
static void blob_is(const void *want, long n, const char *desc)
{
	unsigned char *got = NULL;
	long len = blob_slurp(BLOB, &got);
	int ok = len == n && (n == 0 || !memcmp(got, want, n));

	tap_result(ok, "%s", desc);
	if (!ok) {
		printf("# blob len %ld (want %ld)", len, n);
		if (len > 0) {
			printf(" first bytes:");
			for (long i = 0; i < len && i < 24; i++)
				printf(" %02x", got[i]);
		}
		printf("\n");
	}
	free(got);
}

/* commit @s with a plain write + fsync */
static int set_blob(const void *p, size_t n)
{
	struct upload u = blob_commit(BLOB, p, n, n ? n : 1);

	return u.open_err || u.write_err || u.fsync_err ? -1 : 0;
}

#define IS_ERR_(call, want, desc) do {						\
	errno = 0;								\
	long r_ = (call);							\
	int e_ = r_ < 0 ? errno : 0;						\
	tap_result(e_ == (want), "%s: %s (want %s)", desc, en(e_), en(want));	\
} while (0)

static ssize_t pw2(int fd, const void *p, size_t n, off_t off, int flags)
{
	struct iovec iov = { (void *)p, n };

	return pwritev2(fd, &iov, 1, off, flags);
}

/* ---- case 1: O_APPEND with write/pwrite, file position ---- */
static void case_oappend(void)
{
	long c0 = commits();
	int fd = open(BLOB, O_WRONLY | O_APPEND);

	tap_is_long(write(fd, "AAAA", 4), 4, "O_APPEND write(2) 4");
	tap_is_long(pwrite(fd, "BB", 2, 50), 2, "O_APPEND pwrite at 50 returns 2");
	tap_is_long(pwrite(fd, "CC", 2, 0), 2, "O_APPEND pwrite at 0 returns 2");
	tap_is_long(pwrite(fd, "DD", 2, 65000), 2, "O_APPEND pwrite at 65000 returns 2");
	/* f_pos is 4 (after write(2)); pwrite leaves it */
	fcntl(fd, F_SETFL, 0);
	tap_is_long(write(fd, "X", 1), 1, "write(2) after clearing O_APPEND");
	tap_is_long(fsync(fd), 0, "fsync after appends returns 0");
	tap_is_long(commits() - c0, 1, "one commit from fsync");
	blob_is("AAAAXBCCDD", 10, "O_APPEND pwrites appended, f_pos after write(2) only");
	close(fd);
	tap_is_long(commits() - c0, 1, "release after fsync commits nothing");
}

/* ---- case 2: append after a hole ---- */
static void case_hole(void)
{
	unsigned char want[1002] = { 0 };
	long c0 = commits();
	int fd = open(BLOB, O_WRONLY);

	want[1000] = 'H';
	want[1001] = 'T';
	tap_is_long(pwrite(fd, "H", 1, 1000), 1, "pwrite at 1000 (hole)");
	fcntl(fd, F_SETFL, O_APPEND);
	tap_is_long(write(fd, "T", 1), 1, "O_APPEND (fcntl) write after hole");
	close(fd);
	tap_is_long(commits() - c0, 1, "release commits once");
	blob_is(want, 1002, "append after hole lands at 1001, hole is zero");

	/* RWF_APPEND after a hole written with a higher offset first then lower */
	c0 = commits();
	fd = open(BLOB, O_WRONLY);
	tap_is_long(pwrite(fd, "zz", 2, 300), 2, "pwrite zz at 300");
	tap_is_long(pwrite(fd, "aa", 2, 0), 2, "pwrite aa at 0");
	tap_is_long(pw2(fd, "E", 1, 1, RWF_APPEND), 1, "RWF_APPEND after high then low write");
	tap_is_long(fsync(fd), 0, "fsync 0");
	close(fd);
	{
		unsigned char w[303] = { 0 };

		w[0] = w[1] = 'a';
		w[300] = w[301] = 'z';
		w[302] = 'E';
		blob_is(w, 303, "RWF_APPEND goes to furthest byte (302), not after last write");
	}
	tap_is_long(commits() - c0, 1, "one commit");
}

/* ---- case 3: pwritev2 RWF_APPEND / RWF_NOAPPEND, offset -1 ---- */
static void case_rwf(void)
{
	long c0 = commits();
	int fd = open(BLOB, O_WRONLY);

	tap_is_long(pwrite(fd, "abc", 3, 0), 3, "pwrite abc at 0");
	tap_is_long(pw2(fd, "de", 2, 10, RWF_APPEND), 2, "pwritev2 RWF_APPEND at 10");
	tap_is_long(pw2(fd, "fg", 2, -1, RWF_APPEND), 2, "pwritev2 RWF_APPEND at -1 (f_pos)");
	/* f_pos now 7 (moved past the appended bytes) */
	tap_is_long(write(fd, "h", 1), 1, "write(2) continues at f_pos");
	IS_ERR_(pw2(fd, "q", 1, -5, RWF_APPEND), EINVAL, "RWF_APPEND at offset -5");
	tap_is_long(fsync(fd), 0, "fsync 0 after EINVAL (upload untouched)");
	close(fd);
	blob_is("abcdefgh", 8, "RWF_APPEND blob");
	tap_is_long(commits() - c0, 1, "one commit");

	c0 = commits();
	fd = open(BLOB, O_WRONLY | O_APPEND);
	tap_is_long(write(fd, "0123", 4), 4, "O_APPEND write");
	tap_is_long(pw2(fd, "Z", 1, 1, RWF_NOAPPEND), 1, "RWF_NOAPPEND at 1 on O_APPEND fd");
	tap_is_long(pw2(fd, "Y", 1, 0, 0), 1, "plain pwritev2 on O_APPEND fd appends");
	close(fd);
	blob_is("0Z23Y", 5, "RWF_NOAPPEND writes in place");
	tap_is_long(commits() - c0, 1, "one commit");
}

/* ---- case 4: io_uring and AIO with RWF_APPEND ---- */
static long uring_write(struct io_uring *ring, int fd, const void *p, unsigned n,
			long long off, int flags)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct io_uring_cqe *cqe;
	long r;

	io_uring_prep_write(sqe, fd, p, n, off);
	sqe->rw_flags = flags;
	if (io_uring_submit(ring) != 1 || io_uring_wait_cqe(ring, &cqe))
		return -9999;
	r = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return r;
}

static long aio_write1(int fd, const void *p, unsigned n, long long off, int flags)
{
	aio_context_t ctx = 0;
	struct iocb cb = { 0 }, *cbp = &cb;
	struct io_event ev;
	long r;

	if (syscall(SYS_io_setup, 4, &ctx))
		return -9999;
	cb.aio_fildes = fd;
	cb.aio_lio_opcode = IOCB_CMD_PWRITE;
	cb.aio_buf = (unsigned long)p;
	cb.aio_nbytes = n;
	cb.aio_offset = off;
	cb.aio_rw_flags = flags;
	if (syscall(SYS_io_submit, ctx, 1, &cbp) != 1)
		r = -errno;
	else if (syscall(SYS_io_getevents, ctx, 1, 1, &ev, NULL) != 1)
		r = -9998;
	else
		r = ev.res;
	syscall(SYS_io_destroy, ctx);
	return r;
}

static void case_async(void)
{
	struct io_uring ring;
	long c0 = commits();
	int fd;

	if (io_uring_queue_init(8, &ring, 0)) {
		tap_result(0, "io_uring_queue_init");
		return;
	}
	fd = open(BLOB, O_WRONLY);
	tap_is_long(pwrite(fd, "0123", 4, 0), 4, "base pwrite");
	tap_is_long(uring_write(&ring, fd, "uu", 2, 0, RWF_APPEND), 2, "io_uring write RWF_APPEND at 0");
	tap_is_long(uring_write(&ring, fd, "vv", 2, 1, 0), 2, "io_uring write no flag at 1");
	tap_is_long(aio_write1(fd, "ww", 2, 0, RWF_APPEND), 2, "AIO RWF_APPEND at 0");
	tap_is_long(aio_write1(fd, "x", 1, 2, 0), 1, "AIO no flag at 2");
	tap_is_long(fsync(fd), 0, "fsync 0");
	close(fd);
	blob_is("0vx3uuww", 8, "io_uring/AIO append blob");
	tap_is_long(commits() - c0, 1, "one commit");

	/* O_APPEND fd via io_uring and AIO, offset ignored */
	c0 = commits();
	fd = open(BLOB, O_WRONLY | O_APPEND);
	tap_is_long(uring_write(&ring, fd, "AB", 2, 40000, 0), 2, "io_uring on O_APPEND fd at 40000");
	tap_is_long(aio_write1(fd, "CD", 2, 60000, 0), 2, "AIO on O_APPEND fd at 60000");
	tap_is_long(uring_write(&ring, fd, "EF", 2, -1, 0), 2, "io_uring on O_APPEND fd at -1");
	close(fd);
	blob_is("ABCDEF", 6, "O_APPEND io_uring/AIO blob");
	tap_is_long(commits() - c0, 1, "one commit");

	/* at max via io_uring: EFBIG, abandoned */
	{
		unsigned char *big = malloc(MAX);

		blob_fill(big, MAX, 3);
		set_blob("keep", 4);
		c0 = commits();
		fd = open(BLOB, O_WRONLY);
		tap_is_long(pwrite(fd, big, MAX, 0), MAX, "fill to 64 KiB");
		tap_is_long(uring_write(&ring, fd, "!", 1, 0, RWF_APPEND), -EFBIG,
			    "io_uring RWF_APPEND at max: -EFBIG");
		tap_is_long(aio_write1(fd, "a", 1, 0, 0), -EFBIG, "AIO write after abandon: -EFBIG");
		IS_ERR_(fsync(fd), EFBIG, "fsync after io_uring EFBIG");
		close(fd);
		tap_is_long(commits() - c0, 0, "abandoned upload commits nothing");
		blob_is("keep", 4, "blob unchanged after abandon");
		free(big);
	}
	io_uring_queue_exit(&ring);
}

/* ---- case 5: append at exactly 64 KiB ---- */
static void case_max(void)
{
	unsigned char *big = malloc(MAX);
	long c0;
	int fd;

	blob_fill(big, MAX, 7);
	/* exact fill by appending last byte */
	c0 = commits();
	fd = open(BLOB, O_WRONLY | O_APPEND);
	tap_is_long(write(fd, big, MAX - 1), MAX - 1, "append 64K-1");
	tap_is_long(pwrite(fd, big + MAX - 1, 1, 0), 1, "append last byte to exactly 64K");
	tap_is_long(write(fd, "", 0), 0, "zero-length append at max returns 0");
	tap_is_long(fsync(fd), 0, "fsync at exactly max: 0");
	tap_is_long(commits() - c0, 1, "committed");
	blob_is(big, MAX, "64 KiB blob via appends");
	IS_ERR_(write(fd, "z", 1), EFBIG, "append 1 byte past max after commit");
	IS_ERR_(pw2(fd, "z", 1, 0, RWF_NOAPPEND), EFBIG, "in-place write after EFBIG returns abandon error");
	IS_ERR_(fsync(fd), EFBIG, "fsync after EFBIG");
	close(fd);
	tap_is_long(commits() - c0, 1, "no commit after EFBIG at release");
	blob_is(big, MAX, "blob still the committed 64 KiB");

	/* fresh upload at max: O_APPEND EFBIG without prior commit */
	set_blob("base", 4);
	c0 = commits();
	fd = open(BLOB, O_WRONLY);
	tap_is_long(pwrite(fd, big, MAX, 0), MAX, "write 64 KiB");
	IS_ERR_(pw2(fd, "q", 1, 0, RWF_APPEND), EFBIG, "RWF_APPEND at max");
	IS_ERR_(pw2(fd, "q", 1, 0, 0), EFBIG, "later in-range write returns EFBIG");
	tap_is_long(pw2(fd, "q", 0, 0, RWF_APPEND), 0, "zero-length append after abandon returns 0");
	IS_ERR_(fsync(fd), EFBIG, "fsync EFBIG");
	IS_ERR_(fsync(fd), EFBIG, "second fsync EFBIG");
	close(fd);
	tap_is_long(commits() - c0, 0, "nothing committed");
	blob_is("base", 4, "blob unchanged");

	/* a multi-byte append crossing max */
	c0 = commits();
	fd = open(BLOB, O_WRONLY | O_APPEND);
	tap_is_long(write(fd, big, MAX - 10), MAX - 10, "write 64K-10");
	IS_ERR_(write(fd, big, 11), EFBIG, "append 11 crossing max");
	IS_ERR_(write(fd, big, 1), EFBIG, "append 1 after abandon");
	close(fd);
	tap_is_long(commits() - c0, 0, "nothing committed at release");
	blob_is("base", 4, "blob unchanged");
	free(big);
}

/* ---- case 6: append after a failed write (EFAULT) ---- */
static void case_efault(void)
{
	void *bad = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	long c0;
	int fd;

	set_blob("base", 4);
	c0 = commits();
	fd = open(BLOB, O_WRONLY | O_APPEND);
	tap_is_long(write(fd, "hello", 5), 5, "append hello");
	IS_ERR_(write(fd, bad, 100), EFAULT, "append from PROT_NONE buffer");
	IS_ERR_(write(fd, "x", 1), EFAULT, "append after EFAULT");
	IS_ERR_(pw2(fd, "x", 1, 0, RWF_NOAPPEND), EFAULT, "in-place write after EFAULT");
	IS_ERR_(fsync(fd), EFAULT, "fsync after EFAULT");
	close(fd);
	tap_is_long(commits() - c0, 0, "nothing committed");
	blob_is("base", 4, "blob unchanged after EFAULT");

	/* committed, then failed write, then fsync */
	c0 = commits();
	fd = open(BLOB, O_WRONLY | O_APPEND);
	tap_is_long(write(fd, "one", 3), 3, "append one");
	tap_is_long(fsync(fd), 0, "fsync one");
	IS_ERR_(pw2(fd, bad, 10, 0, RWF_APPEND), EFAULT, "RWF_APPEND EFAULT after commit");
	IS_ERR_(fsync(fd), EFAULT, "fsync then EFAULT");
	close(fd);
	tap_is_long(commits() - c0, 1, "only the first commit");
	blob_is("one", 3, "blob is the first commit");

	/* ETXTBSY abandons nothing: O_RDWR read first, then append */
	c0 = commits();
	fd = open(BLOB, O_RDWR | O_APPEND);
	{
		char b[8];

		tap_is_long(read(fd, b, sizeof(b)), 3, "O_RDWR read first");
	}
	IS_ERR_(write(fd, "zz", 2), ETXTBSY, "append on a reading fd: ETXTBSY");
	tap_is_long(fsync(fd), 0, "fsync on reading fd 0");
	close(fd);
	tap_is_long(commits() - c0, 0, "nothing committed");
	munmap(bad, 4096);
}

static int memchr_inv_(const unsigned char *p, unsigned char v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != v)
			return 1;
	return 0;
}

/* ---- case 7: two threads appending on one fd ---- */
#define RCH 997
#define RN 16
static int race_fd;
static atomic_int race_go;
static int race_mode;

static void *race_thr(void *arg)
{
	int t = (int)(long)arg, i;
	unsigned char buf[RCH];
	struct io_uring ring;

	if (race_mode == 2 && io_uring_queue_init(4, &ring, 0))
		return (void *)1;
	while (!atomic_load(&race_go))
		;
	for (i = 0; i < RN; i++) {
		long r;

		memset(buf, 1 + t * RN + i, RCH);
		if (race_mode == 0)
			r = write(race_fd, buf, RCH);
		else if (race_mode == 1)
			r = pw2(race_fd, buf, RCH, i * 3, RWF_APPEND);
		else
			r = uring_write(&ring, race_fd, buf, RCH, 0, RWF_APPEND);
		if (r != RCH)
			return (void *)2;
	}
	if (race_mode == 2)
		io_uring_queue_exit(&ring);
	return NULL;
}

static void case_race(void)
{
	static const char *names[] = { "write O_APPEND", "pwritev2 RWF_APPEND", "io_uring RWF_APPEND" };

	for (int rep = 0; rep < 9; rep++) {
		pthread_t th[2];
		void *rv[2];
		unsigned char *got = NULL;
		int seen[2 * RN + 1] = { 0 }, bad = 0, i, fr;
		long c0 = commits(), len;

		race_mode = rep % 3;
		race_fd = open(BLOB, race_mode == 0 ? O_WRONLY | O_APPEND : O_WRONLY);
		atomic_store(&race_go, 0);
		for (i = 0; i < 2; i++)
			pthread_create(&th[i], NULL, race_thr, (void *)(long)i);
		atomic_store(&race_go, 1);
		for (i = 0; i < 2; i++)
			pthread_join(th[i], &rv[i]);
		errno = 0;
		fr = fsync(race_fd);
		close(race_fd);
		len = blob_slurp(BLOB, &got);
		if (len != 2 * RN * RCH)
			bad = 1;
		for (i = 0; !bad && i < 2 * RN; i++) {
			unsigned char v = got[i * RCH];

			if (v < 1 || v > 2 * RN || seen[v]++ ||
			    memchr_inv_(got + i * RCH, v, RCH))
				bad = 2;
		}
		/* per thread, chunks in order */
		for (int t = 0; !bad && t < 2; t++) {
			int last = -1;

			for (i = 0; i < 2 * RN; i++) {
				int v = got[i * RCH] - 1;

				if (v / RN != t)
					continue;
				if (v <= last)
					bad = 3;
				last = v;
			}
		}
		tap_result(!bad && !rv[0] && !rv[1] && !fr && commits() - c0 == 1,
			   "two threads %s x%d: chunks back to back, no overlap (rep %d)",
			   names[race_mode], RN, rep);
		if (bad || rv[0] || rv[1] || commits() - c0 != 1)
			printf("# bad %d len %ld thr %p %p fsync %d commits %ld\n", bad, len, rv[0], rv[1], fr,
			       commits() - c0);
		free(got);
	}
}

/* ---- case 8: readers racing commits ---- */
static atomic_int stop_;
static atomic_long reads_ok, reads_eagain, reads_torn, reads_other, wr_commits;

/* blob k: size 100 + (k*4099)%60000, header 'K' + k, body pattern of k */
static size_t gen_size(unsigned k)
{
	return 100 + (k * 4099u) % 60000u;
}

static void gen(unsigned char *p, unsigned k, size_t n)
{
	memcpy(p, &k, 4);
	for (size_t i = 4; i < n; i++)
		p[i] = (unsigned char)(i * 13 + k * 101 + (i >> 8));
}

static void *committer(void *arg)
{
	unsigned char *buf = malloc(MAX);
	unsigned k = 1;

	(void)arg;
	while (!atomic_load(&stop_)) {
		size_t n = gen_size(k), off = 0;
		int fd = open(BLOB, O_WRONLY | O_APPEND);

		gen(buf, k, n);
		while (off < n) {
			size_t c = n - off < 3000 ? n - off : 3000;

			if (write(fd, buf + off, c) != (ssize_t)c)
				break;
			off += c;
		}
		if (fsync(fd) == 0)
			atomic_fetch_add(&wr_commits, 1);
		close(fd);
		/* same-size commit with different content every 4th */
		k++;
	}
	free(buf);
	return NULL;
}

static void *reader(void *arg)
{
	unsigned char *buf = malloc(MAX + 16), *ref = malloc(MAX);

	(void)arg;
	while (!atomic_load(&stop_)) {
		int fd = open(BLOB, O_RDONLY);
		long len = 0, r;

		while ((r = read(fd, buf + len, 4096)) > 0 && len < MAX + 16 - 4096)
			len += r;
		close(fd);
		if (r < 0) {
			if (errno == EAGAIN)
				atomic_fetch_add(&reads_eagain, 1);
			else
				atomic_fetch_add(&reads_other, 1);
			continue;
		}
		if (len < 4) {
			atomic_fetch_add(&reads_torn, 1);
			continue;
		}
		unsigned k;

		memcpy(&k, buf, 4);
		if (len == 4 && !memcmp(buf, "seed", 4)) {
			atomic_fetch_add(&reads_ok, 1);
			continue;
		}
		if ((size_t)len != gen_size(k)) {
			atomic_fetch_add(&reads_torn, 1);
			continue;
		}
		gen(ref, k, len);
		if (memcmp(ref, buf, len))
			atomic_fetch_add(&reads_torn, 1);
		else
			atomic_fetch_add(&reads_ok, 1);
	}
	free(buf);
	free(ref);
	return NULL;
}

static void case_readers(void)
{
	pthread_t w, r[3];
	long c0;
	int i;

	set_blob("seed", 4);
	c0 = commits();
	atomic_store(&stop_, 0);
	pthread_create(&w, NULL, committer, NULL);
	for (i = 0; i < 3; i++)
		pthread_create(&r[i], NULL, reader, NULL);
	sleep(3);
	atomic_store(&stop_, 1);
	pthread_join(w, NULL);
	for (i = 0; i < 3; i++)
		pthread_join(r[i], NULL);
	printf("# readers: ok %ld eagain %ld torn %ld other %ld; commits %ld\n",
	       atomic_load(&reads_ok), atomic_load(&reads_eagain), atomic_load(&reads_torn),
	       atomic_load(&reads_other), atomic_load(&wr_commits));
	tap_is_long(atomic_load(&reads_torn), 0, "no torn read racing commits");
	tap_is_long(atomic_load(&reads_other), 0, "no read error other than EAGAIN");
	tap_result(atomic_load(&reads_ok) > 0, "some reads succeeded");
	tap_is_long(commits() - c0, atomic_load(&wr_commits), "commit counter delta == successful fsyncs");
}

/* ---- case 9: fsync return values ---- */
static void case_fsync(void)
{
	long c0;
	int fd;

	set_blob("seed", 4);
	c0 = commits();
	fd = open(BLOB, O_WRONLY | O_APPEND);
	tap_is_long(fsync(fd), 0, "fsync without writes: 0");
	tap_is_long(commits() - c0, 0, "fsync without writes commits nothing");
	tap_is_long(write(fd, "ab", 2), 2, "append ab");
	tap_is_long(fsync(fd), 0, "fsync after write: 0");
	tap_is_long(fsync(fd), 0, "second fsync: 0");
	tap_is_long(commits() - c0, 1, "second fsync commits nothing");
	IS_ERR_(fdatasync(fd), EINVAL, "fdatasync EINVAL");
	tap_is_long(write(fd, "cd", 2), 2, "append cd after commit");
	tap_is_long(commits() - c0, 1, "write after commit not yet committed");
	close(fd);
	tap_is_long(commits() - c0, 2, "release commits the extension");
	blob_is("abcd", 4, "append after commit extends the same blob");

	fd = open(BLOB, O_RDONLY);
	tap_is_long(fsync(fd), 0, "fsync on O_RDONLY: 0");
	close(fd);
	tap_is_long(commits() - c0, 2, "no commit from reader");

	/* empty blob commit via O_APPEND open + fsync without writes: nothing */
	fd = open(BLOB, O_WRONLY | O_APPEND);
	close(fd);
	tap_is_long(commits() - c0, 2, "open/close without writes commits nothing");
	blob_is("abcd", 4, "blob unchanged");
}

int main(void)
{
	if (system("modprobe configfs && { mountpoint -q /sys/kernel/config || "
		   "mount -t configfs none /sys/kernel/config; } && modprobe configfs_sample")) {
		tap_result(0, "load configfs_sample");
		return tap_done();
	}
	tap_result(access(BLOB, F_OK) == 0 && commits() >= 0, "blob and blob_commits exist");
	case_oappend();
	case_hole();
	case_rwf();
	case_async();
	case_max();
	case_efault();
	case_fsync();
	case_race();
	case_readers();
	tap_result(system("modprobe -r configfs_sample") == 0, "configfs_sample unloads");
	return tap_done();
}
