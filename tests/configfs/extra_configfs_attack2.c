// SPDX-License-Identifier: GPL-2.0
// bench-ldlibs: -luring -lpthread
/*
 * More adversarial cases against the configfs binary attribute contract
 * (Documentation/filesystems/configfs.rst, "Reading and writing a binary
 * attribute"), through the lk45_blobstore sample on an item of its own
 * ("attack2"). Nothing is left to timing where an order can be forced: a
 * child's write stalls on a userfaultfd page whose descriptor the parent
 * took with pidfd_getfd(2), so the parent knows the write is inside
 * configfs with the open file's mutex held, and then cuts it short
 * (SIGKILL, exit_group(2), execve(2)) or lets it go (UFFDIO_COPY):
 *
 *  - writes stalled at the blob's end, inside it with nothing copied,
 *    inside it after overwriting, through write(2), AIO and io_uring;
 *  - faults answered later: the write then counts, and so does its kill;
 *  - a last writer killed while another process's write holds the mutex,
 *    that write then completing or cut short;
 *  - a writer killed while its thread waits in fsync(2), with and without
 *    its descriptor closed first; a writer that closes its descriptor
 *    while its own write stalls;
 *  - ptrace: SIGKILL at the entry and at the exit of close(2), and in the
 *    PTRACE_EVENT_EXIT stop of a SIGKILL;
 *  - vfork(2) children writing from the parent's userfaultfd memory;
 *  - readers racing commits and read_mode flips that include "empty".
 */
#define _GNU_SOURCE
#include <liburing.h>
#include <linux/aio_abi.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "blob.h"
#include "tap.h"
#include "attack_util.h"

#define ITEM		STORE_ROOT "/attack2"
#define BLOB		ITEM "/blob"
#define SAMPLE		"lk45_blobstore"
#define PG		4096
#define DATA		(1 << 20)
/* the patterns each writer writes: the holder (parent), A, the staller */
#define PPAT		(data + 1111)
#define APAT		(data + 2222)
#define SPRE		(data + 3333)
/* the stalled buffer: page k of the staller's area holds SBUF[k * PG ...] */
#define SBUF		(data + 4444)
#define HOLE_AT		5000

static unsigned char *data;
static unsigned char base[1000];
static const unsigned char hole_byte[1] = { 0x5a };
static int loaded_sample, mounted_configfs;

static long counter(const char *name)
{
	return blob_counter(ITEM, name);
}

static int stored_is(const void *p, size_t len)
{
	unsigned char *got = NULL;
	long n = blob_slurp(BLOB, &got);
	int ok = n == (long)len && !memcmp(got, p, len);

	if (!ok) {
		long i = 0;

		while (n > 0 && i < n && i < (long)len && got[i] == ((const unsigned char *)p)[i])
			i++;
		printf("# the blob holds %ld bytes (want %zu), first difference at %ld\n", n, len, i);
	}
	free(got);
	return ok;
}

/* Commit the base blob; read_mode back to normal. */
static int reset_blob(void)
{
	struct upload u = blob_commit(BLOB, base, sizeof(base), sizeof(base));

	write_str(ITEM "/read_mode", "normal");
	return u.open_err || u.write_err || u.fsync_err || u.close_err ? -1 : 0;
}

static const char *death(int st)
{
	static char out[4][32];
	static int slot;
	char *o = out[slot++ % 4];

	if (WIFSIGNALED(st))
		snprintf(o, 32, "SIG%s", sigabbrev_np(WTERMSIG(st)));
	else if (WIFEXITED(st))
		snprintf(o, 32, "exit(%d)", WEXITSTATUS(st));
	else
		snprintf(o, 32, "status %#x", st);
	return o;
}

/*
 * Wait up to @ms for @pid to die and reap it; 1 when it died in time. Past
 * that, *@uf (when given) is closed first: released, a userfaultfd lets a
 * stalled fault go on, so that a task that does not die cannot hang us.
 */
static int reap_within_uf(pid_t pid, int ms, int *status, int *uf)
{
	int pfd = syscall(SYS_pidfd_open, pid, 0), in_time = 1;
	struct pollfd p = { .fd = pfd, .events = POLLIN };

	if (pfd >= 0) {
		in_time = poll(&p, 1, ms) == 1;
		close(pfd);
	}
	if (!in_time) {
		printf("# pid %d still alive after %d ms\n", (int)pid, ms);
		if (uf && *uf >= 0) {
			close(*uf);
			*uf = -1;
		}
		kill(pid, SIGKILL);
	}
	waitpid(pid, status, __WALL);
	return in_time;
}

static int reap_within(pid_t pid, int ms, int *status)
{
	return reap_within_uf(pid, ms, status, NULL);
}

static void end_child(pid_t *pid)
{
	if (*pid > 0) {
		kill(*pid, SIGKILL);
		waitpid(*pid, NULL, __WALL);
	}
	*pid = 0;
}

/* The system call task @tid sleeps in (-1 running, -2 gone). */
static long task_syscall(pid_t tid)
{
	char p[64], buf[256];
	ssize_t n;
	int fd;

	snprintf(p, sizeof(p), "/proc/%d/syscall", (int)tid);
	fd = open(p, O_RDONLY);
	n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return -2;
	buf[n] = 0;
	return strncmp(buf, "running", 7) ? strtol(buf, NULL, 10) : -1;
}

/* 1 once task @tid is seen asleep in system call @nr, within 30 s */
static int wait_inside(pid_t tid, long nr)
{
	int i;

	for (i = 0; i < 150000; i++) {
		long cur = task_syscall(tid);

		if (cur == nr)
			return 1;
		if (cur == -2)
			return 0;
		usleep(200);
	}
	return 0;
}

/* ---- userfaultfd, handled by the parent ---- */

/* Wait up to @ms for a page fault on @uf; 1 with its page in *@addr. */
static int wait_fault(int uf, unsigned long *addr, int ms)
{
	long long end = blob_now_ns() + ms * 1000000LL;

	for (;;) {
		struct pollfd p = { .fd = uf, .events = POLLIN };
		long long left = (end - blob_now_ns()) / 1000000;
		struct uffd_msg m;

		if (left < 0 || poll(&p, 1, (int)left) != 1)
			return 0;
		if (read(uf, &m, sizeof(m)) == sizeof(m) && m.event == UFFD_EVENT_PAGEFAULT) {
			*addr = m.arg.pagefault.address & ~(unsigned long)(PG - 1);
			return 1;
		}
	}
}

/* Fill the missing page at @addr of the area at @area with its SBUF page. */
static void answer(int uf, unsigned long area, unsigned long addr)
{
	static unsigned char page[PG] __attribute__((aligned(PG)));
	struct uffdio_copy cp = { .dst = addr, .src = (unsigned long)page, .len = PG };

	memcpy(page, SBUF + (addr - area), PG);
	if (ioctl(uf, UFFDIO_COPY, &cp) && errno == EEXIST) {
		struct uffdio_range r = { .start = addr, .len = PG };

		ioctl(uf, UFFDIO_WAKE, &r);
	}
}

/* Answer the fault at @addr and every later one until @done is readable: 0. */
static int resolve(int uf, unsigned long area, unsigned long addr, int done)
{
	int i;

	answer(uf, area, addr);
	for (i = 0; i < 64; i++) {
		struct pollfd p[2] = { { .fd = uf, .events = POLLIN },
				       { .fd = done, .events = POLLIN } };
		struct uffd_msg m;

		if (poll(p, 2, 20000) <= 0)
			return -1;
		if (p[1].revents)
			return 0;
		if (read(uf, &m, sizeof(m)) == sizeof(m) && m.event == UFFD_EVENT_PAGEFAULT)
			answer(uf, area, m.arg.pagefault.address & ~(unsigned long)(PG - 1));
	}
	return -1;
}

/* ==== stalled writes: one table of cases ==== */

enum { IO_SYNC, IO_AIO, IO_URING };
enum { END_KILL, END_EXIT, END_EXEC, END_COPY, END_COPY_KILL };
enum { B_BASE, B_PRE, B_ALL, B_HOLE };

/*
 * The parent (the holder) opens the blob and writes p_pre bytes of PPAT at
 * 0; child A, when a_pre, writes a_pre bytes of APAT at 0 and waits; the
 * staller writes s_pre bytes of SPRE at 0, then @len bytes at @pos from a
 * buffer whose first @present bytes are in memory and whose next pages are
 * missing (userfaultfd). Once that write has stalled: A's thread calls
 * fsync(2) (a_fsync) and is seen waiting, A closes its descriptor
 * (a_close), A is killed; the staller closes its descriptor (s_close);
 * then @end ends the staller: SIGKILL, exit_group(0), an execve(2) of this
 * program that calls fsync(2) on the inherited descriptor, or the faults
 * are answered and, once its write returned, exit_group(0) or SIGKILL.
 * The holder then calls fsync(2) (and writes when it failed), closes.
 */
struct spec {
	const char *tag;
	int io;
	size_t p_pre, a_pre, s_pre;
	long pos;
	size_t len, present;
	int a_fsync, a_close, s_close, end;
	int fsync_err, alt_err;	/* the holder's fsync: errno; alt_err allowed too */
	int blob;		/* what is stored at the end */
};

static const struct spec specs[] = {
	/* (a) a write that starts exactly at the blob's end */
	{ "[end, nothing copied, the holder wrote last, SIGKILL]", IO_SYNC,
	  .p_pre = 2000, .pos = 2000, .len = 1000, .end = END_KILL, .blob = B_PRE },
	{ "[end, 2000 bytes copied past it, the holder wrote last, SIGKILL; then a write "
	  "leaves a hole over them]", IO_SYNC,
	  .p_pre = 2000, .pos = 2000, .len = 6000, .present = 2000, .end = END_KILL, .blob = B_HOLE },
	/* (a) inside the blob, nothing copied: EINTR, no abandon */
	{ "[inside, nothing copied, the staller wrote last, SIGKILL]", IO_SYNC,
	  .s_pre = 8192, .pos = 4096, .len = 4096, .end = END_KILL, .fsync_err = ECANCELED,
	  .blob = B_BASE },
	{ "[inside, nothing copied, the holder wrote last, SIGKILL]", IO_SYNC,
	  .p_pre = 8192, .pos = 4096, .len = 4096, .end = END_KILL, .blob = B_PRE },
	{ "[inside, nothing copied, the staller wrote last, exit_group(0)]", IO_SYNC,
	  .s_pre = 8192, .pos = 4096, .len = 4096, .end = END_EXIT, .blob = B_PRE },
	{ "[inside, nothing copied, the staller wrote last, execve(2)]", IO_SYNC,
	  .s_pre = 8192, .pos = 4096, .len = 4096, .end = END_EXEC, .blob = B_PRE },
	/* (a) inside, after overwriting: the upload is cancelled */
	{ "[inside, 100 bytes overwritten, the holder wrote last, SIGKILL]", IO_SYNC,
	  .p_pre = 8192, .pos = 8092, .len = 200, .present = 100, .end = END_KILL,
	  .fsync_err = ECANCELED, .blob = B_BASE },
	{ "[inside, 100 bytes overwritten, the staller wrote last, SIGKILL]", IO_SYNC,
	  .s_pre = 8192, .pos = 8092, .len = 200, .present = 100, .end = END_KILL,
	  .fsync_err = ECANCELED, .blob = B_BASE },
	/* (a) AIO (io_submit(2) writes in the caller) and io_uring (an io-wq worker) */
	{ "[AIO at the end, nothing copied, the holder wrote last, SIGKILL]", IO_AIO,
	  .p_pre = 2000, .pos = 2000, .len = 1000, .end = END_KILL, .blob = B_PRE },
	{ "[AIO inside, nothing copied, the staller wrote last, exit_group(0)]", IO_AIO,
	  .s_pre = 8192, .pos = 4096, .len = 4096, .end = END_EXIT, .blob = B_PRE },
	{ "[io_uring at the end, the staller wrote last, SIGKILL]", IO_URING,
	  .s_pre = 2000, .pos = 2000, .len = 1000, .end = END_KILL, .fsync_err = ECANCELED,
	  .blob = B_BASE },
	{ "[io_uring inside, nothing copied, the holder wrote last, SIGKILL]", IO_URING,
	  .p_pre = 8192, .pos = 4096, .len = 4096, .end = END_KILL, .blob = B_PRE },
	/* (a) the faults answered later: the write completes and counts */
	{ "[io_uring at the end, two faults answered by UFFDIO_COPY, then exit_group(0)]",
	  IO_URING, .p_pre = 2000, .pos = 2000, .len = 6000, .present = 100, .end = END_COPY,
	  .blob = B_ALL },
	{ "[over and past the end, answered by UFFDIO_COPY; then SIGKILL: it wrote last]",
	  IO_SYNC, .p_pre = 3000, .pos = 1000, .len = 6000, .present = 4000,
	  .end = END_COPY_KILL, .fsync_err = ECANCELED, .blob = B_BASE },
	/* (c) closed descriptors, fsync(2) in flight */
	{ "[the staller closes its descriptor while its write stalls; answered; SIGKILL]",
	  IO_SYNC, .s_pre = 2000, .pos = 2000, .len = 1000, .s_close = 1,
	  .end = END_COPY_KILL, .blob = B_ALL },
	{ "[A wrote last, its thread waits in fsync(2) behind the stalled write, A closes "
	  "its descriptor and is killed; the staller exits]", IO_SYNC,
	  .a_pre = 2000, .pos = 2000, .len = 1000, .a_fsync = 1, .a_close = 1, .end = END_EXIT,
	  .blob = B_PRE },
	{ "[A wrote last, its thread waits in fsync(2) behind the stalled write, A is "
	  "killed; the staller exits]", IO_SYNC,
	  .a_pre = 2000, .pos = 2000, .len = 1000, .a_fsync = 1, .end = END_EXIT,
	  .fsync_err = ECANCELED, .blob = B_BASE },
	/* (f) "a write that another task had under way then, and that completes, counts as later" */
	{ "[A wrote last and is killed while the stalled write holds the mutex; that write "
	  "then completes]", IO_SYNC,
	  .a_pre = 2000, .pos = 2000, .len = 1000, .end = END_COPY, .blob = B_ALL },
	{ "[A wrote last and is killed while the stalled write holds the mutex; that write "
	  "is then cut short by exit_group(0)]", IO_SYNC,
	  .a_pre = 2000, .pos = 2000, .len = 1000, .end = END_EXIT, .fsync_err = ECANCELED,
	  .blob = B_BASE },
};

struct kid {
	unsigned long area;	/* the staller's */
	int uffd;
	_Atomic long res;	/* of the stalled write: bytes or -errno */
	int a_err, a_fd;
	_Atomic int fsync_tid;
};

static void apply(unsigned char *out, size_t *n, const unsigned char *src, size_t len, size_t pos)
{
	if (!len)
		return;
	if (pos > *n)
		memset(out + *n, 0, pos - *n);
	memcpy(out + pos, src, len);
	if (pos + len > *n)
		*n = pos + len;
}

static size_t expected(const struct spec *c, unsigned char *out)
{
	size_t n = 0;

	if (c->blob == B_BASE) {
		memcpy(out, base, sizeof(base));
		return sizeof(base);
	}
	apply(out, &n, PPAT, c->p_pre, 0);
	apply(out, &n, APAT, c->a_pre, 0);
	apply(out, &n, SPRE, c->s_pre, 0);
	if (c->blob == B_ALL)
		apply(out, &n, SBUF + PG - c->present, c->len, c->pos);
	if (c->blob == B_HOLE)
		apply(out, &n, hole_byte, 1, HOLE_AT);
	return n;
}

struct stall_arg {
	const struct spec *c;
	struct kid *k;
	int fd, done;
	unsigned char *buf;
};

static void *stall_main(void *p)
{
	struct stall_arg *s = p;
	const struct spec *c = s->c;
	long r;

	if (c->io == IO_SYNC) {
		r = pwrite(s->fd, s->buf, c->len, c->pos);
		if (r < 0)
			r = -errno;
	} else if (c->io == IO_AIO) {
		aio_context_t ctx = 0;
		struct iocb cb, *cbp = &cb;
		struct io_event ev;

		memset(&cb, 0, sizeof(cb));
		cb.aio_lio_opcode = IOCB_CMD_PWRITE;
		cb.aio_fildes = s->fd;
		cb.aio_buf = (unsigned long)s->buf;
		cb.aio_nbytes = c->len;
		cb.aio_offset = c->pos;
		if (syscall(SYS_io_setup, 4, &ctx) || syscall(SYS_io_submit, ctx, 1, &cbp) != 1 ||
		    syscall(SYS_io_getevents, ctx, 1, 1, &ev, NULL) != 1)
			r = -(errno ? errno : EIO);
		else
			r = ev.res;
	} else {
		struct io_uring ring;
		struct io_uring_cqe *cqe;

		r = -ENOSYS;
		if (!io_uring_queue_init(4, &ring, 0)) {
			io_uring_prep_write(io_uring_get_sqe(&ring), s->fd, s->buf, c->len, c->pos);
			r = io_uring_submit(&ring) != 1 || io_uring_wait_cqe(&ring, &cqe) ? -EIO :
			    cqe->res;
		}
	}
	atomic_store(&s->k->res, r);
	put(s->done, "d", 1);
	return NULL;
}

static void __attribute__((noreturn)) staller(const struct spec *c, struct kid *k, int fd,
					      int cmd, int ack, int done, int xp)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	static struct stall_arg sa;
	unsigned char *area;
	char ch, fds[16], xps[16];
	pthread_t t;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (c->s_pre && pwrite(fd, SPRE, c->s_pre, 0) != (ssize_t)c->s_pre)
		_exit(80);
	area = mmap(NULL, 3 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED)
		_exit(81);
	memcpy(area, SBUF, PG);		/* page 0 present before the range is registered */
	k->uffd = syscall(SYS_userfaultfd, O_CLOEXEC);
	reg.range.start = (unsigned long)area;
	reg.range.len = 3 * PG;
	if (k->uffd < 0 || ioctl(k->uffd, UFFDIO_API, &api) || ioctl(k->uffd, UFFDIO_REGISTER, &reg))
		_exit(82);
	k->area = (unsigned long)area;
	sa = (struct stall_arg){ c, k, fd, done, area + PG - c->present };
	if (pthread_create(&t, NULL, stall_main, &sa))
		_exit(83);
	put(ack, "u", 1);
	while (!get(cmd, &ch, 1)) {
		if (ch == 'c') {
			close(fd);
			put(ack, "c", 1);
		} else if (ch == 'x') {
			_exit(0);
		} else if (ch == 'e') {
			snprintf(fds, sizeof(fds), "%d", fd);
			snprintf(xps, sizeof(xps), "%d", xp);
			execl("/proc/self/exe", "extra_configfs_attack2", "--fsync", fds, xps,
			      (char *)NULL);
			_exit(84);
		}
	}
	for (;;)
		pause();
}

static void *a_fsync_main(void *p)
{
	struct kid *k = p;

	atomic_store(&k->fsync_tid, (int)gettid());
	fsync(k->a_fd);
	return NULL;
}

static void __attribute__((noreturn)) other_writer(const struct spec *c, struct kid *k, int fd,
						   int cmd, int ack)
{
	pthread_t t;
	char ch;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	k->a_err = pwrite(fd, APAT, c->a_pre, 0) == (ssize_t)c->a_pre ? 0 : errno;
	k->a_fd = fd;
	put(ack, "a", 1);
	while (!get(cmd, &ch, 1)) {
		if (ch == 'f') {
			if (pthread_create(&t, NULL, a_fsync_main, k))
				_exit(85);
			while (!atomic_load(&k->fsync_tid))
				usleep(100);
			put(ack, "f", 1);
		} else if (ch == 'c') {
			close(fd);
			put(ack, "c", 1);
		}
	}
	for (;;)
		pause();
}

static void run_case(const struct spec *c)
{
	static unsigned char want[65536];
	int fd = -1, uf = -1, pfd = -1, acmd[2] = { -1, -1 }, aack[2] = { -1, -1 };
	int cmd[2] = { -1, -1 }, ack[2] = { -1, -1 }, done[2] = { -1, -1 }, xp[2] = { -1, -1 };
	int stalled = 0, a_reaped = 1, a_inside = 1, s_reaped = 0, sst = 0, ast = 0, xerr = -1;
	int resolved = -1, s, w = 0, cl, hole = 0, pre = 0, dies, died_ok, i;
	unsigned long addr = 0;
	pid_t a = 0, sp = 0;
	long c0, kd, res;
	struct kid *k;
	size_t wn;
	char ch = 0;

	k = mmap(NULL, sizeof(*k), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (k == MAP_FAILED || reset_blob()) {
		tap_result(0, "%s set up: the base blob is committed", c->tag);
		return;
	}
	memset(k, 0, sizeof(*k));
	atomic_store(&k->res, -99999);
	c0 = counter("commits");
	fd = open(BLOB, O_WRONLY);
	if (c->p_pre)
		pre = pwrite(fd, PPAT, c->p_pre, 0) == (ssize_t)c->p_pre ? 0 : errno ? errno : EIO;
	fflush(stdout);
	if (c->a_pre) {
		if (pipe(acmd) || pipe(aack))
			goto out;
		a = fork();
		if (!a)
			other_writer(c, k, fd, acmd[0], aack[1]);
		close(aack[1]);
		aack[1] = -1;
		if (get(aack[0], &ch, 1) || k->a_err)
			pre = pre ?: k->a_err ?: EIO;
	}
	if (pipe(cmd) || pipe(ack) || pipe(done) || pipe(xp))
		goto out;
	sp = fork();
	if (!sp) {
		if (a) {
			close(acmd[0]);
			close(acmd[1]);
			close(aack[0]);
		}
		staller(c, k, fd, cmd[0], ack[1], done[1], xp[1]);
	}
	close(ack[1]);
	close(done[1]);
	close(xp[1]);
	ack[1] = done[1] = xp[1] = -1;
	if (!get(ack[0], &ch, 1) && ch == 'u') {
		pfd = syscall(SYS_pidfd_open, sp, 0);
		uf = pfd < 0 ? -1 : syscall(SYS_pidfd_getfd, pfd, k->uffd, 0);
	}
	if (uf >= 0) {
		fcntl(uf, F_SETFL, O_NONBLOCK);
		stalled = wait_fault(uf, &addr, 20000);
	}
	if (!stalled || pre) {
		int st = 0;

		end_child(&a);
		if (sp > 0) {
			kill(sp, SIGKILL);
			waitpid(sp, &st, 0);
			sp = 0;
		}
		tap_result(0, "%s the write stalls on the userfaultfd page (%s; the earlier "
			   "writes: %s; the staller: %s)", c->tag, stalled ? "yes" : "no", en(pre),
			   death(st));
		goto out;
	}
	if (c->a_fsync) {
		put(acmd[1], "f", 1);
		a_inside = !get(aack[0], &ch, 1) && wait_inside(atomic_load(&k->fsync_tid),
								SYS_fsync);
	}
	if (c->a_close) {
		put(acmd[1], "c", 1);
		get(aack[0], &ch, 1);
	}
	if (a) {
		kill(a, SIGKILL);
		a_reaped = reap_within(a, 20000, &ast) && WIFSIGNALED(ast);
		a = 0;
	}
	if (c->s_close) {
		put(cmd[1], "c", 1);
		get(ack[0], &ch, 1);
	}
	switch (c->end) {
	case END_KILL:
		kill(sp, SIGKILL);
		break;
	case END_EXIT:
		put(cmd[1], "x", 1);
		break;
	case END_EXEC:
		put(cmd[1], "e", 1);
		if (get(xp[0], &xerr, sizeof(xerr)))
			xerr = -1;
		break;
	default:
		resolved = resolve(uf, k->area, addr, done[0]);
		if (c->end == END_COPY)
			put(cmd[1], "x", 1);
		else
			kill(sp, SIGKILL);
	}
	s_reaped = reap_within_uf(sp, 20000, &sst, &uf);
	sp = 0;
	res = atomic_load(&k->res);
	if (c->blob == B_HOLE)
		hole = pwrite(fd, hole_byte, 1, HOLE_AT) == 1 ? 0 : errno;
	s = fsync(fd) ? errno : 0;
	if (s)
		w = ERR(pwrite(fd, data, 10, 0));
	cl = close(fd) ? errno : 0;
	fd = -1;
	kd = counter("commits") - c0;
	wn = expected(c, want);

	dies = c->end == END_KILL || c->end == END_COPY_KILL;
	died_ok = dies ? WIFSIGNALED(sst) && WTERMSIG(sst) == SIGKILL :
			 WIFEXITED(sst) && !WEXITSTATUS(sst);
	tap_result(s_reaped && died_ok && a_reaped && a_inside,
		   "%s the write stalled; the staller ended with %s%s%s", c->tag, death(sst),
		   !c->a_pre ? "" : a_reaped ? ", A died at once of SIGKILL" :
		   ", A did NOT die of SIGKILL within 20 s",
		   !c->a_fsync ? "" : a_inside ? " (its fsync(2) was waiting)" :
		   " (its fsync(2) NOT seen waiting)");
	if (c->end == END_COPY || c->end == END_COPY_KILL)
		tap_result(!resolved && res == (long)c->len, "%s once its faults were answered, "
			   "the write returned %ld (want %zu)", c->tag, res, c->len);
	if (c->end == END_EXEC)
		tap_result(!xerr, "%s fsync(2) of the inherited descriptor in the new program "
			   "returns %s (want OK: nothing was abandoned)", c->tag,
			   xerr < 0 ? "nothing" : en(xerr));
	i = s == c->fsync_err || (c->alt_err && s == c->alt_err);
	tap_result(i && w == s, "%s then the holder's fsync returns %s%s%s (want %s%s%s)",
		   c->tag, en(s), s ? ", a write " : "", s ? en(w) : "", en(c->fsync_err),
		   c->alt_err ? " or " : "", c->alt_err ? en(c->alt_err) : "");
	tap_result(!hole && !cl && kd == (c->blob == B_BASE ? 0 : 1) && stored_is(want, wn),
		   "%s commits +%ld, the blob is %s (%zu bytes)%s", c->tag, kd,
		   c->blob == B_BASE ? "the old one" : c->blob == B_PRE ? "the earlier writes" :
		   c->blob == B_ALL ? "the earlier writes and the stalled one" :
		   "the holder's, then zeroes, then its byte", wn,
		   hole ? " (the holder's hole write failed)" : "");
out:
	end_child(&a);
	end_child(&sp);
	if (fd >= 0)
		close(fd);
	if (uf >= 0)
		close(uf);
	if (pfd >= 0)
		close(pfd);
	for (i = 0; i < 2; i++) {
		int *p[6] = { &acmd[i], &aack[i], &cmd[i], &ack[i], &done[i], &xp[i] };
		int j;

		for (j = 0; j < 6; j++)
			if (*p[j] >= 0)
				close(*p[j]);
	}
	munmap(k, sizeof(*k));
}

/* ==== (d) ptrace-stopped writers killed ==== */

/*
 * A traced child writes 2000 bytes (the last write) and closes its
 * descriptor (modes 0, 1) or waits (mode 2). It is killed at the
 * syscall-entry stop of that close(2): nothing closed it, its death does,
 * and abandons; at the syscall-exit stop: it closed it, its death abandons
 * nothing; in mode 2, traced with PTRACE_O_TRACEEXIT: if it stops in
 * PTRACE_EVENT_EXIT before its descriptors are closed, the holder's fsync
 * then commits (as "while the killed writer is still dumping core").
 */
static void case_ptrace(int mode)
{
	static const char *const tags[] = {
		"[ptrace: SIGKILL at the syscall-entry stop of the writer's close(2)]",
		"[ptrace: SIGKILL at the syscall-exit stop of the writer's close(2)]",
		"[ptrace: SIGKILL, the PTRACE_EVENT_EXIT stop]",
	};
	const char *tag = tags[mode];
	struct __ptrace_syscall_info si;
	int fd, rp[2], st = 0, r = -1, found = 0, in_close = 0, stopped = 0, s1 = -1, s, w = 0;
	int cl, reaped = 1, i, sig = 0;
	long c0, k1 = -1, k;
	pid_t pid;

	reset_blob();
	c0 = counter("commits");
	fd = open(BLOB, O_WRONLY);
	if (fd < 0 || pipe(rp)) {
		tap_result(0, "%s open and pipe", tag);
		return;
	}
	fflush(stdout);
	pid = fork();
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		raise(SIGSTOP);
		r = pwrite(fd, APAT, 2000, 0) == 2000 ? 0 : errno;
		put(rp[1], &r, sizeof(r));
		if (mode < 2)
			close(fd);
		for (;;)
			pause();
	}
	close(rp[1]);	/* a child that dies early gives EOF, not a hang */
	if (waitpid(pid, &st, __WALL) != pid || !WIFSTOPPED(st) ||
	    ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)(long)(PTRACE_O_EXITKILL |
		   (mode < 2 ? PTRACE_O_TRACESYSGOOD : PTRACE_O_TRACEEXIT)))) {
		tap_result(0, "%s the child stops for its tracer", tag);
		end_child(&pid);
		close(fd);
		close(rp[0]);
		return;
	}
	if (mode < 2) {
		for (i = 0; i < 200 && !found; i++) {
			if (ptrace(PTRACE_SYSCALL, pid, NULL, (void *)(long)sig) ||
			    waitpid(pid, &st, __WALL) != pid || !WIFSTOPPED(st))
				break;
			sig = 0;
			if (WSTOPSIG(st) != (SIGTRAP | 0x80)) {
				if (WSTOPSIG(st) != SIGSTOP && WSTOPSIG(st) != SIGTRAP)
					sig = WSTOPSIG(st);
				continue;
			}
			if (ptrace(PTRACE_GET_SYSCALL_INFO, pid, (void *)sizeof(si), &si) <= 0)
				break;
			if (si.op == PTRACE_SYSCALL_INFO_ENTRY) {
				in_close = si.entry.nr == SYS_close && (int)si.entry.args[0] == fd;
				found = in_close && mode == 0;
			} else if (si.op == PTRACE_SYSCALL_INFO_EXIT) {
				found = in_close && mode == 1;
				in_close = 0;
			}
		}
		if (found)
			get(rp[0], &r, sizeof(r));
		kill(pid, SIGKILL);
		reaped = reap_within(pid, 20000, &st);
	} else {
		ptrace(PTRACE_CONT, pid, NULL, NULL);
		found = !get(rp[0], &r, sizeof(r));
		kill(pid, SIGKILL);
		if (waitpid(pid, &st, __WALL) == pid && WIFSTOPPED(st) &&
		    (st >> 8) == (SIGTRAP | (PTRACE_EVENT_EXIT << 8))) {
			stopped = 1;
			s1 = fsync(fd) ? errno : 0;
			k1 = counter("commits") - c0;
			ptrace(PTRACE_CONT, pid, NULL, NULL);
			reaped = reap_within(pid, 20000, &st);
		}
	}
	s = fsync(fd) ? errno : 0;
	if (s)
		w = ERR(pwrite(fd, data, 10, 0));
	cl = close(fd) ? errno : 0;
	k = counter("commits") - c0;
	close(rp[0]);
	tap_result(found && !r && reaped && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
		   "%s the child wrote 2000 bytes, reached the stop and died of SIGKILL (%s)", tag,
		   death(st));
	if (mode == 0) {
		tap_result(s == ECANCELED && w == ECANCELED, "%s close(2) never ran, the death "
			   "closed it: the holder's fsync and write return %s, %s", tag, en(s),
			   en(w));
		tap_result(!cl && !k && stored_is(base, sizeof(base)), "%s nothing committed "
			   "(commits +%ld)", tag, k);
	} else if (mode == 1) {
		tap_result(!s && !cl && k == 1 && stored_is(APAT, 2000), "%s it had closed its "
			   "descriptor: the holder's fsync %s commits its 2000 bytes (commits +%ld)",
			   tag, en(s), k);
	} else if (stopped) {
		tap_result(!s1 && k1 == 1, "%s in the stop, before its descriptors were closed, the "
			   "holder's fsync returns %s and commits (commits +%ld)", tag, en(s1), k1);
		tap_result(!s && !cl && k == 1 && stored_is(APAT, 2000), "%s after the death, "
			   "fsync returns %s, nothing more is committed (commits +%ld)", tag, en(s), k);
	} else {
		printf("# %s no PTRACE_EVENT_EXIT stop for a SIGKILL here\n", tag);
		tap_result(s == ECANCELED && !k && stored_is(base, sizeof(base)),
			   "%s the holder's fsync returns %s, nothing committed (commits +%ld)", tag,
			   en(s), k);
	}
}

/* ==== (e) vfork(2): the child writes from the parent's userfaultfd memory ==== */

static volatile pid_t v_pid;
static volatile long v_res;
static int v_fd;
static unsigned char *v_area;

struct vhandler {
	int uf, resolve, stalled;
	atomic_int stop;
};

static void *v_handler_main(void *p)
{
	struct vhandler *h = p;
	unsigned long addr;

	h->stalled = wait_fault(h->uf, &addr, 20000);
	if (!h->stalled || !h->resolve) {
		if (v_pid > 0)
			kill(v_pid, SIGKILL);
		return NULL;
	}
	answer(h->uf, (unsigned long)v_area, addr);
	while (!atomic_load(&h->stop))
		if (wait_fault(h->uf, &addr, 100))
			answer(h->uf, (unsigned long)v_area, addr);
	return NULL;
}

static pid_t __attribute__((noinline)) vfork_writer(void)
{
	pid_t pid = vfork();

	if (!pid) {
		v_pid = syscall(SYS_getpid);
		syscall(SYS_pwrite64, v_fd, APAT, 2000, 0);
		v_res = syscall(SYS_pwrite64, v_fd, v_area, 1000, 2000);
		_exit(0);
	}
	return pid;
}

static void case_vfork(int resolve_it)
{
	const char *tag = resolve_it ? "[vfork: the child's write stalls on the parent's "
				       "userfaultfd page, a thread of the parent answers it]" :
				       "[vfork: the child's write stalls on the parent's "
				       "userfaultfd page, a thread of the parent kills it]";
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	static unsigned char want[3000];
	struct vhandler h = { .resolve = resolve_it };
	int st = 0, s, w = 0, cl;
	long c0, k;
	pthread_t t;
	pid_t pid;

	reset_blob();
	c0 = counter("commits");
	v_pid = 0;
	v_res = -99999;
	v_area = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	h.uf = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	reg.range.start = (unsigned long)v_area;
	reg.range.len = PG;
	if (v_area == MAP_FAILED || h.uf < 0 || ioctl(h.uf, UFFDIO_API, &api) ||
	    ioctl(h.uf, UFFDIO_REGISTER, &reg)) {
		tap_result(0, "%s userfaultfd set up", tag);
		goto out;
	}
	v_fd = open(BLOB, O_WRONLY);
	if (pthread_create(&t, NULL, v_handler_main, &h)) {
		close(v_fd);
		goto out;
	}
	fflush(stdout);
	pid = vfork_writer();
	waitpid(pid, &st, 0);
	atomic_store(&h.stop, 1);
	pthread_join(t, NULL);
	s = fsync(v_fd) ? errno : 0;
	if (s)
		w = ERR(pwrite(v_fd, data, 10, 0));
	cl = close(v_fd) ? errno : 0;
	k = counter("commits") - c0;
	if (resolve_it) {
		memcpy(want, APAT, 2000);
		memcpy(want + 2000, SBUF, 1000);
		tap_result(h.stalled && WIFEXITED(st) && v_res == 1000, "%s the write stalled, "
			   "then returned %ld; the child: %s", tag, (long)v_res, death(st));
		tap_result(!s && !cl && k == 1 && stored_is(want, 3000), "%s the parent's fsync "
			   "returns %s and commits both writes (commits +%ld)", tag, en(s), k);
	} else {
		tap_result(h.stalled && WIFSIGNALED(st), "%s the write stalled; the child: %s", tag,
			   death(st));
		tap_result(s == ECANCELED && w == ECANCELED, "%s it wrote last: the parent's "
			   "fsync and write return %s, %s", tag, en(s), en(w));
		tap_result(!cl && !k && stored_is(base, sizeof(base)), "%s nothing committed "
			   "(commits +%ld)", tag, k);
	}
out:
	if (h.uf >= 0)
		close(h.uf);
	if (v_area != MAP_FAILED)
		munmap(v_area, PG);
}

/* ==== (b) readers racing commits and read_mode flips, "empty" included ==== */

#define NREADS	300
#define RVER(i)	(data + 1 + (i))

static const size_t r_size[3] = { 3000, 20000, 7001 };
static atomic_int r_stop;

static void *r_committer(void *arg)
{
	long *n = arg;
	int i = 0;

	while (!atomic_load(&r_stop)) {
		blob_commit(BLOB, RVER(i % 3), r_size[i % 3], r_size[i % 3]);
		i++;
		(*n)++;
	}
	return NULL;
}

static void *r_moder(void *arg)
{
	static const char *const modes[] = { "empty", "normal", "empty", "shrink" };
	long *n = arg;

	while (!atomic_load(&r_stop)) {
		write_str(ITEM "/read_mode", modes[*n % 4]);
		(*n)++;
	}
	return NULL;
}

/*
 * Whether @n bytes are what one fill can give: version i whole (normal,
 * or empty's refill), or shrink's min(size asked, size_i / 2).
 */
static int r_allowed(const unsigned char *buf, size_t n)
{
	int i, j;

	for (i = 0; i < 3; i++) {
		if (n > r_size[i] || memcmp(buf, RVER(i), n))
			continue;
		if (n == r_size[i] || n == r_size[i] / 2)
			return 1;
		for (j = 0; j < 3; j++)
			if (n == r_size[j] && r_size[j] < r_size[i] / 2)
				return 1;
	}
	return 0;
}

static void case_readers(void)
{
	static unsigned char buf[24000];
	long commits = 0, flips = 0, bad = 0, empty = 0, refill = 0, again = 0, ok = 0;
	pthread_t c, m;
	int i;

	reset_blob();
	atomic_store(&r_stop, 0);
	pthread_create(&c, NULL, r_committer, &commits);
	pthread_create(&m, NULL, r_moder, &flips);
	for (i = 0; i < NREADS; i++) {
		int fd = open(BLOB, O_RDONLY), zeros = 0, err = 0;
		size_t n = 0;

		for (;;) {
			ssize_t r = read(fd, buf + n, n + 1000 <= sizeof(buf) ? 1000 : sizeof(buf) - n);

			if (r < 0) {
				err = errno;
				break;
			}
			if (!r) {
				/* "filled nothing": 0, and the method is asked again */
				if (!n && !zeros++) {
					empty++;
					continue;
				}
				break;
			}
			n += r;
		}
		close(fd);
		if (n && zeros)
			refill++;
		if (!n && (!err || err == EAGAIN)) {
			again += err == EAGAIN;
		} else if (!err && r_allowed(buf, n)) {
			ok++;
		} else if (bad++ < 5) {
			printf("# a reader got %zu bytes%s%s that no one fill gives\n", n,
			       err ? ", then " : "", err ? en(err) : "");
		}
	}
	atomic_store(&r_stop, 1);
	pthread_join(c, NULL);
	pthread_join(m, NULL);
	write_str(ITEM "/read_mode", "normal");
	tap_result(!bad && empty && ok, "[readers] %d readers racing %ld commits and %ld "
		   "read_mode flips: %ld got one fill's bytes (%ld after an empty read), %ld "
		   "first reads returned 0, %ld EAGAIN, %ld otherwise", NREADS, commits, flips,
		   ok, refill, empty, again, bad);
}

/* ==== setup ==== */

static int setup(void)
{
	if (system("modprobe configfs 2>/dev/null; mountpoint -q /sys/kernel/config"))
		mounted_configfs = !system("mount -t configfs none /sys/kernel/config");
	if (access("/sys/module/" SAMPLE, F_OK)) {
		if (system("insmod /lib/modules/$(uname -r)/extra/" SAMPLE ".ko 2>/dev/null || "
			   "modprobe " SAMPLE))
			return -1;
		loaded_sample = 1;
	}
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

int main(int argc, char **argv)
{
	const char *no_uffd = NULL, *no_proc = NULL;
	size_t i;
	int u;

	if (argc == 4 && !strcmp(argv[1], "--fsync")) {
		int e = fsync(atoi(argv[2])) ? errno : 0;

		put(atoi(argv[3]), &e, sizeof(e));
		return 0;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	data = malloc(DATA);
	if (!data)
		return 1;
	blob_fill(data, DATA, 29);
	for (i = 0; i < sizeof(base); i++)
		base[i] = 0x96 ^ (unsigned char)(i * 3);
	if (setup()) {
		tap_result(0, "load configfs and " SAMPLE ", mkdir " ITEM);
		return tap_done();
	}
	u = syscall(SYS_userfaultfd, O_CLOEXEC);
	if (u < 0)
		no_uffd = "no userfaultfd(2)";
	else
		close(u);
	if (access("/proc/self/syscall", R_OK))
		no_proc = "no /proc/PID/syscall";

	for (i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		if (no_uffd || (specs[i].a_fsync && no_proc))
			tap_skip(specs[i].tag, no_uffd ? no_uffd : no_proc);
		else
			run_case(&specs[i]);
	}
	case_ptrace(0);
	case_ptrace(1);
	case_ptrace(2);
	if (no_uffd) {
		tap_skip("[vfork]", no_uffd);
	} else {
		case_vfork(0);
		case_vfork(1);
	}
	case_readers();

	teardown();
	free(data);
	return tap_done();
}
