// SPDX-License-Identifier: GPL-2.0
// bench-ldlibs: -luring -lpthread
/*
 * Adversarial cases against the configfs binary attribute contract
 * (Documentation/filesystems/configfs.rst, "Reading and writing a binary
 * attribute"), through the lk45_blobstore sample, on an item of its own
 * ("attack"):
 *
 *  - cb_max_size boundaries: partial fits, RWF_APPEND at the limit, offsets
 *    near LLONG_MAX, negative pwritev2 offsets, a writev the VFS caps at
 *    MAX_RW_COUNT, a commit of exactly cb_max_size bytes;
 *  - O_RDWR: the first read or write decides, zero-length I/O does not;
 *  - threads writing, fsyncing and fdatasyncing one open file while a
 *    process that only inherited it is killed; a thread group killed while
 *    its threads write and fsync;
 *  - writers killed, exiting or calling execve(2) while a write of theirs is
 *    inside a page fault: its buffer is a MADV_RANDOM mapping of a file on
 *    9p (the guest's /usr), so that every page of it is a round trip to the
 *    host, and the moment is found in /proc/PID/syscall, not guessed;
 *  - a writer killed while another process holds the open file's mutex in
 *    such a write (it must not hang; EINTR abandons nothing; the last
 *    writer's abandon still happens);
 *  - io_uring writes in flight at a SIGKILL, with and without the
 *    descriptor; AIO writes then exit or SIGKILL; AIO fsync in flight;
 *  - vfork(2) children, CLONE_FILES children, pidfd_getfd(2) racing a death;
 *  - execve(2) with and without close-on-exec;
 *  - readers racing commits and read_mode changes;
 *  - rmdir(2) racing fsync(2);
 *  - a memory cgroup: a writer crossing memory.max, a reader past it.
 *
 * Where an outcome legitimately depends on a race, the allowed set is
 * asserted, nothing outside it.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <limits.h>
#include <liburing.h>
#include <linux/aio_abi.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "blob.h"
#include "tap.h"
#include "attack_util.h"

#define ITEM		STORE_ROOT "/attack"
#define BLOB		ITEM "/blob"
#define DIGEST		ITEM "/digest"
#define RM_ITEM		STORE_ROOT "/attack_rm"
#define SAMPLE		"lk45_blobstore"
#define PARAM		"/sys/module/" SAMPLE "/parameters/max_blob"
#define REFCNT		"/sys/module/" SAMPLE "/refcnt"
#define OWN_MAX_BLOB	"8388611"	/* 8 MiB + 3, when this test loads the sample */
#define V9FS_MAGIC	0x01021997
#define KIB		1024UL
#define MIB		(1024UL * 1024)
#define DATA_SIZE	(4 * MIB)

static unsigned char *data;	/* DATA_SIZE bytes of pattern */
static unsigned char base[1000];	/* what each case starts from */
static size_t max_blob;
static int loaded_sample, mounted_configfs;

static int readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1;
}

static long counter(const char *name)
{
	return blob_counter(ITEM, name);
}

/* Open files of the sample's attributes hold a module reference each. */
static long refcnt(void)
{
	return read_long(REFCNT);
}

/* Wait up to 30 s for the module's reference count to fall to @want. */
static int wait_released(long want)
{
	int i;

	for (i = 0; i < 1500; i++) {
		if (refcnt() == want)
			return 1;
		usleep(20000);
	}
	return 0;
}

/* ---- crc32_le(~0, ...) as the sample computes it, table-driven ---- */

static uint32_t crc_tab[256];

static void crc_init(void)
{
	uint32_t c;
	int i, k;

	for (i = 0; i < 256; i++) {
		c = i;
		for (k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320u & -(c & 1));
		crc_tab[i] = c;
	}
}

static uint32_t crc_update(uint32_t crc, const void *p, size_t n)
{
	const unsigned char *b = p;

	while (n--)
		crc = (crc >> 8) ^ crc_tab[(crc ^ *b++) & 0xff];
	return crc;
}

struct digest {
	uint64_t size;
	uint32_t crc, commits;
} __attribute__((packed));

static int read_digest(struct digest *d)
{
	int fd = open(DIGEST, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, d, sizeof(*d));

	if (fd >= 0)
		close(fd);
	return n == (ssize_t)sizeof(*d) ? 0 : -1;
}

/* 1 when the stored blob is @alen bytes of @a, 2 when @blen of @b, else 0 */
static int stored_which(const void *a, size_t alen, const void *b, size_t blen)
{
	unsigned char *got = NULL;
	long n = blob_slurp(BLOB, &got);
	int r = 0;

	if (a && n == (long)alen && (!alen || !memcmp(got, a, alen)))
		r = 1;
	else if (b && n == (long)blen && (!blen || !memcmp(got, b, blen)))
		r = 2;
	else
		printf("# the blob holds %ld bytes%s\n", n, n < 0 ? " (read failed)" : "");
	free(got);
	return r;
}

static int stored_is(const void *p, size_t len)
{
	return stored_which(p, len, NULL, 0) == 1;
}

static int stored_base(void)
{
	return stored_is(base, sizeof(base));
}

/* The stored blob's length when it is data[0..k*chunk) for some k >= 1, else -1. */
static long stored_prefix(size_t chunk)
{
	unsigned char *got = NULL;
	long n = blob_slurp(BLOB, &got), r = -1;

	if (n > 0 && n % (long)chunk == 0 && !memcmp(got, data, n))
		r = n;
	else
		printf("# the blob holds %ld bytes, not whole chunks of the upload\n", n);
	free(got);
	return r;
}

/* Put the base blob in place, committed by fsync(2). */
static int reset_blob(void)
{
	struct upload u = blob_commit(BLOB, base, sizeof(base), sizeof(base));

	write_str(ITEM "/read_mode", "normal");
	return u.open_err || u.write_err || u.fsync_err || u.close_err ? -1 : 0;
}

/* ---- processes ---- */

/* Wait up to @ms for @pid to die and reap it; 1 when it died in time. */
static int reap_within(pid_t pid, int ms, int *status)
{
	int pfd = syscall(SYS_pidfd_open, pid, 0), in_time = 1;
	struct pollfd p = { .fd = pfd, .events = POLLIN };

	if (pfd >= 0) {
		in_time = poll(&p, 1, ms) == 1;
		close(pfd);
	}
	if (!in_time)
		printf("# pid %d still not dead after %d ms\n", (int)pid, ms);
	waitpid(pid, status, 0);
	return in_time;
}

/*
 * The state letter of task @tid ('?' once it is gone) and, in *@nr, the
 * system call it sleeps in (-1 while it runs: /proc/PID/syscall says
 * "running" then).
 */
static char task_probe(pid_t tid, long *nr)
{
	char p[64], buf[512], *s;
	ssize_t n;
	char st;
	int fd;

	*nr = -2;
	snprintf(p, sizeof(p), "/proc/%d/stat", (int)tid);
	fd = open(p, O_RDONLY);
	n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return '?';
	buf[n] = 0;
	s = strrchr(buf, ')');
	if (!s || !s[1] || !s[2])
		return '?';
	st = s[2];
	snprintf(p, sizeof(p), "/proc/%d/syscall", (int)tid);
	fd = open(p, O_RDONLY);
	n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	if (n > 0) {
		buf[n] = 0;
		*nr = strncmp(buf, "running", 7) ? strtol(buf, NULL, 10) : -1;
	}
	return st;
}

/*
 * Wait until task @tid sleeps inside system call @nr: 1. 0 when @done
 * (when >= 0) turned readable, or the task died, first; -1 after 60 s.
 */
static int wait_inside(pid_t tid, long nr, int done)
{
	int i;

	for (i = 0; i < 300000; i++) {
		long cur;
		char st;

		if (done >= 0 && readable(done))
			return 0;
		st = task_probe(tid, &cur);
		if (st == '?' || st == 'Z' || st == 'X')
			return 0;
		if (cur == nr)
			return 1;
		usleep(200);
	}
	return -1;
}

/*
 * Whether @tid still sleeps in the system call @nr: polls until it is seen
 * sleeping in it (1), or in something else, gone, or @done readable (0).
 */
static int still_inside(pid_t tid, long nr, int done)
{
	int i;

	for (i = 0; i < 300000; i++) {
		long cur;
		char st;

		if (done >= 0 && readable(done))
			return 0;
		st = task_probe(tid, &cur);
		if (st == '?' || st == 'Z' || st == 'X')
			return 0;
		if (cur == nr)
			return 1;
		if (cur != -1)
			return 0;
		usleep(100);
	}
	return 0;
}

/* ---- a slow buffer: every page a round trip to the host over 9p ---- */

static int slow_fd = -1;
static off_t slow_size, slow_next;
static char slow_path[PATH_MAX];

static void slow_consider(const char *path, off_t *best)
{
	struct statfs sf;
	struct stat st;

	if (stat(path, &st) || !S_ISREG(st.st_mode) || st.st_size <= *best)
		return;
	if (statfs(path, &sf) || sf.f_type != V9FS_MAGIC)
		return;
	*best = st.st_size;
	snprintf(slow_path, sizeof(slow_path), "%s", path);
}

/* NULL, or why there is no slow buffer */
static const char *slow_setup(void)
{
	static const char *const dirs[] = {
		"/usr/src", "/usr/lib/x86_64-linux-gnu", "/usr/lib", "/usr/bin",
		"/usr/libexec", "/usr/sbin", "/usr/share/package-lists", NULL,
	};
	off_t best = 0;
	char p[PATH_MAX];
	int i;

	/* the bench installs linux-source-6.12: try it before listing directories */
	slow_consider("/usr/src/linux-source-6.12.tar.xz", &best);
	for (i = 0; best < (off_t)(64 * MIB) && dirs[i]; i++) {
		DIR *d = opendir(dirs[i]);
		struct dirent *e;

		if (!d)
			continue;
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			snprintf(p, sizeof(p), "%s/%s", dirs[i], e->d_name);
			slow_consider(p, &best);
		}
		closedir(d);
	}
	if (best < (off_t)(8 * MIB))
		return "no file of 8 MiB or more on 9p under /usr";
	slow_fd = open(slow_path, O_RDONLY);
	if (slow_fd < 0)
		return "cannot open the 9p file";
	slow_size = best & ~(off_t)4095;
	printf("# slow buffers: MADV_RANDOM mappings of %s (%lld bytes, 9p)\n", slow_path,
	       (long long)best);
	return NULL;
}

/* A fresh read-only mapping of @len bytes of the 9p file, out of the page cache. */
static unsigned char *slow_map(size_t len, off_t *off)
{
	void *p;

	if (slow_next + (off_t)len > slow_size)
		slow_next = 0;
	*off = slow_next;
	slow_next += len;
	posix_fadvise(slow_fd, *off, len, POSIX_FADV_DONTNEED);
	p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, slow_fd, *off);
	if (p == MAP_FAILED)
		return NULL;
	madvise(p, len, MADV_RANDOM);
	return p;
}

/* @first bytes of @head, then @len bytes of the 9p file at @off */
static unsigned char *slow_expect(const void *head, size_t first, off_t off, size_t len)
{
	unsigned char *p = malloc(first + len);

	if (!p)
		return NULL;
	memcpy(p, head, first);
	if (pread(slow_fd, p + first, len, off) != (ssize_t)len) {
		free(p);
		return NULL;
	}
	return p;
}

static size_t slow_len(size_t want)
{
	size_t room = max_blob ? (max_blob - 8192) & ~(size_t)4095 : want;

	return want < room ? want : room;
}

/* A thread that writes @first bytes of data at 0, then @v at @at. */
struct slow_writer {
	int fd, done_w;
	size_t first;
	struct iovec v;
	off_t at;
	atomic_int tid;
};

static void *slow_writer_main(void *arg)
{
	struct slow_writer *s = arg;
	int e = 0;

	if (s->first && pwrite(s->fd, data + 7, s->first, 0) != (ssize_t)s->first)
		e = errno;
	atomic_store(&s->tid, (int)gettid());
	if (!e)
		e = pwritev(s->fd, &s->v, 1, s->at) == (ssize_t)s->v.iov_len ? 0 : errno;
	put(s->done_w, &e, sizeof(e));
	return NULL;
}

/* Start @s in a thread of the calling process; returns its tid. */
static pid_t slow_writer_start(struct slow_writer *s)
{
	pthread_t t;

	atomic_store(&s->tid, 0);
	if (pthread_create(&t, NULL, slow_writer_main, s))
		return -1;
	pthread_detach(t);
	while (!atomic_load(&s->tid))
		usleep(100);
	return atomic_load(&s->tid);
}

/* ==== 1: cb_max_size boundaries and far offsets ==== */

static void case_bounds(void)
{
	static const unsigned char two[2] = { 0x5a, 0xa5 };
	static unsigned char zero[65536];
	struct iovec huge[3], v;
	struct digest d = { 0 };
	long c0, k;
	int fd, a, b, s, s2, cl, i, ok;
	uint32_t crc;
	size_t left;

	if (reset_blob()) {
		tap_result(0, "[bounds] the base blob is committed");
		return;
	}
	c0 = counter("commits");

	fd = open(BLOB, O_WRONLY);
	a = ERR(pwrite(fd, two, 2, max_blob - 1));
	s = fsync(fd) ? errno : 0;
	b = ERR(pwrite(fd, two, 1, 0));
	cl = close(fd) ? errno : 0;
	tap_is_long(a, EFBIG, "[bounds] 2 bytes at cb_max_size-1 (one would fit): EFBIG");
	tap_is_long(s, EFBIG, "[bounds] then fsync returns EFBIG: nothing of it was stored");
	tap_is_long(b, EFBIG, "[bounds] then a write at 0 fails alike (the error is sticky)");
	tap_is_long(cl, 0, "[bounds] close returns 0");

	fd = open(BLOB, O_WRONLY);
	a = ERR(pwrite(fd, two, 1, max_blob));
	s = fsync(fd) ? errno : 0;
	close(fd);
	tap_is_long(a, EFBIG, "[bounds] 1 byte at cb_max_size: EFBIG");
	tap_is_long(s, EFBIG, "[bounds] then fsync returns EFBIG");

	fd = open(BLOB, O_WRONLY);
	a = ERR(pwrite(fd, two, 1, LLONG_MAX - 1));
	s = fsync(fd) ? errno : 0;
	close(fd);
	tap_is_long(a, EFBIG, "[bounds] 1 byte at LLONG_MAX-1: EFBIG");
	tap_is_long(s, EFBIG, "[bounds] then fsync returns EFBIG");

	/* 3 GiB of iovecs: the VFS caps the count at MAX_RW_COUNT; nothing is copied */
	for (i = 0; i < 3; i++)
		huge[i] = (struct iovec){ (void *)(uintptr_t)0x100000, 1UL << 30 };
	fd = open(BLOB, O_WRONLY);
	a = ERR(writev(fd, huge, 3));
	s = fsync(fd) ? errno : 0;
	close(fd);
	tap_is_long(a, EFBIG, "[bounds] writev of 3 x 1 GiB (capped at MAX_RW_COUNT): EFBIG");
	tap_is_long(s, EFBIG, "[bounds] then fsync returns EFBIG");

	/* past LLONG_MAX: the VFS refuses (EINVAL, upload kept) or configfs (EFBIG, abandoned) */
	fd = open(BLOB, O_WRONLY);
	b = pwrite(fd, data, 100, 0) == 100 ? 0 : errno;
	a = ERR(pwrite(fd, data, 16, LLONG_MAX - 8));
	s = fsync(fd) ? errno : 0;
	close(fd);
	ok = !b && ((a == EINVAL && !s && stored_is(data, 100)) ||
		    (a == EFBIG && s == EFBIG && stored_base()));
	tap_result(ok, "[bounds] 16 bytes at LLONG_MAX-8: %s, then fsync %s (EINVAL keeps the "
		   "upload, EFBIG abandons it)", en(a), en(s));

	/* a negative offset other than -1 */
	fd = open(BLOB, O_WRONLY);
	v = (struct iovec){ data, 100 };
	a = ERR(pwritev2(fd, &v, 1, -2, 0));
	b = write(fd, data + 100, 100) == 100 ? 0 : errno;
	s = fsync(fd) ? errno : 0;
	close(fd);
	tap_is_long(a, EINVAL, "[bounds] pwritev2 at offset -2: EINVAL");
	tap_result(!b && !s && stored_is(data + 100, 100),
		   "[bounds] the VFS refusal abandons nothing: write %s, fsync %s", en(b), en(s));

	if (max_blob > 64 * MIB) {
		tap_skip("[bounds] a blob of exactly cb_max_size bytes", "cb_max_size over 64 MiB");
		return;
	}
	reset_blob();
	c0 = counter("commits");

	/* a byte at M-1 (a hole of M-1 zeroes), then RWF_APPEND at M */
	fd = open(BLOB, O_WRONLY);
	a = pwrite(fd, two, 1, max_blob - 1) == 1 ? 0 : errno;
	v = (struct iovec){ (void *)(two + 1), 1 };
	b = ERR(pwritev2(fd, &v, 1, -1, RWF_APPEND));
	s = fsync(fd) ? errno : 0;
	close(fd);
	tap_is_long(a, 0, "[bounds] 1 byte at cb_max_size-1 is stored");
	tap_is_long(b, EFBIG, "[bounds] then RWF_APPEND of 1 byte (at cb_max_size): EFBIG");
	tap_is_long(s, EFBIG, "[bounds] then fsync returns EFBIG");
	tap_result(counter("commits") == c0 && stored_base(), "[bounds] nothing was committed");

	/* a byte at M-2, RWF_APPEND one at M-1: exactly M bytes */
	fd = open(BLOB, O_WRONLY);
	a = pwrite(fd, two, 1, max_blob - 2) == 1 ? 0 : errno;
	b = pwritev2(fd, &v, 1, -1, RWF_APPEND) == 1 ? 0 : errno;
	s = fsync(fd) ? errno : 0;
	k = counter("commits") - c0;
	read_digest(&d);
	crc = ~0u;
	for (left = max_blob - 2; left; ) {
		size_t n = left < sizeof(zero) ? left : sizeof(zero);

		crc = crc_update(crc, zero, n);
		left -= n;
	}
	crc = crc_update(crc, two, 2);
	tap_result(!a && !b && !s && k == 1,
		   "[bounds] 1 byte at cb_max_size-2, RWF_APPEND of 1: %s %s, fsync %s, commits +%ld",
		   en(a), en(b), en(s), k);
	tap_result(d.size == max_blob && d.crc == crc,
		   "[bounds] the stored blob is cb_max_size bytes, zeroes then the two bytes "
		   "(size %llu, crc %s)", (unsigned long long)d.size, d.crc == crc ? "right" : "wrong");
	/* the file position is cb_max_size now: a write there fails, the commit stays */
	a = ERR(write(fd, two, 1));
	s2 = fsync(fd) ? errno : 0;
	cl = close(fd) ? errno : 0;
	memset(&d, 0, sizeof(d));
	read_digest(&d);
	tap_is_long(a, EFBIG, "[bounds] then write(2) at the file position cb_max_size: EFBIG");
	tap_is_long(s2, EFBIG, "[bounds] then fsync returns EFBIG");
	tap_result(!cl && counter("commits") - c0 == 1 && d.size == max_blob && d.crc == crc,
		   "[bounds] close returns 0 and the committed blob stays");
}

/* ==== 2: O_RDWR ==== */

static void case_rdwr(void)
{
	unsigned char buf[16];
	int fd, z1, z2, r1, w, s, r2, w1, w2, e, cl;
	long c0;

	reset_blob();
	c0 = counter("commits");
	fd = open(BLOB, O_RDWR);
	z1 = write(fd, data, 0);
	z2 = read(fd, buf, 0);
	r1 = read(fd, buf, 10) == 10 && !memcmp(buf, base, 10);
	w = ERR(write(fd, data, 10));
	s = fsync(fd) ? errno : 0;
	r2 = pread(fd, buf, 10, 500) == 10 && !memcmp(buf, base + 500, 10);
	cl = close(fd) ? errno : 0;
	tap_result(!z1 && !z2, "[rdwr] zero-length write and read return 0");
	tap_result(r1, "[rdwr] then the first read reads the blob (zero-length I/O decided nothing)");
	tap_is_long(w, ETXTBSY, "[rdwr] then a write fails with ETXTBSY");
	tap_is_long(s, 0, "[rdwr] fsync of the reader returns 0");
	tap_result(r2, "[rdwr] later reads still serve the copy");
	tap_result(!cl && counter("commits") == c0, "[rdwr] close returns 0 and commits nothing");

	fd = open(BLOB, O_RDWR);
	w1 = write(fd, data, 300) == 300 ? 0 : errno;
	e = ERR(read(fd, buf, 10));
	w2 = write(fd, data + 300, 300) == 300 ? 0 : errno;
	s = fsync(fd) ? errno : 0;
	cl = close(fd) ? errno : 0;
	tap_is_long(e, ETXTBSY, "[rdwr] after a write, a read fails with ETXTBSY");
	tap_result(!w1 && !w2 && !s, "[rdwr] ETXTBSY abandons nothing: write %s, write %s, fsync %s",
		   en(w1), en(w2), en(s));
	tap_result(!cl && counter("commits") == c0 + 1 && stored_is(data, 600),
		   "[rdwr] one commit, of both writes");

	if (!max_blob)
		return;
	reset_blob();
	c0 = counter("commits");
	fd = open(BLOB, O_RDWR);
	w = ERR(pwrite(fd, data, 1, max_blob));
	e = ERR(read(fd, buf, 10));
	s = fsync(fd) ? errno : 0;
	close(fd);
	tap_result(w == EFBIG && e == ETXTBSY && s == EFBIG && counter("commits") == c0,
		   "[rdwr] a failed first write decides too: write %s, read %s, fsync %s",
		   en(w), en(e), en(s));
}

/* ==== 3: threads on one open file; a process that only inherited it is killed ==== */

#define TCH	4096
#define TNCH	96

struct tshare {
	int fd, half_w;
	atomic_int wdone;
	int werr, serr, derr;
	long syncs, dsyncs;
};

static void *t_writer(void *arg)
{
	struct tshare *t = arg;
	int i;

	for (i = 0; i < TNCH; i++) {
		if (pwrite(t->fd, data + i * TCH, TCH, i * TCH) != TCH && !t->werr)
			t->werr = errno ? errno : EIO;
		if (i == TNCH / 2)
			put(t->half_w, "h", 1);
	}
	atomic_store(&t->wdone, 1);
	return NULL;
}

static void *t_syncer(void *arg)
{
	struct tshare *t = arg;

	while (!atomic_load(&t->wdone)) {
		if (fsync(t->fd) && !t->serr)
			t->serr = errno;
		t->syncs++;
	}
	return NULL;
}

static void *t_dsyncer(void *arg)
{
	struct tshare *t = arg;

	while (!atomic_load(&t->wdone)) {
		if (!fdatasync(t->fd))
			t->derr = -1;
		else if (errno != EINVAL && !t->derr)
			t->derr = errno;
		t->dsyncs++;
	}
	return NULL;
}

static void case_threads(void)
{
	struct tshare t = { 0 };
	pthread_t w, s, d;
	int kp[2], hp[2], st, sy, cl;
	long c0, k1, k2;
	pid_t pid;
	char b;

	reset_blob();
	c0 = counter("commits");
	t.fd = open(BLOB, O_WRONLY);
	if (pipe(kp) || pipe(hp))
		return;
	fflush(stdout);
	pid = fork();
	if (!pid) {
		put(kp[1], "k", 1);
		for (;;)
			pause();
	}
	get(kp[0], &b, 1);
	t.half_w = hp[1];
	pthread_create(&w, NULL, t_writer, &t);
	pthread_create(&s, NULL, t_syncer, &t);
	pthread_create(&d, NULL, t_dsyncer, &t);
	get(hp[0], &b, 1);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	pthread_join(w, NULL);
	pthread_join(s, NULL);
	pthread_join(d, NULL);
	sy = fsync(t.fd) ? errno : 0;
	k1 = counter("commits") - c0;
	cl = close(t.fd) ? errno : 0;
	k2 = counter("commits") - c0;
	printf("# %ld fsyncs and %ld fdatasyncs ran beside the writes; %ld commits\n", t.syncs,
	       t.dsyncs, k1);
	tap_result(WIFSIGNALED(st) && !t.werr, "[threads] all %d writes succeed while a process "
		   "that inherited the file is killed: %s", TNCH, en(t.werr));
	tap_is_long(t.serr, 0, "[threads] every concurrent fsync returns 0");
	tap_is_long(t.derr, 0, "[threads] every concurrent fdatasync fails with EINVAL");
	tap_result(!sy && k1 >= 1 && stored_is(data, TCH * TNCH),
		   "[threads] the last fsync returns %s and the blob is all of it", en(sy));
	tap_result(!cl && k2 == k1, "[threads] close returns 0 and commits nothing more");
	close(kp[0]);
	close(kp[1]);
	close(hp[0]);
	close(hp[1]);
}

/* ==== 4: a thread group killed while its threads write and fsync ==== */

#define GCH	4096
#define GNCH	64

struct gshare {
	int fd;
};

static void *g_syncer(void *arg)
{
	struct gshare *g = arg;

	for (;;)
		fsync(g->fd);
	return NULL;
}

static void *g_idle(void *arg)
{
	int *tid = arg;

	*tid = gettid();
	for (;;)
		pause();
	return NULL;
}

static void case_group_killed(void)
{
	int rp[2], st, s, w = 0, cl;
	long c0, c1, c2, c3, n;
	volatile int idle_tid = 0;
	pid_t pid;
	int fd, got[2] = { -1, 0 };

	reset_blob();
	c0 = counter("commits");
	fd = open(BLOB, O_WRONLY);
	if (pipe(rp))
		return;
	fflush(stdout);
	pid = fork();
	if (!pid) {
		struct gshare g = { fd };
		pthread_t a, b;
		int r[2], i;

		r[0] = pwrite(fd, data, GCH, 0) == GCH ? 0 : errno;
		if (!r[0])
			r[0] = fsync(fd) ? errno : 0;
		pthread_create(&b, NULL, g_idle, (void *)&idle_tid);
		while (!idle_tid)
			usleep(100);
		r[1] = idle_tid;
		pthread_create(&a, NULL, g_syncer, &g);
		if (pwrite(fd, data + GCH, GCH, GCH) != GCH && !r[0])
			r[0] = errno;
		put(rp[1], r, sizeof(r));
		for (i = 2; ; i++) {
			size_t at = (size_t)(i % GNCH) * GCH;

			pwrite(fd, data + at, GCH, at);
		}
	}
	/* the idle thread: it never wrote, but its group did */
	if (get(rp[0], got, sizeof(got)) || got[1] <= 0 ||
	    syscall(SYS_tgkill, pid, got[1], SIGKILL))
		kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	c1 = counter("commits") - c0;
	s = fsync(fd) ? errno : 0;
	c2 = counter("commits") - c0;
	if (s == ECANCELED)
		w = ERR(write(fd, data, 10));
	cl = close(fd) ? errno : 0;
	c3 = counter("commits") - c0;
	n = stored_prefix(GCH);
	tap_result(!got[0] && WIFSIGNALED(st), "[group] the group committed a chunk, wrote another "
		   "and was killed through an idle thread: %s", en(got[0]));
	tap_result(s == ECANCELED || !s, "[group] the holder's fsync returns ECANCELED or 0: %s",
		   en(s));
	tap_result(c2 == c1 && c3 == c1 && !cl, "[group] neither that fsync nor the close commits "
		   "anything (commits +%ld, +%ld, +%ld)", c1, c2, c3);
	tap_result(n >= GCH, "[group] the blob is what a commit of the group took: whole chunks "
		   "(%ld bytes)", n);
	if (s == ECANCELED)
		tap_is_long(w, ECANCELED, "[group] a write after the abandon fails with ECANCELED");
	close(rp[0]);
	close(rp[1]);
}

/* ==== 5: killed, exiting, exec'ing while a write is inside a page fault (9p) ==== */

static const char *no_slow;	/* why there is no slow buffer, or NULL */

/*
 * A child process makes (@wrote_first) or does not make a write of 2000
 * bytes, then writes a slow buffer, and is killed while that write is in
 * a page fault. The parent holds the same open file.
 */
static void case_killed_mid_write(int wrote_first)
{
	const char *tag = wrote_first ? "[mid-write, last writer]" : "[mid-write, not last writer]";
	size_t len = slow_len(MIB);
	unsigned char *src;
	int fd, rp[2], dp[2], st, inside, s, w = 0, reaped, done, e = -1;
	long c0, k;
	off_t off;
	pid_t pid;

	if (no_slow) {
		tap_skip(tag, no_slow);
		return;
	}
	src = slow_map(len, &off);
	if (!src) {
		tap_skip(tag, "mmap of the 9p file failed");
		return;
	}
	reset_blob();
	c0 = counter("commits");
	fd = open(BLOB, O_WRONLY);
	if (!wrote_first && pwrite(fd, data + 7, 2000, 0) != 2000)
		tap_result(0, "%s the parent writes 2000 bytes", tag);
	if (pipe(rp) || pipe(dp))
		return;
	fflush(stdout);
	pid = fork();
	if (!pid) {
		struct iovec v = { src, len };
		int r;

		if (wrote_first) {
			r = pwrite(fd, data + 7, 2000, 0) == 2000 ? 0 : errno;
			put(rp[1], &r, sizeof(r));
		}
		r = pwritev(fd, &v, 1, 2000) == (ssize_t)len ? 0 : errno;
		put(dp[1], &r, sizeof(r));
		for (;;)
			pause();
	}
	if (wrote_first)
		get(rp[0], &e, sizeof(e));
	inside = wait_inside(pid, SYS_pwritev, dp[0]);
	kill(pid, SIGKILL);
	reaped = reap_within(pid, 20000, &st);
	done = readable(dp[0]);
	s = fsync(fd) ? errno : 0;
	if (s)
		w = ERR(pwrite(fd, data, 10, 0));
	close(fd);
	k = counter("commits") - c0;
	printf("# %s: the child was %sseen inside its write of %zu bytes; it %s\n", tag,
	       inside == 1 ? "" : "NOT ", len, done ? "finished it" : "did not finish it");
	if (wrote_first)
		tap_is_long(e, 0, "[mid-write, last writer] the child's first write succeeds");
	tap_result(reaped, "%s the killed writer is reaped within 20 s", tag);
	if (wrote_first) {
		tap_is_long(s, ECANCELED, "[mid-write, last writer] the holder's fsync returns "
			    "ECANCELED (the killed group wrote last)");
		tap_is_long(w, ECANCELED, "[mid-write, last writer] and its write ECANCELED");
		tap_result(!k && stored_base(), "[mid-write, last writer] nothing is committed "
			   "(commits +%ld)", k);
	} else {
		/* the child never completed a write: abandon nothing; or it did: ECANCELED */
		tap_result((!s && k == 1 && stored_is(data + 7, 2000)) ||
			   (s == ECANCELED && w == ECANCELED && !k && stored_base()),
			   "[mid-write, not last writer] the holder's fsync returns 0 and commits its "
			   "own 2000 bytes (or ECANCELED if the child's write completed): fsync %s, "
			   "commits +%ld", en(s), k);
	}
	munmap(src, len);
	close(rp[0]);
	close(rp[1]);
	close(dp[0]);
	close(dp[1]);
}

/*
 * A thread of a child writes 2000 bytes, then a slow buffer; while that
 * write is in a page fault, the child's main thread, which never wrote,
 * is sent SIGKILL (tgkill). The parent holds the same open file.
 */
static void case_idle_thread_killed(void)
{
	const char *tag = "[thread killed]";
	size_t len = slow_len(MIB);
	unsigned char *src;
	int fd, rp[2], st, s, w, reaped, inside = -9;
	long c0, k;
	off_t off;
	pid_t pid;

	if (no_slow) {
		tap_skip(tag, no_slow);
		return;
	}
	src = slow_map(len, &off);
	if (!src) {
		tap_skip(tag, "mmap of the 9p file failed");
		return;
	}
	reset_blob();
	c0 = counter("commits");
	fd = open(BLOB, O_WRONLY);
	if (pipe(rp))
		return;
	fflush(stdout);
	pid = fork();
	if (!pid) {
		struct slow_writer sw = { .fd = fd, .first = 2000, .v = { src, len }, .at = 2000 };
		int dp[2], r;
		pid_t tid;

		if (pipe(dp))
			_exit(90);
		sw.done_w = dp[1];
		tid = slow_writer_start(&sw);
		r = wait_inside(tid, SYS_pwritev, dp[0]);
		put(rp[1], &r, sizeof(r));
		for (;;)
			pause();
	}
	get(rp[0], &inside, sizeof(inside));
	syscall(SYS_tgkill, pid, pid, SIGKILL);
	reaped = reap_within(pid, 20000, &st);
	s = fsync(fd) ? errno : 0;
	w = ERR(pwrite(fd, data, 10, 0));
	close(fd);
	k = counter("commits") - c0;
	printf("# %s the writing thread was %sseen inside its write\n", tag,
	       inside == 1 ? "" : "NOT ");
	tap_result(reaped && WIFSIGNALED(st), "%s the group dies within 20 s", tag);
	tap_is_long(s, ECANCELED, "[thread killed] the holder's fsync returns ECANCELED (the "
		    "group made the last write)");
	tap_is_long(w, ECANCELED, "[thread killed] and its write ECANCELED");
	tap_result(!k && stored_base(), "[thread killed] nothing is committed (commits +%ld)", k);
	munmap(src, len);
	close(rp[0]);
	close(rp[1]);
}

/*
 * A child opens the blob, writes 2000 bytes, and a thread of it writes a
 * slow buffer; while that write is in a page fault the main thread calls
 * _exit(0) (@how 0) or execve(2)s this program, which calls fsync(2) on
 * the descriptor it kept (@how 1). Neither is a death by a signal.
 */
static void case_exit_mid_write(int how)
{
	const char *tag = how ? "[execve mid-write]" : "[_exit(0) mid-write]";
	size_t len = slow_len(MIB);
	unsigned char *src, *full;
	int rp[2], st, inside = -9, e = -1, which;
	long c0, k, ref0;
	off_t off;
	pid_t pid;

	if (no_slow) {
		tap_skip(tag, no_slow);
		return;
	}
	src = slow_map(len, &off);
	if (!src) {
		tap_skip(tag, "mmap of the 9p file failed");
		return;
	}
	reset_blob();
	c0 = counter("commits");
	ref0 = refcnt();
	if (pipe(rp))
		return;
	fflush(stdout);
	pid = fork();
	if (!pid) {
		struct slow_writer sw = { .v = { src, len }, .at = 2000 };
		char fds[16], rps[16];
		int dp[2], r;
		pid_t tid;

		sw.fd = open(BLOB, O_WRONLY);
		if (pwrite(sw.fd, data + 7, 2000, 0) != 2000 || pipe(dp))
			_exit(90);
		sw.done_w = dp[1];
		tid = slow_writer_start(&sw);
		r = wait_inside(tid, SYS_pwritev, dp[0]);
		put(rp[1], &r, sizeof(r));
		if (!how)
			_exit(0);
		snprintf(fds, sizeof(fds), "%d", sw.fd);
		snprintf(rps, sizeof(rps), "%d", rp[1]);
		execl("/proc/self/exe", "extra_configfs_attack", "--exec-fsync", fds, rps,
		      (char *)NULL);
		_exit(91);
	}
	close(rp[1]);
	get(rp[0], &inside, sizeof(inside));
	if (how && get(rp[0], &e, sizeof(e)))
		e = -1;
	reap_within(pid, 20000, &st);
	tap_result(wait_released(ref0), "%s the open file is released", tag);
	k = counter("commits") - c0;
	full = slow_expect(data + 7, 2000, off, len);
	which = stored_which(data + 7, 2000, full, 2000 + len);
	printf("# %s the writing thread was %sseen inside its write\n", tag,
	       inside == 1 ? "" : "NOT ");
	tap_result(WIFEXITED(st) && !WEXITSTATUS(st), "%s the child exits with 0", tag);
	if (how)
		tap_is_long(e, 0, "[execve mid-write] fsync(2) in the new program returns 0 (execve "
			    "kills the writing thread but abandons nothing)");
	tap_is_long(k, 1, how ? "[execve mid-write] the upload is committed once" :
		    "[_exit(0) mid-write] _exit(0) is a close: the upload is committed once");
	tap_result(which, "%s the blob is the 2000 bytes%s (%s)", tag, " or those and the whole "
		   "slow write", which == 1 ? "2000 bytes" : which == 2 ? "all" : "neither");
	free(full);
	munmap(src, len);
	close(rp[0]);
}

/* ==== 6: a writer killed while another process holds the mutex in a long write ==== */

/*
 * The parent writes 2000 bytes; child B writes a slow buffer after them
 * and holds the open file's mutex for the time of its page faults; child
 * A, which never wrote, writes 100 bytes meanwhile, waits for the mutex,
 * and is killed there: EINTR, which abandons nothing.
 */
static void case_eintr_on_mutex(void)
{
	const char *tag = "[mutex, EINTR]";
	size_t len = slow_len(2 * MIB);
	unsigned char *src, *full;
	int fd, bp[2], gp[2], ap[2], st, stb, bi, ai, conclusive, s, br = -1, reaped;
	long c0, k;
	off_t off;
	pid_t a, b;
	char ch;

	if (no_slow) {
		tap_skip(tag, no_slow);
		return;
	}
	src = slow_map(len, &off);
	if (!src) {
		tap_skip(tag, "mmap of the 9p file failed");
		return;
	}
	reset_blob();
	c0 = counter("commits");
	fd = open(BLOB, O_WRONLY);
	if (pwrite(fd, data + 7, 2000, 0) != 2000 || pipe(bp) || pipe(gp) || pipe(ap))
		return;
	fflush(stdout);
	b = fork();
	if (!b) {
		struct iovec v = { src, len };
		int r = pwritev(fd, &v, 1, 2000) == (ssize_t)len ? 0 : errno;

		put(bp[1], &r, sizeof(r));
		_exit(0);
	}
	a = fork();
	if (!a) {
		int r;

		get(gp[0], &ch, 1);
		r = pwrite(fd, data + 3, 100, 0) == 100 ? 0 : errno;
		put(ap[1], &r, sizeof(r));
		for (;;)
			pause();
	}
	bi = wait_inside(b, SYS_pwritev, bp[0]);
	put(gp[1], "g", 1);
	ai = bi == 1 ? wait_inside(a, SYS_pwrite64, ap[0]) : 0;
	kill(a, SIGKILL);
	reaped = reap_within(a, 20000, &st);
	/* B still in its write after A died: A never had the mutex */
	conclusive = bi == 1 && ai == 1 && still_inside(b, SYS_pwritev, bp[0]);
	get(bp[0], &br, sizeof(br));
	waitpid(b, &stb, 0);
	s = fsync(fd) ? errno : 0;
	close(fd);
	k = counter("commits") - c0;
	full = slow_expect(data + 7, 2000, off, len);
	tap_result(reaped, "%s the killed waiter is reaped within 20 s", tag);
	tap_is_long(br, 0, "[mutex, EINTR] the mutex holder's write succeeds");
	if (conclusive) {
		tap_result(!s && k == 1 && stored_is(full, 2000 + len),
			   "[mutex, EINTR] a writer killed waiting for the mutex abandons nothing: "
			   "fsync %s, commits +%ld", en(s), k);
	} else {
		printf("# %s the order was not reached (holder %d, waiter %d): the waiter may have "
		       "written\n", tag, bi, ai);
		tap_result((!s && k == 1 && stored_is(full, 2000 + len)) ||
			   (s == ECANCELED && !k && stored_base()),
			   "[mutex, EINTR] fsync %s, commits +%ld: the waiter's write was abandoned "
			   "or never made", en(s), k);
	}
	free(full);
	munmap(src, len);
	close(bp[0]);
	close(bp[1]);
	close(gp[0]);
	close(gp[1]);
	close(ap[0]);
	close(ap[1]);
}

/*
 * Child A writes 2000 bytes (the last write) and waits; child B starts a
 * slow write after them; while B holds the mutex in a page fault, A is
 * killed. A must die at once. B's write, under way at A's death, counts as
 * later when it completes: then nothing is abandoned.
 */
static void case_last_writer_killed_under_mutex(void)
{
	const char *tag = "[mutex, last writer killed]";
	size_t len = slow_len(2 * MIB);
	unsigned char *src;
	int fd, bp[2], ap[2], st, stb, bi, held, s, br = -1, ar = -1, reaped;
	long c0, k;
	off_t off;
	pid_t a, b;

	if (no_slow) {
		tap_skip(tag, no_slow);
		return;
	}
	src = slow_map(len, &off);
	if (!src) {
		tap_skip(tag, "mmap of the 9p file failed");
		return;
	}
	reset_blob();
	c0 = counter("commits");
	fd = open(BLOB, O_WRONLY);
	if (pipe(bp) || pipe(ap))
		return;
	fflush(stdout);
	a = fork();
	if (!a) {
		int r = pwrite(fd, data + 7, 2000, 0) == 2000 ? 0 : errno;

		put(ap[1], &r, sizeof(r));
		for (;;)
			pause();
	}
	get(ap[0], &ar, sizeof(ar));
	b = fork();
	if (!b) {
		struct iovec v = { src, len };
		int r = pwritev(fd, &v, 1, 2000) == (ssize_t)len ? 0 : errno;

		put(bp[1], &r, sizeof(r));
		_exit(0);
	}
	bi = wait_inside(b, SYS_pwritev, bp[0]);
	kill(a, SIGKILL);
	reaped = reap_within(a, 20000, &st);
	held = bi == 1 && still_inside(b, SYS_pwritev, bp[0]);
	get(bp[0], &br, sizeof(br));
	waitpid(b, &stb, 0);
	s = fsync(fd) ? errno : 0;
	close(fd);
	k = counter("commits") - c0;
	tap_is_long(ar, 0, "[mutex, last writer killed] A's write succeeds");
	tap_result(reaped, "%s A is reaped within 20 s", tag);
	if (!held) {
		printf("# %s B's write was over before A was reaped: the order was not reached\n",
		       tag);
		tap_result((s == ECANCELED && !k && stored_base()) || (!s && k == 1),
			   "%s fsync %s, commits +%ld", tag, en(s), k);
	} else {
		tap_result(1, "%s A died while B still held the mutex (no wait for it)", tag);
		tap_result(br == 0 || br == ECANCELED, "%s B's write, in flight at A's death: %s",
			   tag, en(br));
		if (br == 0) {
			/* the docs: a write under way at the death that completes counts as later */
			tap_result(!s && k == 1, "%s B's write completed after A's death, so B wrote "
				   "last: fsync %s, commits +%ld", tag, en(s), k);
		} else {
			tap_is_long(s, ECANCELED, "[mutex, last writer killed] the abandon happens "
				    "at the next holder's fsync: ECANCELED");
			tap_result(!k && stored_base(),
				   "%s A's 2000 bytes are not committed (commits +%ld)", tag, k);
		}
	}
	munmap(src, len);
	close(bp[0]);
	close(bp[1]);
	close(ap[0]);
	close(ap[1]);
}

/* ==== 7: execve(2) ==== */

/*
 * A child opens the blob (@cloexec or not), writes 2000 bytes and execs
 * this program: "--exec-fsync" calls fsync(2) on the descriptor and reports;
 * "--exec-pause" reports and waits to be killed.
 */
static void case_exec(int cloexec, int then_fsync)
{
	const char *tag = then_fsync ? "[execve, then fsync]" :
			  cloexec ? "[execve, O_CLOEXEC, then SIGKILL]" : "[execve, then SIGKILL]";
	int rp[2], st, e = -1;
	long c0, k1, k2, ref0;
	char ch = 0;
	pid_t pid;

	reset_blob();
	c0 = counter("commits");
	ref0 = refcnt();
	if (pipe(rp))
		return;
	fflush(stdout);
	pid = fork();
	if (!pid) {
		int fd = open(BLOB, O_WRONLY | (cloexec ? O_CLOEXEC : 0));
		char fds[16], rps[16];

		if (pwrite(fd, data + 7, 2000, 0) != 2000)
			_exit(90);
		snprintf(fds, sizeof(fds), "%d", fd);
		snprintf(rps, sizeof(rps), "%d", rp[1]);
		if (then_fsync)
			execl("/proc/self/exe", "extra_configfs_attack", "--exec-fsync", fds, rps,
			      (char *)NULL);
		else
			execl("/proc/self/exe", "extra_configfs_attack", "--exec-pause", rps,
			      (char *)NULL);
		_exit(91);
	}
	close(rp[1]);
	if (then_fsync) {
		if (get(rp[0], &e, sizeof(e)))
			e = -1;
	} else {
		if (!get(rp[0], &ch, 1))
			e = 0;
	}
	k1 = counter("commits") - c0;
	if (!then_fsync)
		kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	wait_released(ref0);
	k2 = counter("commits") - c0;
	if (then_fsync) {
		tap_is_long(e, 0, "[execve, then fsync] the new program's fsync returns 0");
		tap_result(k1 == 1 && k2 == 1 && stored_is(data + 7, 2000),
			   "%s one commit, of the 2000 bytes (+%ld, +%ld)", tag, k1, k2);
	} else if (cloexec) {
		tap_result(!e && k1 == 1, "%s the close-on-exec commits before the new program "
			   "runs (commits +%ld)", tag, k1);
		tap_result(k2 == 1 && stored_is(data + 7, 2000), "%s the kill changes nothing "
			   "(commits +%ld)", tag, k2);
	} else {
		tap_result(!e && !k1, "%s the descriptor survives the exec, nothing committed yet",
			   tag);
		tap_result(WIFSIGNALED(st) && !k2 && stored_base(), "%s the same thread group "
			   "wrote last and is killed: abandoned (commits +%ld)", tag, k2);
	}
	close(rp[0]);
}

/* ==== 8: io_uring writes in flight at a SIGKILL ==== */

#define UCH	(16 * KIB)
#define UN	32

static void case_uring_killed(int keep_fd)
{
	const char *tag = keep_fd ? "[io_uring, killed]" :
			  "[io_uring, descriptor closed, killed]";
	int rp[2], st, rel;
	long c0, k, ref0, n;
	pid_t pid;
	char ch = 0;

	reset_blob();
	c0 = counter("commits");
	ref0 = refcnt();
	if (pipe(rp))
		return;
	fflush(stdout);
	pid = fork();
	if (!pid) {
		struct io_uring ring;
		struct io_uring_cqe *cqe;
		int fd = open(BLOB, O_WRONLY), i;

		if (fd < 0 || io_uring_queue_init(64, &ring, 0))
			_exit(90);
		for (i = 0; i < UN; i++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

			io_uring_prep_write(sqe, fd, data + i * UCH, UCH, (long long)i * UCH);
			sqe->user_data = i;
		}
		if (io_uring_submit(&ring) != UN)
			_exit(91);
		if (!keep_fd)
			close(fd);
		if (io_uring_wait_cqe(&ring, &cqe) || cqe->res != (int)UCH)
			_exit(92);
		put(rp[1], "r", 1);
		for (;;)
			pause();
	}
	close(rp[1]);
	if (get(rp[0], &ch, 1))
		ch = 0;
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	rel = wait_released(ref0);
	k = counter("commits") - c0;
	tap_result(ch == 'r' && rel, "%s a write completed before the kill; the file is "
		   "released afterwards", tag);
	if (keep_fd) {
		tap_result(!k && stored_base(), "%s abandoned: nothing committed (commits +%ld)", tag,
			   k);
	} else {
		n = stored_prefix(UCH);
		tap_result(k == 1 && n >= (long)UCH && n <= (long)(UN * UCH),
			   "%s no descriptor was closed by the death: the writes made are committed "
			   "once, in order (commits +%ld, %ld bytes)", tag, k, n);
	}
	close(rp[0]);
}

/* ==== 9: AIO ==== */

static void case_aio(int mode)
{
	static const char *const tags[] = { "[aio, then _exit(0)]", "[aio, then SIGKILL]",
					    "[aio with IOCB_CMD_FSYNC, then SIGKILL]" };
	const char *tag = tags[mode];
	int rp[2], st;
	long c0, k, ref0;
	pid_t pid;
	char ch = 0;

	reset_blob();
	c0 = counter("commits");
	ref0 = refcnt();
	if (pipe(rp))
		return;
	fflush(stdout);
	pid = fork();
	if (!pid) {
		aio_context_t ctx = 0;
		struct iocb cb[9], *p[9];
		int fd = open(BLOB, O_WRONLY), i, n = 8;

		if (fd < 0 || syscall(SYS_io_setup, 16, &ctx))
			_exit(90);
		memset(cb, 0, sizeof(cb));
		for (i = 0; i < 8; i++) {
			cb[i].aio_lio_opcode = IOCB_CMD_PWRITE;
			cb[i].aio_fildes = fd;
			cb[i].aio_buf = (unsigned long)(data + i * 4096);
			cb[i].aio_nbytes = 4096;
			cb[i].aio_offset = i * 4096;
			p[i] = &cb[i];
		}
		if (mode == 2) {
			cb[8].aio_lio_opcode = IOCB_CMD_FSYNC;
			cb[8].aio_fildes = fd;
			p[8] = &cb[8];
			n = 9;
		}
		if (syscall(SYS_io_submit, ctx, n, p) != n)
			_exit(91);
		if (!mode)
			_exit(0);
		put(rp[1], "r", 1);
		for (;;)
			pause();
	}
	close(rp[1]);
	if (mode && get(rp[0], &ch, 1))
		ch = 0;
	if (mode)
		kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	tap_result(wait_released(ref0) && (mode ? ch == 'r' : WIFEXITED(st) && !WEXITSTATUS(st)),
		   "%s the child submitted its writes; the file is released", tag);
	k = counter("commits") - c0;
	if (mode == 0)
		tap_result(k == 1 && stored_is(data, 8 * 4096), "%s committed at the release "
			   "(commits +%ld)", tag, k);
	else if (mode == 1)
		tap_result(!k && stored_base(), "%s abandoned (commits +%ld)", tag, k);
	else
		tap_result((k == 1 && stored_is(data, 8 * 4096)) || (!k && stored_base()),
			   "%s the fsync in flight committed all of it, or the kill abandoned it "
			   "(commits +%ld)", tag, k);
	close(rp[0]);
}

/* ==== 10: vfork(2), CLONE_FILES, pidfd_getfd(2) ==== */

static pid_t __attribute__((noinline)) vfork_writer(int fd, int die)
{
	pid_t pid = vfork();

	if (!pid) {
		syscall(SYS_pwrite64, fd, data + 1000, 1000, 1000);
		if (die)
			syscall(SYS_kill, syscall(SYS_getpid), SIGKILL);
		_exit(0);
	}
	return pid;
}

static void case_vfork(int die)
{
	const char *tag = die ? "[vfork, child killed]" : "[vfork, child exits]";
	int fd, w, s, w2 = 0, st = 0, cl;
	long c0, k1, k2;
	pid_t pid;

	reset_blob();
	c0 = counter("commits");
	fd = open(BLOB, O_WRONLY);
	w = pwrite(fd, data, 1000, 0) == 1000 ? 0 : errno;
	fflush(stdout);
	pid = vfork_writer(fd, die);
	waitpid(pid, &st, 0);
	k1 = counter("commits") - c0;
	s = fsync(fd) ? errno : 0;
	if (s)
		w2 = ERR(write(fd, data, 10));
	cl = close(fd) ? errno : 0;
	k2 = counter("commits") - c0;
	tap_result(!w && !k1 && !cl, "%s the child's end commits nothing while the parent holds "
		   "the file (commits +%ld)", tag, k1);
	if (die) {
		tap_result(WIFSIGNALED(st) && s == ECANCELED && w2 == ECANCELED,
			   "%s it wrote last: the parent's fsync and write return %s, %s", tag, en(s),
			   en(w2));
		tap_result(!k2 && stored_base(), "%s nothing is committed (commits +%ld)", tag, k2);
	} else {
		tap_result(WIFEXITED(st) && !s && k2 == 1 && stored_is(data, 2000),
			   "%s the parent's fsync commits both writes: %s, commits +%ld", tag, en(s),
			   k2);
	}
}

static void case_clone_files(void)
{
	const char *tag = "[CLONE_FILES child killed]";
	int fd, rp[2], st, s, r = -1, cl;
	long c0, k1, k2;
	pid_t pid;

	reset_blob();
	c0 = counter("commits");
	fd = open(BLOB, O_WRONLY);
	if (pipe(rp))
		return;
	fflush(stdout);
	pid = syscall(SYS_clone, CLONE_FILES | SIGCHLD, 0, NULL, NULL, 0);
	if (!pid) {
		r = pwrite(fd, data, 3000, 0) == 3000 ? 0 : errno;
		put(rp[1], &r, sizeof(r));
		for (;;)
			pause();
	}
	get(rp[0], &r, sizeof(r));
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	k1 = counter("commits") - c0;
	s = fsync(fd) ? errno : 0;
	cl = close(fd) ? errno : 0;
	k2 = counter("commits") - c0;
	tap_result(!r && WIFSIGNALED(st) && !k1, "%s it wrote 3000 bytes and was killed", tag);
	tap_result(!s && !cl && k2 == 1 && stored_is(data, 3000),
		   "%s its descriptor table lives on: the parent's fsync commits them (%s, "
		   "commits +%ld)", tag, en(s), k2);
	close(rp[0]);
	close(rp[1]);
}

static void case_pidfd_race(void)
{
	const char *tag = "[pidfd_getfd racing the death]";
	int fd, rp[2], st, s1, w1, s2 = -1, g, ge, pfd, r = -1;
	long c0, k;
	pid_t pid;

	reset_blob();
	c0 = counter("commits");
	fd = open(BLOB, O_WRONLY);
	if (pipe(rp))
		return;
	fflush(stdout);
	pid = fork();
	if (!pid) {
		r = pwrite(fd, data, 3000, 0) == 3000 ? 0 : errno;
		put(rp[1], &r, sizeof(r));
		for (;;)
			pause();
	}
	get(rp[0], &r, sizeof(r));
	pfd = syscall(SYS_pidfd_open, pid, 0);
	kill(pid, SIGKILL);
	g = syscall(SYS_pidfd_getfd, pfd, fd, 0);
	ge = g < 0 ? errno : 0;
	waitpid(pid, &st, 0);
	s1 = fsync(fd) ? errno : 0;
	w1 = ERR(write(fd, data, 10));
	if (g >= 0) {
		s2 = fsync(g) ? errno : 0;
		close(g);
	}
	close(fd);
	close(pfd);
	k = counter("commits") - c0;
	printf("# %s pidfd_getfd after the kill: %s\n", tag, en(ge));
	tap_is_long(r, 0, "[pidfd_getfd racing the death] the child's write succeeds");
	tap_result(s1 == ECANCELED && w1 == ECANCELED, "%s the parent's fsync and write: %s, %s",
		   tag, en(s1), en(w1));
	tap_result(g < 0 || s2 == ECANCELED, "%s the taken descriptor's fsync: %s", tag,
		   g < 0 ? "none taken" : en(s2));
	tap_result(!k && stored_base(), "%s nothing is committed (commits +%ld)", tag, k);
	close(rp[0]);
	close(rp[1]);
}

/* ==== 11: readers racing commits and read_mode changes ==== */

#define RS	3000
#define RB	20000
#define NREADS	300

static atomic_int race_stop;

static void *race_committer(void *arg)
{
	long *n = arg;

	while (!atomic_load(&race_stop)) {
		blob_commit(BLOB, data, RS, RS);
		blob_commit(BLOB, data + 1, RB, RB);
		(*n)++;
	}
	return NULL;
}

static void *race_moder(void *arg)
{
	static const char *const modes[] = { "shrink", "overclaim", "normal" };
	long *n = arg;
	int i = 0;

	while (!atomic_load(&race_stop)) {
		write_str(ITEM "/read_mode", modes[i++ % 3]);
		(*n)++;
	}
	return NULL;
}

static void case_readers_race(void)
{
	static unsigned char buf[RB + 4096];
	long commits = 0, flips = 0, bad = 0, again = 0, eio = 0, whole = 0, part = 0;
	pthread_t c, m;
	int i;

	reset_blob();
	atomic_store(&race_stop, 0);
	pthread_create(&c, NULL, race_committer, &commits);
	pthread_create(&m, NULL, race_moder, &flips);
	for (i = 0; i < NREADS; i++) {
		int fd = open(BLOB, O_RDONLY);
		ssize_t r = read(fd, buf, 100), n;

		if (r < 0) {
			if (errno == EAGAIN)
				again++;
			else if (errno == EIO)
				eio++;
			else if (bad++ < 5)
				printf("# read: %s\n", en(errno));
			close(fd);
			continue;
		}
		n = r;
		while (r > 0 && n < (ssize_t)sizeof(buf)) {
			r = read(fd, buf + n, sizeof(buf) - n);
			if (r > 0)
				n += r;
		}
		close(fd);
		/*
		 * normal: the small blob, the big one (or the small one after a
		 * big size); shrink: half of what fits; never a mix.
		 */
		if (r < 0 || !(((n == RS || n == RS / 2) && !memcmp(buf, data, n)) ||
			       ((n == RB || n == RB / 2 || n == RS) && !memcmp(buf, data + 1, n)))) {
			if (bad++ < 5)
				printf("# a read took %zd bytes that no version begins with (%s)\n", n,
				       r < 0 ? en(errno) : "OK");
		} else if (n == RS || n == RB) {
			whole++;
		} else {
			part++;
		}
	}
	atomic_store(&race_stop, 1);
	pthread_join(c, NULL);
	pthread_join(m, NULL);
	write_str(ITEM "/read_mode", "normal");
	tap_result(!bad, "[readers] %d reads racing %ld pairs of commits and %ld read_mode "
		   "changes: %ld whole, %ld halves, %ld EAGAIN, %ld EIO, %ld otherwise", NREADS,
		   commits, flips, whole, part, again, eio, bad);
}

/* ==== 12: rmdir(2) racing fsync(2) ==== */

#define RMAX	4096

struct rmrace {
	int fd;
	atomic_int n, stop;
	int res[RMAX];
	int werr;
};

static void *rm_syncer(void *arg)
{
	struct rmrace *r = arg;

	while (!atomic_load(&r->stop) && atomic_load(&r->n) < RMAX) {
		int i = atomic_load(&r->n);

		if (pwrite(r->fd, data, 100, 0) != 100 && !r->werr)
			r->werr = errno;
		r->res[i] = fsync(r->fd) ? errno : 0;
		atomic_store(&r->n, i + 1);
	}
	return NULL;
}

static void case_rmdir_race(void)
{
	static struct rmrace r;
	int i, n, rm, okseen = 0, gone = 0, mono = 1, other = 0, s, cl;
	pthread_t t;

	memset(&r, 0, sizeof(r));
	rmdir(RM_ITEM);
	if (mkdir(RM_ITEM, 0755)) {
		tap_result(0, "[rmdir] mkdir " RM_ITEM);
		return;
	}
	r.fd = open(RM_ITEM "/blob", O_WRONLY);
	pthread_create(&t, NULL, rm_syncer, &r);
	while (atomic_load(&r.n) < 5)
		usleep(1000);
	rm = rmdir(RM_ITEM) ? errno : 0;
	n = atomic_load(&r.n);
	while (atomic_load(&r.n) < n + 5 && atomic_load(&r.n) < RMAX)
		usleep(1000);
	atomic_store(&r.stop, 1);
	pthread_join(t, NULL);
	s = fsync(r.fd) ? errno : 0;
	cl = close(r.fd) ? errno : 0;
	n = atomic_load(&r.n);
	for (i = 0; i < n; i++) {
		if (!r.res[i]) {
			okseen++;
			mono &= !gone;
		} else if (r.res[i] == ENOENT) {
			gone++;
		} else {
			other++;
		}
	}
	tap_is_long(rm, 0, "[rmdir] rmdir with fsyncs racing it succeeds");
	tap_result(okseen && gone && mono && !other,
		   "[rmdir] %d fsyncs: %d returned 0, then %d ENOENT, %d otherwise, in that order%s",
		   n, okseen, gone, other, mono ? "" : " (NOT)");
	tap_result(s == ENOENT && !cl, "[rmdir] then fsync returns %s and close %s", en(s), en(cl));
	if (!access(RM_ITEM, F_OK))
		rmdir(RM_ITEM);
}

/* ==== 13: a memory cgroup ==== */

#define CG	"/sys/fs/cgroup"
#define CGX	CG "/lk45_cfs_attack"
#define CGMAX	(2 * MIB)

static int cg_mounted, cg_enabled;

static long cg_oom_kills(void)
{
	char buf[1024] = "", *p;
	int fd = open(CGX "/memory.events", O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return -1;
	p = strstr(buf, "oom_kill ");
	return p ? strtol(p + 9, NULL, 10) : -1;
}

static const char *cg_setup(void)
{
	char v[32];

	if (access(CG "/cgroup.controllers", F_OK)) {
		if (mount("none", CG, "cgroup2", 0, NULL))
			return "cannot mount cgroup2 at " CG;
		cg_mounted = 1;
	}
	if (!has_word(CG "/cgroup.controllers", "memory"))
		return "no memory controller in cgroup2";
	if (!has_word(CG "/cgroup.subtree_control", "memory")) {
		if (write_str(CG "/cgroup.subtree_control", "+memory"))
			return "cannot enable +memory";
		cg_enabled = 1;
	}
	rmdir(CGX);
	if (mkdir(CGX, 0755))
		return "cannot mkdir " CGX;
	snprintf(v, sizeof(v), "%lu", CGMAX);
	if (write_str(CGX "/memory.max", v) || read_long(CGX "/memory.max") != (long)CGMAX)
		return "cannot set memory.max";
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

struct cg_report {
	int ready, read_err, w_err, again, fsync1, w2;
	long fail_at;
};

static void case_memcg(void)
{
	const char *tag = "[memcg]";
	struct cg_report *r;
	size_t lim = max_blob && max_blob < 4 * MIB ? max_blob : 4 * MIB, second = CGMAX * 5 / 8;
	int fd1, fd2, gp[2], st, s1, s2, c1, c2, moved;
	long c0, k, kills0, kills;
	const char *why;
	char pid_s[16];
	pid_t pid;

	if (max_blob && max_blob < 3 * MIB) {
		tap_skip(tag, "cb_max_size under 3 MiB");
		return;
	}
	why = cg_setup();
	if (why) {
		tap_skip(tag, why);
		cg_teardown();
		return;
	}
	r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (r == MAP_FAILED) {
		cg_teardown();
		return;
	}
	memset(r, 0, sizeof(*r));
	r->w_err = r->again = r->fsync1 = r->w2 = r->read_err = -1;
	/* a blob larger than memory.max, committed outside the cgroup */
	blob_commit(BLOB, data, 3 * MIB, MIB);
	c0 = counter("commits");
	kills0 = cg_oom_kills();
	fd1 = open(BLOB, O_WRONLY);
	fd2 = open(BLOB, O_WRONLY);
	if (pipe(gp))
		return;
	fflush(stdout);
	pid = fork();
	if (!pid) {
		volatile char stack[64 * 1024];
		size_t off;
		char ch;
		int rfd, err = 0;

		memset((char *)stack, 1, sizeof(stack));
		get(gp[0], &ch, 1);	/* moved into the cgroup */
		rfd = open(BLOB, O_RDONLY);
		r->read_err = read(rfd, &ch, 1) == 1 ? 0 : errno;
		close(rfd);
		for (off = 0; off + 64 * KIB <= lim; off += 64 * KIB)
			if (pwrite(fd1, data + off % (DATA_SIZE - 64 * KIB), 64 * KIB, off) !=
			    (ssize_t)(64 * KIB)) {
				err = errno;
				break;
			}
		r->w_err = err;
		r->fail_at = off;
		r->again = ERR(pwrite(fd1, data, 1, 0));
		r->fsync1 = fsync(fd1) ? errno : 0;
		/* the abandoned buffer was given back: this fits */
		r->w2 = pwrite(fd2, data, second, 0) == (ssize_t)second ? 0 : errno;
		r->ready = 1;
		_exit(0);
	}
	snprintf(pid_s, sizeof(pid_s), "%d", (int)pid);
	moved = !write_str(CGX "/cgroup.procs", pid_s);
	put(gp[1], "g", 1);
	waitpid(pid, &st, 0);
	kills = cg_oom_kills();
	s1 = fsync(fd1) ? errno : 0;
	s2 = fsync(fd2) ? errno : 0;
	c1 = close(fd1) ? errno : 0;
	c2 = close(fd2) ? errno : 0;
	k = counter("commits") - c0;
	printf("# %s the upload failed at %ld bytes (memory.max %lu)\n", tag, r->fail_at, CGMAX);
	tap_result(moved && WIFEXITED(st) && r->ready && kills == kills0,
		   "%s the child ran in the cgroup and was not OOM-killed (oom_kill %ld -> %ld)",
		   tag, kills0, kills);
	tap_is_long(r->read_err, ENOMEM, "[memcg] reading a 3 MiB blob inside 2 MiB: ENOMEM");
	tap_result(r->w_err == ENOMEM && r->fail_at < (long)lim,
		   "%s the growing upload fails with %s before cb_max_size", tag, en(r->w_err));
	tap_result(r->again == ENOMEM && r->fsync1 == ENOMEM && s1 == ENOMEM,
		   "%s then write, fsync and the parent's fsync return %s, %s, %s", tag,
		   en(r->again), en(r->fsync1), en(s1));
	tap_is_long(r->w2, 0, "[memcg] a fresh upload of 1.25 MiB in the cgroup succeeds (the "
		    "abandoned buffer was uncharged)");
	tap_result(!s2 && !c1 && !c2 && k == 1 && stored_is(data, second),
		   "%s the parent commits only the fresh upload (commits +%ld)", tag, k);
	munmap(r, sizeof(*r));
	close(gp[0]);
	close(gp[1]);
	cg_teardown();
}

/* ==== setup ==== */

static int setup(void)
{
	char m[64] = "";

	if (system("modprobe configfs 2>/dev/null; mountpoint -q /sys/kernel/config"))
		mounted_configfs = !system("mount -t configfs none /sys/kernel/config");
	if (access("/sys/module/" SAMPLE, F_OK)) {
		if (system("insmod /lib/modules/$(uname -r)/extra/" SAMPLE ".ko max_blob="
			   OWN_MAX_BLOB " 2>/dev/null || modprobe " SAMPLE " max_blob=" OWN_MAX_BLOB))
			return -1;
		loaded_sample = 1;
	}
	max_blob = read_long(PARAM);
	snprintf(m, sizeof(m), "%zu", max_blob);
	printf("# cb_max_size of blob: %s (%s)\n", m, loaded_sample ? "loaded here" : "as loaded");
	if (!access(ITEM, F_OK))
		rmdir(ITEM);
	if (mkdir(ITEM, 0755))
		return -1;
	return reset_blob();
}

static void teardown(void)
{
	int i;

	write_str(ITEM "/read_mode", "normal");
	tap_is_long(rmdir(ITEM) ? errno : 0, 0, "rmdir of the item");
	/* an io-wq worker may hold a file of it for a moment yet */
	if (loaded_sample)
		for (i = 0; i < 50 && system("rmmod " SAMPLE " 2>/dev/null"); i++)
			usleep(200000);
	if (mounted_configfs)
		umount("/sys/kernel/config");
}

/* this program run again by execve(2) from a case */
static int exec_helper(int argc, char **argv)
{
	int e, fd, rp;

	if (argc == 4 && !strcmp(argv[1], "--exec-fsync")) {
		fd = atoi(argv[2]);
		rp = atoi(argv[3]);
		e = fsync(fd) ? errno : 0;
		put(rp, &e, sizeof(e));
		_exit(0);
	}
	if (argc == 3 && !strcmp(argv[1], "--exec-pause")) {
		rp = atoi(argv[2]);
		put(rp, "r", 1);
		for (;;)
			pause();
	}
	return -1;
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc > 1)
		return exec_helper(argc, argv) ? 2 : 0;
	setvbuf(stdout, NULL, _IOLBF, 0);
	crc_init();
	data = malloc(DATA_SIZE);
	if (!data)
		return 1;
	blob_fill(data, DATA_SIZE, 23);
	for (i = 0; i < sizeof(base); i++)
		base[i] = 0xc3 ^ (unsigned char)(i * 5);
	if (setup()) {
		tap_result(0, "load configfs and " SAMPLE ", mkdir " ITEM);
		return tap_done();
	}
	if (max_blob && max_blob < 4 * MIB) {
		tap_skip("every case", "cb_max_size under 4 MiB: load the sample with a larger "
			 "max_blob");
		teardown();
		return tap_done();
	}
	no_slow = slow_setup();
	if (!no_slow && access("/proc/self/syscall", R_OK))
		no_slow = "no /proc/PID/syscall";

	case_bounds();
	case_rdwr();
	case_threads();
	case_group_killed();
	case_killed_mid_write(0);
	case_killed_mid_write(1);
	case_idle_thread_killed();
	case_exit_mid_write(0);
	case_exit_mid_write(1);
	case_eintr_on_mutex();
	case_last_writer_killed_under_mutex();
	case_exec(0, 1);
	case_exec(0, 0);
	case_exec(1, 0);
	case_uring_killed(1);
	case_uring_killed(0);
	case_aio(0);
	case_aio(1);
	case_aio(2);
	case_vfork(0);
	case_vfork(1);
	case_clone_files();
	case_pidfd_race();
	case_readers_race();
	case_rmdir_race();
	case_memcg();

	teardown();
	if (slow_fd >= 0)
		close(slow_fd);
	free(data);
	return tap_done();
}
