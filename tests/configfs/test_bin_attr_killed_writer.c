// SPDX-License-Identifier: GPL-2.0
// bench-ldlibs: -luring -lpthread
/*
 * The configfs binary attribute contract (Documentation/filesystems/
 * configfs.rst, "Reading and writing a binary attribute") where a writer
 * dies with work of its own still queued in the kernel, or holds its file
 * by a reference its death does not drop; through the lk45_blobstore
 * sample on an item of its own ("killed_writer"), first on our configfs, then,
 * when it can be swapped in, on 6.12's (configfs_pristine.ko), each
 * outcome asserted for both.
 *
 * The theme is work that a killed writer left queued in the kernel and
 * that runs after its SIGKILL, and references to its file that its death
 * drops without a descriptor close:
 *
 *  - an AIO IOCB_CMD_FSYNC that the writer submitted, waiting behind
 *    another process's write stalled on a userfaultfd page, when the
 *    writer is killed: AIO runs fsync in a kworker, not in the writer, and
 *    exit_aio() waits for it before the writer's descriptors are closed;
 *  - an IORING_OP_FSYNC that an io-wq worker of the writer carries out,
 *    waiting behind such a stalled write when the writer is killed: its
 *    completion, read from a ring this process shares, is EINTR;
 *  - io_uring requests hard-linked behind an openat(2) of a FIFO that only
 *    the kill ends: an IORING_OP_FSYNC (the io-wq worker has the SIGKILL
 *    pending, so configfs refuses to commit) and an IORING_OP_CLOSE of the
 *    writer's only descriptor (a worker, not yet PF_EXITING, may close it
 *    after the kill); either may instead be cancelled by the writer's
 *    exit, and nothing may be committed either way;
 *  - a write queued through an IORING_SETUP_SQPOLL ring that another
 *    process created, the queuing process then killed: the SQPOLL thread,
 *    the creator's, made the write;
 *  - the writer's open file in flight in an SCM_RIGHTS message on its own
 *    socketpair, its descriptor closed: the death frees the message and
 *    with it the file (the documentation lists io_uring's registered
 *    files, a unix(7) message in flight and CLONE_FILES as files a death
 *    does not close);
 *  - a writer that shares its descriptor table (clone(CLONE_FILES)) with
 *    this process and is killed: the file stays open;
 *  - a writer that exec'd (from its leader, or from another thread, which
 *    de_thread() turns into the leader) and is then killed;
 *  - a writer killed by the memory cgroup's OOM killer;
 *  - what does not commit: sync_file_range(2), syncfs(2), sync(2), and
 *    copy_file_range(2) from other attributes of the same configfs (the
 *    same super block: no EXDEV; a binary one has an i_size of 0, so the
 *    copy is empty, a text one of PAGE_SIZE, so the VFS tries to splice
 *    and fails with EINVAL); writes past RLIMIT_FSIZE (configfs
 *    fails writes only with EFBIG at cb_max_size, ENOMEM or EFAULT);
 *  - O_APPEND set and cleared with fcntl(F_SETFL) in the middle of an
 *    upload with a hole, and pwritev2(RWF_NOAPPEND): appends land at the
 *    blob's furthest byte, not at the file position.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <liburing.h>
#include <linux/aio_abi.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "blob.h"
#include "tap.h"
#include "attack_util.h"

#define ITEM		STORE_ROOT "/killed_writer"
#define BLOB		ITEM "/blob"
#define DIGEST		ITEM "/digest"
#define SAMPLE		"lk45_blobstore"
#define PRISTINE	"/bench/pristine/configfs_pristine.ko"
#define FIFO		"/tmp/test_bin_attr_killed_writer.fifo"
#define CG		"/sys/fs/cgroup"
#define CGX		CG "/lk45_configfs_killed_writer"
#define PG		4096
#define PRE		3000	/* what a writer writes before it is killed */
#define DATA		(1 << 20)

static int pristine;		/* running against 6.12's configfs */
static unsigned char *data;	/* DATA bytes of pattern */
static unsigned char base[1000];	/* the blob each case starts from */
static char outcome[768];
static const char *no_fifo, *no_uffd;

#define OUT(...) (snprintf(outcome, sizeof(outcome), __VA_ARGS__), outcome)

static long counter(const char *name)
{
	return blob_counter(ITEM, name);
}

/*
 * What the blob holds: "old" (the base), "pre" (data[0, PRE)), "pre4000"
 * (data[0, PRE + 1000)), "pre+zeroes" (data[0, PRE) and 1000 zeroes), or
 * "other(N bytes)". The answers rotate through four buffers.
 */
static const char *state(void)
{
	static char outs[4][48];
	static int slot;
	char *out = outs[slot++ % 4];
	unsigned char *got = NULL;
	long n = blob_slurp(BLOB, &got), i, zeroes = 0;

	if (n == PRE + 1000)
		for (i = PRE; i < n; i++)
			zeroes += !got[i];
	if (n == sizeof(base) && !memcmp(got, base, sizeof(base)))
		strcpy(out, "old");
	else if (n == PRE && !memcmp(got, data, PRE))
		strcpy(out, "pre");
	else if (n == PRE + 1000 && !memcmp(got, data, PRE + 1000))
		strcpy(out, "pre4000");
	else if (n == PRE + 1000 && !memcmp(got, data, PRE) && zeroes == 1000)
		strcpy(out, "pre+zeroes");
	else
		snprintf(out, 48, "other(%ld bytes)", n);
	free(got);
	return out;
}

/* Put the base blob in place (write + close: both 6.12 and ours commit it). */
static int reset_blob(void)
{
	struct upload u = blob_upload(BLOB, base, sizeof(base), sizeof(base));

	return u.open_err || u.write_err || u.close_err || strcmp(state(), "old") ? -1 : 0;
}

/* The change of the commit counter since @c0, once it moved or 600 ms passed. */
static long settle(long c0)
{
	long c = counter("commits");
	int i;

	for (i = 0; i < 12 && c == c0; i++) {
		usleep(50000);
		c = counter("commits");
	}
	return c - c0;
}

static const char *death(int st)
{
	static char out[4][32];
	static int slot;
	char *o = out[slot++ % 4];

	if (st == -1)
		strcpy(o, "not-reaped");
	else if (WIFSIGNALED(st))
		snprintf(o, 32, "SIG%s", sigabbrev_np(WTERMSIG(st)));
	else if (WIFEXITED(st))
		snprintf(o, 32, "exit(%d)", WEXITSTATUS(st));
	else
		snprintf(o, 32, "status %#x", st);
	return o;
}

/* Reap @pid within @ms; its status, or -1 (then it is sent SIGKILL and left). */
static int reap(pid_t pid, int ms)
{
	int st = -1, i;

	for (i = 0; i < ms / 10; i++) {
		if (waitpid(pid, &st, WNOHANG | __WALL) == pid)
			return st;
		usleep(10000);
	}
	printf("# pid %d not reaped after %d ms\n", (int)pid, ms);
	kill(pid, SIGKILL);
	return -1;
}

/* Read @n bytes from @fd within @ms; 0 on success. */
static int rd(int fd, void *buf, size_t n, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, ms) == 1 && read(fd, buf, n) == (ssize_t)n ? 0 : -1;
}

/* The state letter of /proc/@pid/stat ('?' when gone). */
static char proc_state(const char *dir)
{
	char p[96], buf[512], *s;
	ssize_t n;
	int fd;

	snprintf(p, sizeof(p), "%s/stat", dir);
	fd = open(p, O_RDONLY);
	n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return '?';
	buf[n] = 0;
	s = strrchr(buf, ')');
	return s && s[1] == ' ' ? s[2] : '?';
}

/* Wait up to @ms for @pid to be in one of the states @want; the last one seen. */
static char wait_state(pid_t pid, const char *want, int ms)
{
	char dir[32], c = '?';
	int i;

	snprintf(dir, sizeof(dir), "/proc/%d", (int)pid);
	for (i = 0; i < ms / 10; i++) {
		c = proc_state(dir);
		if (strchr(want, c))
			break;
		usleep(10000);
	}
	return c;
}

/* 1 when a thread of @pid named iou-wrk-* is in state @st within @ms */
static int uring_worker_in(pid_t pid, char st, int ms)
{
	char dir[64], p[384], comm[32];
	int i;

	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
	for (i = 0; i < ms / 20; i++) {
		DIR *d = opendir(dir);
		struct dirent *e;

		while (d && (e = readdir(d))) {
			int fd;
			ssize_t n;

			if (e->d_name[0] == '.')
				continue;
			snprintf(p, sizeof(p), "%s/%s/comm", dir, e->d_name);
			fd = open(p, O_RDONLY);
			n = fd < 0 ? -1 : read(fd, comm, sizeof(comm) - 1);
			if (fd >= 0)
				close(fd);
			if (n <= 0)
				continue;
			comm[n] = 0;
			snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
			if (!strncmp(comm, "iou-wrk", 7) && proc_state(p) == st) {
				closedir(d);
				return 1;
			}
		}
		if (d)
			closedir(d);
		usleep(20000);
	}
	return 0;
}

static int send_fd(int sock, int fd)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	char x = 'x';
	struct iovec iov = { &x, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);

	memset(u.buf, 0, sizeof(u.buf));
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &m, 0) == 1 ? 0 : -1;
}

/* ==== a write stalled on a userfaultfd page, holding the open file ==== */

struct stall {
	int fd;
	size_t len;
	off_t pos;
	void *src;
};

static void *stall_main(void *arg)
{
	struct stall *s = arg;
	ssize_t r = pwrite(s->fd, s->src, s->len, s->pos);

	(void)r;
	return NULL;
}

/*
 * A child: a thread of it writes @len bytes at @pos of @fd from a page that
 * is not there and that nobody provides; its main thread reports on @rep
 * whether the write is stalled in the fault (the open file's mutex held),
 * then waits to be killed.
 */
static void __attribute__((noreturn)) staller(int fd, off_t pos, size_t len, int rep)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	int uffd = syscall(SYS_userfaultfd, O_CLOEXEC);
	unsigned char *area = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct pollfd pfd = { .fd = uffd, .events = POLLIN };
	struct stall s = { .fd = fd, .len = len, .pos = pos, .src = area };
	struct uffd_msg msg;
	pthread_t t;
	char ok = 0;

	if (uffd >= 0 && area != MAP_FAILED && !ioctl(uffd, UFFDIO_API, &api)) {
		reg.range.start = (unsigned long)area;
		reg.range.len = 2 * PG;
		if (!ioctl(uffd, UFFDIO_REGISTER, &reg) &&
		    !pthread_create(&t, NULL, stall_main, &s))
			ok = poll(&pfd, 1, 20000) == 1 &&
			     read(uffd, &msg, sizeof(msg)) == sizeof(msg) &&
			     msg.event == UFFD_EVENT_PAGEFAULT;
	}
	put(rep, &ok, 1);
	for (;;)
		pause();
}

/* ==== 1: an AIO fsync of the killed writer, run after the kill ==== */

/*
 * The holder (this process) opens the blob; writer K, a child sharing the
 * open file, writes PRE bytes at 0 and is the last writer. Staller P, a
 * child sharing it too, stalls a write of 1000 bytes at PRE (adding bytes
 * past the end: cut short by its kill, it stores nothing). K submits
 * IOCB_CMD_FSYNC, which waits for the open file behind P's write, and is
 * killed; then P is killed.
 *
 * The contract: "an fsync queued with io_submit(2) runs in a kernel
 * worker, not in the process: queued before the kill, it commits what was
 * written if it runs before the abandon, as it does when the exit waits
 * for it" (K shares its memory with no one). P's cut write was adding bytes, so
 * it stored nothing; the holder's fsync(2) then returns the commit's
 * result again. 6.12: no fsync (EINVAL at io_submit), the release commits
 * PRE bytes and the 1000 zeroes of P's grown buffer.
 */
static const char *case_aio_fsync_after_kill(void)
{
	int fd, kgo[2], krep[2], prep[2], kst, pst, e;
	long wrote = -1, r[2] = { -1, -1 }, c0, k1, d;
	char stalled = 0, kstate = '?', go = 'g';
	pid_t k, p;

	if (no_uffd)
		return OUT("skip: %s", no_uffd);
	if (reset_blob())
		return "cannot put the base blob";
	c0 = counter("commits");
	fd = open(BLOB, O_WRONLY);
	if (fd < 0 || pipe(kgo) || pipe(krep) || pipe(prep))
		return OUT("setup: %s", en(errno));
	k = fork();
	if (!k) {
		aio_context_t ctx = 0;
		struct iocb cb, *cbs[1] = { &cb };
		struct io_event ev;
		struct timespec ts = { 0, 300 * 1000000L };
		char c;

		wrote = write(fd, data, PRE);
		put(krep[1], &wrote, sizeof(wrote));
		if (read(kgo[0], &c, 1) != 1)
			_exit(1);
		memset(&cb, 0, sizeof(cb));
		cb.aio_fildes = fd;
		cb.aio_lio_opcode = IOCB_CMD_FSYNC;
		if (syscall(SYS_io_setup, 8, &ctx))
			r[0] = -errno;
		else
			r[0] = syscall(SYS_io_submit, ctx, 1, cbs) == 1 ? 1 : -errno;
		/* 0: no completion yet, the fsync waits for the open file */
		if (r[0] == 1)
			r[1] = syscall(SYS_io_getevents, ctx, 1, 1, &ev, &ts);
		put(krep[1], r, sizeof(r));
		for (;;)
			pause();
	}
	close(krep[1]);
	close(kgo[0]);
	if (rd(krep[0], &wrote, sizeof(wrote), 10000))
		wrote = -2;
	p = fork();
	if (!p)
		staller(fd, PRE, 1000, prep[1]);
	close(prep[1]);
	if (rd(prep[0], &stalled, 1, 25000))
		stalled = 0;
	put(kgo[1], &go, 1);
	if (rd(krep[0], r, sizeof(r), 10000))
		r[0] = r[1] = -2;
	kill(k, SIGKILL);
	/* ours: D, in exit_aio() waiting for the fsync; 6.12: Z */
	kstate = wait_state(k, "DZ", 3000);
	printf("# writer after SIGKILL, before the staller's: state %c\n", kstate);
	kill(p, SIGKILL);
	pst = reap(p, 10000);
	kst = reap(k, 10000);
	/* ours: the worker committed before the writer's exit went on */
	k1 = settle(c0);
	e = fsync(fd) ? errno : 0;
	close(fd);
	d = settle(c0);
	close(krep[0]);
	close(kgo[1]);
	close(prep[0]);
	return OUT("wrote=%ld stalled=%s aio-submit=%s events-before-kill=%ld writer=%s "
		   "staller=%s commits-before-fsync=+%ld fsync=%s commits=+%ld blob=%s", wrote,
		   stalled ? "yes" : "no", r[0] == 1 ? "OK" : r[0] < 0 ? en((int)-r[0]) : "?",
		   r[1], death(kst), death(pst), k1, en(e), d, state());
}

/* ==== an io_uring fsync of the killed writer, waiting for the open file ==== */

/*
 * This process creates a ring and opens the blob; writer K, a child sharing
 * both, writes PRE bytes at 0 (the last write). Staller P, a child sharing
 * the file too, stalls a write of 1000 bytes at PRE. K queues an
 * IORING_OP_FSYNC with IOSQE_ASYNC, which an io-wq worker of K carries out:
 * it waits for the open file behind P's write. K is killed, then P; this
 * process reads the fsync's completion from the ring it shares.
 *
 * The contract: "an fsync(2) by a thread of a process being killed
 * (io_uring's workers included) commits nothing and fails with EINTR"; K
 * made the last write and was killed, so the upload is abandoned: this
 * process's fsync(2) gets ECANCELED, its close commits nothing. 6.12: the
 * fsync fails at once with EINVAL, and the release commits PRE bytes and
 * the 1000 zeroes of P's grown buffer.
 */
static const char *case_uring_fsync_waiting_killed(void)
{
	struct __kernel_timespec ts = { 10, 0 };
	struct io_uring_cqe *cqe;
	struct io_uring ring;
	int fd, kgo[2], krep[2], prep[2], kst, pst, waiting, e, cl, got;
	long wrote = -2, sub = -2, c0, d;
	char stalled = 0, go = 'g', res[32] = "none";
	pid_t k, p;

	if (no_uffd)
		return OUT("skip: %s", no_uffd);
	if (reset_blob())
		return "cannot put the base blob";
	if (io_uring_queue_init(8, &ring, 0))
		return "skip: no io_uring";
	c0 = counter("commits");
	fd = open(BLOB, O_WRONLY);
	if (fd < 0 || pipe(kgo) || pipe(krep) || pipe(prep)) {
		io_uring_queue_exit(&ring);
		return OUT("setup: %s", en(errno));
	}
	k = fork();
	if (!k) {
		struct io_uring_sqe *sqe;
		char c;

		wrote = write(fd, data, PRE);
		put(krep[1], &wrote, sizeof(wrote));
		if (read(kgo[0], &c, 1) != 1)
			_exit(1);
		sqe = io_uring_get_sqe(&ring);
		io_uring_prep_fsync(sqe, fd, 0);
		sqe->flags |= IOSQE_ASYNC;
		sub = io_uring_submit(&ring);
		put(krep[1], &sub, sizeof(sub));
		for (;;)
			pause();
	}
	close(krep[1]);
	close(kgo[0]);
	if (rd(krep[0], &wrote, sizeof(wrote), 10000))
		wrote = -2;
	p = fork();
	if (!p)
		staller(fd, PRE, 1000, prep[1]);
	close(prep[1]);
	if (rd(prep[0], &stalled, 1, 25000))
		stalled = 0;
	put(kgo[1], &go, 1);
	if (rd(krep[0], &sub, sizeof(sub), 10000))
		sub = -2;
	/* ours: the worker sleeps killable on the open file's mutex */
	waiting = uring_worker_in(k, 'D', 10000);
	kill(k, SIGKILL);
	kst = reap(k, 10000);
	kill(p, SIGKILL);
	pst = reap(p, 10000);
	got = io_uring_wait_cqe_timeout(&ring, &cqe, &ts);
	if (!got) {
		snprintf(res, sizeof(res), "%s", cqe->res < 0 ? en(-cqe->res) : "OK");
		io_uring_cqe_seen(&ring, cqe);
	}
	e = fsync(fd) ? errno : 0;
	cl = close(fd) ? errno : 0;
	d = settle(c0);
	io_uring_queue_exit(&ring);
	close(krep[0]);
	close(kgo[1]);
	close(prep[0]);
	return OUT("wrote=%ld stalled=%s submitted=%ld worker-waiting=%s writer=%s staller=%s "
		   "fsync-cqe=%s fsync=%s close=%s commits=+%ld blob=%s", wrote,
		   stalled ? "yes" : "no", sub, waiting ? "yes" : "no", death(kst), death(pst),
		   res, en(e), cl ? en(cl) : "OK", d, state());
}

/* ==== 2, 3: io_uring requests hard-linked behind a blocking openat ==== */

enum { LINK_FSYNC, LINK_CLOSE };

/*
 * Writer K opens the blob (its own open file, nobody else's), writes PRE
 * bytes, and submits openat(FIFO, O_RDONLY) with IOSQE_ASYNC |
 * IOSQE_IO_HARDLINK (an io-wq worker waits in it for a FIFO writer that
 * never comes), hard-linked to an IORING_OP_FSYNC or IORING_OP_CLOSE of its
 * descriptor. K is killed: the SIGKILL ends the openat, and the hard link
 * runs the next request in the worker, while K's descriptor table still
 * stands.
 *
 * The contract: K was killed and made the last write, the file was in its
 * descriptor table (not in registered files, not shared with a live
 * process): nothing is committed. 6.12: the release commits PRE bytes.
 */
static const char *uring_linked(int what)
{
	int krep[2], kst, asleep;
	long r[3] = { -2, -2, -2 }, c0, d;
	pid_t k;

	if (no_fifo)
		return OUT("skip: %s", no_fifo);
	if (reset_blob())
		return "cannot put the base blob";
	c0 = counter("commits");
	if (pipe(krep))
		return OUT("pipe: %s", en(errno));
	k = fork();
	if (!k) {
		struct __kernel_timespec ts = { 0, 300 * 1000000L };
		struct io_uring ring;
		struct io_uring_sqe *sqe;
		struct io_uring_cqe *cqe;
		int fd = open(BLOB, O_WRONLY);

		r[0] = fd < 0 ? -errno : write(fd, data, PRE);
		if (io_uring_queue_init(8, &ring, 0)) {
			r[1] = -ENOSYS;
		} else {
			sqe = io_uring_get_sqe(&ring);
			io_uring_prep_openat(sqe, AT_FDCWD, FIFO, O_RDONLY, 0);
			sqe->flags |= IOSQE_ASYNC | IOSQE_IO_HARDLINK;
			sqe = io_uring_get_sqe(&ring);
			if (what == LINK_CLOSE)
				io_uring_prep_close(sqe, fd);
			else
				io_uring_prep_fsync(sqe, fd, 0);
			r[1] = io_uring_submit(&ring);
			/* 0: neither request completed: the openat waits */
			r[2] = !io_uring_wait_cqe_timeout(&ring, &cqe, &ts);
		}
		put(krep[1], r, sizeof(r));
		for (;;)
			pause();
	}
	close(krep[1]);
	if (rd(krep[0], r, sizeof(r), 10000))
		r[0] = r[1] = r[2] = -2;
	asleep = uring_worker_in(k, 'S', 3000);
	printf("# an iou-wrk thread of the writer asleep before the kill: %s\n",
	       asleep ? "yes" : "no");
	kill(k, SIGKILL);
	kst = reap(k, 10000);
	d = settle(c0);
	close(krep[0]);
	return OUT("wrote=%ld submitted=%ld cqe-before-kill=%s writer=%s commits=+%ld blob=%s",
		   r[0], r[1], r[2] == 0 ? "no" : r[2] == 1 ? "yes" : "?", death(kst), d,
		   state());
}

static const char *case_uring_linked_fsync(void) { return uring_linked(LINK_FSYNC); }
static const char *case_uring_linked_close(void) { return uring_linked(LINK_CLOSE); }

/*
 * Q opens the blob and creates an IORING_SETUP_SQPOLL ring, then forks K.
 * K, sharing the ring's mapping and the open file, queues a write of PRE
 * bytes; Q's SQPOLL thread carries it out. K is killed with the file
 * open, then Q closes it and exits.
 *
 * The contract: "a write that io_uring carries out in a ring's SQPOLL
 * thread counts as the process that created the ring": K made no write,
 * so its death abandons nothing, and Q's close commits. 6.12: commits.
 */
static const char *case_sqpoll_submitter_killed(void)
{
	int qrep[2], qst;
	long r[4] = { -2, -2, -2, -2 }, c0, d;
	pid_t q;

	if (reset_blob())
		return "cannot put the base blob";
	c0 = counter("commits");
	if (pipe(qrep))
		return OUT("pipe: %s", en(errno));
	q = fork();
	if (!q) {
		struct io_uring_params p = { .flags = IORING_SETUP_SQPOLL,
					     .sq_thread_idle = 2000 };
		struct io_uring ring;
		int krep[2], kst, fd = open(BLOB, O_WRONLY);
		pid_t k;

		if (fd < 0 || pipe(krep) || io_uring_queue_init_params(8, &ring, &p)) {
			r[0] = -ENOSYS;
			put(qrep[1], r, sizeof(r));
			_exit(1);
		}
		k = fork();
		if (!k) {
			struct __kernel_timespec ts = { 2, 0 };
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
			struct io_uring_cqe *cqe;
			long res[2] = { -2, -2 };

			io_uring_prep_write(sqe, fd, data, PRE, 0);
			res[0] = io_uring_submit(&ring);
			if (!io_uring_wait_cqe_timeout(&ring, &cqe, &ts))
				res[1] = cqe->res;
			put(krep[1], res, sizeof(res));
			for (;;)
				pause();
		}
		close(krep[1]);
		if (rd(krep[0], r, 2 * sizeof(long), 10000))
			r[0] = r[1] = -3;
		kill(k, SIGKILL);
		kst = reap(k, 10000);
		r[2] = kst == -1 ? -1 : WIFSIGNALED(kst) ? WTERMSIG(kst) : 0;
		r[3] = close(fd) ? -errno : 0;
		io_uring_queue_exit(&ring);
		put(qrep[1], r, sizeof(r));
		_exit(0);
	}
	close(qrep[1]);
	if (rd(qrep[0], r, sizeof(r), 20000))
		r[0] = -4;
	qst = reap(q, 10000);
	d = settle(c0);
	close(qrep[0]);
	if (r[0] == -ENOSYS)
		return OUT("skip: no SQPOLL ring (%s)", death(qst));
	return OUT("submitted=%ld wrote=%ld submitter=%s creator-close=%s creator=%s "
		   "commits=+%ld blob=%s", r[0], r[1],
		   r[2] == SIGKILL ? "SIGKILL" : "not-killed", r[3] ? en((int)-r[3]) : "OK",
		   death(qst), d, state());
}

/* ==== 4-6: the writer's file in flight on its own socketpair ==== */

enum { SCM_KILL_CLOSED, SCM_EXIT_CLOSED, SCM_KILL_KEPT };

/*
 * Writer K opens the blob, writes PRE bytes, sends the descriptor over
 * SCM_RIGHTS into a socketpair of its own (never received), and closes its
 * descriptor (SCM_KILL_KEPT: keeps it); then it is killed, or exits.
 *
 * The contract: "a writer that closed its descriptors before the kill
 * abandons nothing", nor one "whose file is held only ... in a unix(7)
 * message in flight": SCM_KILL_CLOSED commits at the release. A writer
 * that kept its descriptor is killed with it open: nothing committed.
 * An exit commits. 6.12: every case commits PRE bytes.
 */
static const char *scm_self(int how)
{
	int krep[2], kst;
	long r[2] = { -2, -2 }, c0, d;
	pid_t k;

	if (reset_blob())
		return "cannot put the base blob";
	c0 = counter("commits");
	if (pipe(krep))
		return OUT("pipe: %s", en(errno));
	k = fork();
	if (!k) {
		int sv[2], fd = open(BLOB, O_WRONLY);

		r[0] = fd < 0 ? -errno : write(fd, data, PRE);
		r[1] = socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) || send_fd(sv[0], fd) ? -errno : 0;
		if (how != SCM_KILL_KEPT)
			close(fd);
		put(krep[1], r, sizeof(r));
		if (how == SCM_EXIT_CLOSED)
			_exit(0);
		for (;;)
			pause();
	}
	close(krep[1]);
	if (rd(krep[0], r, sizeof(r), 10000))
		r[0] = r[1] = -2;
	if (how != SCM_EXIT_CLOSED)
		kill(k, SIGKILL);
	kst = reap(k, 10000);
	d = settle(c0);
	close(krep[0]);
	return OUT("wrote=%ld sent=%s writer=%s commits=+%ld blob=%s", r[0],
		   r[1] == 0 ? "yes" : en((int)-r[1]), death(kst), d, state());
}

static const char *case_scm_kill_closed(void) { return scm_self(SCM_KILL_CLOSED); }
static const char *case_scm_exit_closed(void) { return scm_self(SCM_EXIT_CLOSED); }
static const char *case_scm_kill_kept(void) { return scm_self(SCM_KILL_KEPT); }

/* ==== a writer that shares its descriptor table with a live process ==== */

/*
 * This process opens the blob; writer K, a clone(CLONE_FILES) child, writes
 * PRE bytes through the descriptor both tables share and is killed.
 *
 * The contract: a file held "through a descriptor table shared with a
 * live process (CLONE_FILES)" is not closed by the writer's death, "and
 * what it wrote is committed at the release": nothing before this
 * process's close, PRE bytes after it. 6.12: the same.
 */
static const char *case_clone_files_kill(void)
{
	int krep[2], kst = -1, fd, cl, e;
	long wrote = -2, c0, before, d;
	pid_t k;

	if (reset_blob())
		return "cannot put the base blob";
	c0 = counter("commits");
	fd = open(BLOB, O_WRONLY);
	if (fd < 0)
		return OUT("open: %s", en(errno));
	if (pipe(krep)) {
		close(fd);
		return OUT("pipe: %s", en(errno));
	}
	fflush(stdout);
	/* x86-64 argument order: flags, stack, parent_tid, child_tid, tls */
	k = syscall(SYS_clone, CLONE_FILES | SIGCHLD, 0, NULL, NULL, 0);
	if (!k) {
		wrote = write(fd, data, PRE);
		put(krep[1], &wrote, sizeof(wrote));
		for (;;)
			pause();
	}
	if (k < 0) {
		e = errno;
		close(fd);
		close(krep[0]);
		close(krep[1]);
		return OUT("clone(CLONE_FILES): %s", en(e));
	} else {
		if (rd(krep[0], &wrote, sizeof(wrote), 10000))
			wrote = -2;
		kill(k, SIGKILL);
		kst = reap(k, 10000);
	}
	/* the table is shared: close the pipe only once K is gone */
	close(krep[0]);
	close(krep[1]);
	before = settle(c0);
	cl = close(fd) ? errno : 0;
	d = settle(c0);
	return OUT("wrote=%ld writer=%s commits-before-close=+%ld close=%s commits=+%ld "
		   "blob=%s", wrote, death(kst), before, cl ? en(cl) : "OK", d, state());
}

/* ==== 7-9: a writer that exec'd ==== */

enum { EXEC_KILL, EXEC_THREAD_KILL, EXEC_EXIT };

struct exec_arg {
	int fd, rep, how;
};

/* Write PRE bytes, then execve(2) this program with "--hold". */
static void *exec_main(void *arg)
{
	struct exec_arg *a = arg;
	long wrote = write(a->fd, data, PRE);
	char rep[16], w[24];

	snprintf(rep, sizeof(rep), "%d", a->rep);
	snprintf(w, sizeof(w), "%ld", wrote);
	execl("/proc/self/exe", "test_bin_attr_killed_writer", "--hold", rep, w,
	      a->how == EXEC_EXIT ? "exit" : "wait", (char *)NULL);
	wrote = -errno;
	put(a->rep, &wrote, sizeof(wrote));
	_exit(1);
}

/*
 * Writer K opens the blob (no O_CLOEXEC), writes PRE bytes and execs (from
 * its leader, or from a second thread that de_thread() makes the leader);
 * the new image reports and is killed, or exits.
 *
 * The contract: an exec is not a kill, and does not close the descriptor;
 * the process that made the last write is killed later: nothing is
 * committed. An exit commits. 6.12: every case commits.
 */
static const char *exec_writer(int how)
{
	int krep[2], kst;
	long wrote = -2, c0, d;
	pid_t k;

	if (reset_blob())
		return "cannot put the base blob";
	c0 = counter("commits");
	if (pipe(krep))
		return OUT("pipe: %s", en(errno));
	k = fork();
	if (!k) {
		struct exec_arg a = { .fd = open(BLOB, O_WRONLY), .rep = krep[1], .how = how };
		pthread_t t;

		close(krep[0]);
		if (how != EXEC_THREAD_KILL)
			exec_main(&a);
		if (!pthread_create(&t, NULL, exec_main, &a))
			pthread_join(t, NULL);
		_exit(2);
	}
	close(krep[1]);
	if (rd(krep[0], &wrote, sizeof(wrote), 20000))
		wrote = -2;
	if (how != EXEC_EXIT)
		kill(k, SIGKILL);
	kst = reap(k, 10000);
	d = settle(c0);
	close(krep[0]);
	return OUT("wrote=%ld writer=%s commits=+%ld blob=%s", wrote, death(kst), d, state());
}

static const char *case_exec_kill(void) { return exec_writer(EXEC_KILL); }
static const char *case_exec_thread_kill(void) { return exec_writer(EXEC_THREAD_KILL); }
static const char *case_exec_exit(void) { return exec_writer(EXEC_EXIT); }

/* The exec'd image: report what was written, then wait to be killed, or exit. */
static int hold_main(char **argv)
{
	long wrote = strtol(argv[3], NULL, 10);

	put(atoi(argv[2]), &wrote, sizeof(wrote));
	if (!strcmp(argv[4], "exit"))
		return 0;
	for (;;)
		pause();
}

/* ==== 10: O_APPEND set and cleared by fcntl(2), RWF_NOAPPEND ==== */

/*
 * write 1000 at 0 (the file position is then 1000), pwrite 100 at 5000 (a
 * hole; the blob ends at 5100), F_SETFL O_APPEND, write 200, pwritev2 50
 * at 10 with RWF_NOAPPEND, F_SETFL 0, write 30, fsync, close.
 *
 * The contract ("O_APPEND and RWF_APPEND writes append"; "the blob ends at
 * the furthest byte written"): the 200 land at 5100, the file position
 * follows them to 5300, RWF_NOAPPEND writes at its offset, the 30 land at
 * 5300: a blob of 5330 bytes. 6.12 writes at the file position: the 200
 * at 1000, the 30 at 1200, a blob of 5100 bytes.
 */
static void put_at(unsigned char *m, size_t *n, const unsigned char *src, size_t len, size_t pos)
{
	memcpy(m + pos, src, len);
	if (pos + len > *n)
		*n = pos + len;
}

static const char *case_append_fcntl(void)
{
	unsigned char *a = calloc(1, 8192), *b = calloc(1, 8192), *got = NULL;
	struct iovec iov = { data + 9000, 50 };
	size_t na = 0, nb = 0;
	ssize_t w1, p1, w2, p2, w3;
	int fd, s1, s2, e, c;
	const char *blob;
	long n;

	if (!a || !b || reset_blob())
		return "cannot put the base blob";
	fd = open(BLOB, O_WRONLY);
	w1 = write(fd, data, 1000);
	p1 = pwrite(fd, data + 5000, 100, 5000);
	s1 = fcntl(fd, F_SETFL, O_APPEND) ? errno : 0;
	w2 = write(fd, data + 7000, 200);
	p2 = pwritev2(fd, &iov, 1, 10, RWF_NOAPPEND);
	s2 = fcntl(fd, F_SETFL, 0) ? errno : 0;
	w3 = write(fd, data + 11000, 30);
	e = fsync(fd) ? errno : 0;
	c = close(fd) ? errno : 0;

	/* appends at the furthest byte */
	put_at(a, &na, data, 1000, 0);
	put_at(a, &na, data + 5000, 100, 5000);
	put_at(a, &na, data + 7000, 200, 5100);
	put_at(a, &na, data + 9000, 50, 10);
	put_at(a, &na, data + 11000, 30, 5300);
	/* 6.12: at the file position */
	put_at(b, &nb, data, 1000, 0);
	put_at(b, &nb, data + 5000, 100, 5000);
	put_at(b, &nb, data + 7000, 200, 1000);
	put_at(b, &nb, data + 9000, 50, 10);
	put_at(b, &nb, data + 11000, 30, 1200);
	n = blob_slurp(BLOB, &got);
	blob = n == (long)na && !memcmp(got, a, na) ? "appended-at-end" :
	       n == (long)nb && !memcmp(got, b, nb) ? "written-at-position" : "other";
	if (!strcmp(blob, "other"))
		printf("# the blob holds %ld bytes\n", n);
	free(got);
	free(a);
	free(b);
	return OUT("w=%zd p@5000=%zd setfl=%s append=%zd noappend@10=%zd unsetfl=%s w=%zd "
		   "fsync=%s close=%s blob=%s", w1, p1, en(s1), w2, p2, en(s2), w3, en(e),
		   en(c), blob);
}

/* ==== 11: calls that neither write nor commit ==== */

/*
 * write PRE bytes; sync_file_range(2), syncfs(2), sync(2) and a
 * copy_file_range(2) of 64 bytes from the item's digest attribute (same
 * super block, so the VFS does not refuse it with EXDEV) commit nothing;
 * a child that inherited the file writes 1000 bytes at PRE with
 * RLIMIT_FSIZE at 100 (configfs fails writes only with EFBIG at
 * cb_max_size, ENOMEM, EFAULT: the write stores, no SIGXFSZ) and exits;
 * fsync(2) then commits once (6.12: EINVAL, the close commits).
 */
static const char *case_no_commit_calls(void)
{
	int fd, dig, txt, sfr, sfs, e, c, st;
	long c0, before, after, total;
	ssize_t w, cfr, cft;
	pid_t k;

	if (reset_blob())
		return "cannot put the base blob";
	c0 = counter("commits");
	fd = open(BLOB, O_WRONLY);
	dig = open(DIGEST, O_RDONLY);
	txt = open(ITEM "/commits", O_RDONLY);
	w = write(fd, data, PRE);
	sfr = sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
			      SYNC_FILE_RANGE_WAIT_AFTER) ? errno : 0;
	sfs = syncfs(fd) ? errno : 0;
	sync();
	cfr = copy_file_range(dig, NULL, fd, NULL, 64, 0);
	if (cfr < 0)
		cfr = -errno;
	/* a text attribute's i_size is PAGE_SIZE: the VFS tries to splice */
	cft = copy_file_range(txt, NULL, fd, NULL, 64, 0);
	if (cft < 0)
		cft = -errno;
	before = counter("commits") - c0;
	k = fork();
	if (!k) {
		struct rlimit rl = { 100, 100 };

		if (setrlimit(RLIMIT_FSIZE, &rl))
			_exit(100);
		_exit(pwrite(fd, data + PRE, 1000, PRE) == 1000 ? 0 : errno);
	}
	st = reap(k, 10000);
	e = fsync(fd) ? errno : 0;
	after = counter("commits") - c0;
	c = close(fd) ? errno : 0;
	close(dig);
	close(txt);
	total = settle(c0);
	return OUT("w=%zd sync_file_range=%s syncfs=%s copy_file_range(digest)=%s "
		   "copy_file_range(commits)=%s commits-before-fsync=+%ld fsize-limited-child=%s "
		   "fsync=%s commits-after-fsync=+%ld close=%s commits=+%ld blob=%s", w, en(sfr),
		   en(sfs), cfr >= 0 ? (cfr ? "some" : "0") : en((int)-cfr),
		   cft >= 0 ? (cft ? "some" : "0") : en((int)-cft), before, death(st), en(e),
		   after, en(c), total, state());
}

/* ==== 12: the OOM killer ==== */

static int cg_mounted, cg_enabled;

/* A cgroup of memory.max 16M; NULL, or why there is none. */
static const char *cg_setup(void)
{
	if (access(CG "/cgroup.controllers", F_OK)) {
		if (mount("none", CG, "cgroup2", 0, NULL))
			return "cannot mount cgroup2 at " CG;
		cg_mounted = 1;
	}
	if (!has_word(CG "/cgroup.controllers", "memory"))
		return "no memory controller in cgroup2 at " CG;
	if (!has_word(CG "/cgroup.subtree_control", "memory")) {
		if (write_str(CG "/cgroup.subtree_control", "+memory"))
			return "cannot enable +memory in " CG "/cgroup.subtree_control";
		cg_enabled = 1;
	}
	rmdir(CGX);
	if (mkdir(CGX, 0755))
		return "cannot mkdir " CGX;
	if (write_str(CGX "/memory.max", "16M") || read_long(CGX "/memory.max") != 16 << 20) {
		rmdir(CGX);
		return "cannot set memory.max of " CGX " to 16M";
	}
	/* no swap to escape to, where there is swap accounting */
	write_str(CGX "/memory.swap.max", "0");
	return NULL;
}

static void cg_teardown(void)
{
	int i;

	for (i = 0; i < 50 && rmdir(CGX) && errno == EBUSY; i++)
		usleep(100000);
	if (cg_enabled)
		write_str(CG "/cgroup.subtree_control", "-memory");
	if (cg_mounted)
		umount(CG);
	cg_enabled = cg_mounted = 0;
}

/*
 * Writer K, moved into the cgroup, writes PRE bytes and then touches
 * anonymous memory until the memory cgroup's OOM killer kills it (the
 * writer's own pages, not configfs' buffer, cross memory.max).
 *
 * The contract: a writer killed by a signal (the OOM killer's SIGKILL)
 * commits nothing. 6.12: the release commits PRE bytes.
 */
static const char *case_oom_killed(void)
{
	int go[2], krep[2], kst;
	long wrote = -2, c0, d;
	const char *moved;
	char pidbuf[16], g = 'g';
	pid_t k;

	if (reset_blob())
		return "cannot put the base blob";
	c0 = counter("commits");
	if (pipe(go) || pipe(krep))
		return OUT("pipe: %s", en(errno));
	k = fork();
	if (!k) {
		char c;
		int fd, i;

		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		fd = open(BLOB, O_WRONLY);
		wrote = fd < 0 ? -errno : write(fd, data, PRE);
		put(krep[1], &wrote, sizeof(wrote));
		for (i = 0; i < 1024; i++) {
			char *m = malloc(1 << 20);

			if (!m)
				break;
			memset(m, i | 1, 1 << 20);
		}
		_exit(3);
	}
	close(go[0]);
	close(krep[1]);
	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)k);
	moved = write_str(CGX "/cgroup.procs", pidbuf) ? "no" : "yes";
	put(go[1], &g, 1);
	if (rd(krep[0], &wrote, sizeof(wrote), 20000))
		wrote = -2;
	kst = reap(k, 120000);
	d = settle(c0);
	close(go[1]);
	close(krep[0]);
	return OUT("moved=%s wrote=%ld writer=%s commits=+%ld blob=%s", moved, wrote,
		   death(kst), d, state());
}

/* ==== the run ==== */

struct tcase {
	const char *what;
	const char *(*run)(void);
	const char *ours;	/* the contract */
	const char *v612;	/* 6.12's configfs */
};

static const struct tcase cases[] = {
	{ "io_uring SQPOLL: a process writes through the ring another created and is "
	  "killed: the write was the creator's; its close commits",
	  case_sqpoll_submitter_killed,
	  "submitted=1 wrote=3000 submitter=SIGKILL creator-close=OK creator=exit(0) "
	  "commits=+1 blob=pre",
	  "submitted=1 wrote=3000 submitter=SIGKILL creator-close=OK creator=exit(0) "
	  "commits=+1 blob=pre" },
	{ "O_APPEND set by fcntl(2) after a hole, RWF_NOAPPEND, O_APPEND cleared",
	  case_append_fcntl,
	  "w=1000 p@5000=100 setfl=OK append=200 noappend@10=50 unsetfl=OK w=30 fsync=OK "
	  "close=OK blob=appended-at-end",
	  "w=1000 p@5000=100 setfl=OK append=200 noappend@10=50 unsetfl=OK w=30 fsync=EINVAL "
	  "close=OK blob=written-at-position" },
	{ "sync_file_range(2), syncfs(2), sync(2), copy_file_range(2) from the digest, a write "
	  "past RLIMIT_FSIZE: nothing commits but fsync(2)", case_no_commit_calls,
	  "w=3000 sync_file_range=OK syncfs=OK copy_file_range(digest)=0 "
	  "copy_file_range(commits)=EINVAL commits-before-fsync=+0 fsize-limited-child=exit(0) "
	  "fsync=OK commits-after-fsync=+1 close=OK commits=+1 "
	  "blob=pre4000",
	  "w=3000 sync_file_range=OK syncfs=OK copy_file_range(digest)=0 "
	  "copy_file_range(commits)=EINVAL commits-before-fsync=+0 fsize-limited-child=exit(0) "
	  "fsync=EINVAL commits-after-fsync=+0 close=OK commits=+1 "
	  "blob=pre4000" },
	{ "a writer execs (leader), then is killed: nothing committed", case_exec_kill,
	  "wrote=3000 writer=SIGKILL commits=+0 blob=old",
	  "wrote=3000 writer=SIGKILL commits=+1 blob=pre" },
	{ "a second thread writes and execs (de_thread), then the process is killed",
	  case_exec_thread_kill,
	  "wrote=3000 writer=SIGKILL commits=+0 blob=old",
	  "wrote=3000 writer=SIGKILL commits=+1 blob=pre" },
	{ "a writer execs, then exits: committed", case_exec_exit,
	  "wrote=3000 writer=exit(0) commits=+1 blob=pre",
	  "wrote=3000 writer=exit(0) commits=+1 blob=pre" },
	{ "a writer sends its file over SCM_RIGHTS to its own socketpair, closes its "
	  "descriptor and is killed: it closed before the kill, its death only frees the "
	  "file in flight; committed at the release", case_scm_kill_closed,
	  "wrote=3000 sent=yes writer=SIGKILL commits=+1 blob=pre",
	  "wrote=3000 sent=yes writer=SIGKILL commits=+1 blob=pre" },
	{ "the same, but the writer exits: committed", case_scm_exit_closed,
	  "wrote=3000 sent=yes writer=exit(0) commits=+1 blob=pre",
	  "wrote=3000 sent=yes writer=exit(0) commits=+1 blob=pre" },
	{ "the same, the writer keeping its descriptor too, killed: nothing committed",
	  case_scm_kill_kept,
	  "wrote=3000 sent=yes writer=SIGKILL commits=+0 blob=old",
	  "wrote=3000 sent=yes writer=SIGKILL commits=+1 blob=pre" },
	{ "a clone(CLONE_FILES) child writes through the table it shares with this "
	  "process and is killed: the file stays open, committed at this process's close",
	  case_clone_files_kill,
	  "wrote=3000 writer=SIGKILL commits-before-close=+0 close=OK commits=+1 blob=pre",
	  "wrote=3000 writer=SIGKILL commits-before-close=+0 close=OK commits=+1 blob=pre" },
	{ "io_uring: openat of a FIFO (IOSQE_ASYNC, hard link) then IORING_OP_FSYNC of the "
	  "writer's file; the writer is killed: nothing committed", case_uring_linked_fsync,
	  "wrote=3000 submitted=2 cqe-before-kill=no writer=SIGKILL commits=+0 blob=old",
	  "wrote=3000 submitted=2 cqe-before-kill=no writer=SIGKILL commits=+1 blob=pre" },
	{ "io_uring: openat of a FIFO (IOSQE_ASYNC, hard link) then IORING_OP_CLOSE of the "
	  "writer's only descriptor; the writer is killed: nothing committed",
	  case_uring_linked_close,
	  "wrote=3000 submitted=2 cqe-before-kill=no writer=SIGKILL commits=+0 blob=old",
	  "wrote=3000 submitted=2 cqe-before-kill=no writer=SIGKILL commits=+1 blob=pre" },
	{ "AIO: the last writer's IOCB_CMD_FSYNC waits behind another process's stalled "
	  "write; the writer is killed, then the staller: the fsync queued before the kill "
	  "runs in a kernel worker and commits the writer's bytes, once",
	  case_aio_fsync_after_kill,
	  "wrote=3000 stalled=yes aio-submit=OK events-before-kill=0 writer=SIGKILL "
	  "staller=SIGKILL commits-before-fsync=+1 fsync=OK commits=+1 blob=pre",
	  "wrote=3000 stalled=yes aio-submit=EINVAL events-before-kill=-1 writer=SIGKILL "
	  "staller=SIGKILL commits-before-fsync=+0 fsync=EINVAL commits=+1 blob=pre+zeroes" },
	{ "io_uring: the last writer's IORING_OP_FSYNC waits in a worker behind another "
	  "process's stalled write; the writer is killed: the worker's fsync fails with "
	  "EINTR, the upload is abandoned", case_uring_fsync_waiting_killed,
	  "wrote=3000 stalled=yes submitted=1 worker-waiting=yes writer=SIGKILL "
	  "staller=SIGKILL fsync-cqe=EINTR fsync=ECANCELED close=OK commits=+0 blob=old",
	  "wrote=3000 stalled=yes submitted=1 worker-waiting=no writer=SIGKILL "
	  "staller=SIGKILL fsync-cqe=EINVAL fsync=EINVAL close=OK commits=+1 "
	  "blob=pre+zeroes" },
};

static const struct tcase memcg_case = {
	"memory.max 16M: a writer killed by the memory cgroup's OOM killer: nothing committed",
	case_oom_killed,
	"moved=yes wrote=3000 writer=SIGKILL commits=+0 blob=old",
	"moved=yes wrote=3000 writer=SIGKILL commits=+1 blob=pre",
};

static void run_one_case(const struct tcase *t)
{
	const char *who = pristine ? "6.12" : "ours";
	const char *want = pristine ? t->v612 : t->ours;
	const char *got = t->run();

	if (!strncmp(got, "skip: ", 6)) {
		printf("ok %d - %s: %s # SKIP %s\n", ++tap_n, who, t->what, got + 6);
		return;
	}
	tap_result(!strcmp(got, want), "%s: %s: %s", who, t->what, got);
	if (strcmp(got, want))
		printf("# want: %s\n", want);
}

static void run_cases(void)
{
	const char *why;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_one_case(&cases[i]);
	why = cg_setup();
	if (why)
		printf("ok %d - %s: %s # SKIP %s\n", ++tap_n, pristine ? "6.12" : "ours",
		       memcg_case.what, why);
	else
		run_one_case(&memcg_case);
	cg_teardown();
}

/* Load the sample on configfs loaded by @configfs; mkdir the item. */
static int setup(const char *configfs)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd),
		 "%s && { mountpoint -q /sys/kernel/config || "
		 "mount -t configfs none /sys/kernel/config; } && "
		 "insmod /lib/modules/$(uname -r)/extra/" SAMPLE ".ko max_blob=4194304",
		 configfs);
	if (system(cmd))
		return -1;
	rmdir(ITEM);
	if (mkdir(ITEM, 0755))
		return -1;
	return reset_blob();
}

/* unload module @m, retrying for 5 s (a module can stay busy a moment) */
#define RMMOD(m) "{ for i in $(seq 25); do rmmod " m " 2>/dev/null && break; sleep 0.2; " \
		 "done; test ! -e /sys/module/" m "; }"

/* rmdir the item and unload the sample; 0 when both went. */
static int teardown(void)
{
	if (rmdir(ITEM))
		return -1;
	return system(RMMOD(SAMPLE)) ? -1 : 0;
}

int main(int argc, char **argv)
{
	size_t i;
	int u;

	if (argc == 5 && !strcmp(argv[1], "--hold"))
		return hold_main(argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	data = malloc(DATA);
	if (!data)
		return 1;
	blob_fill(data, DATA, 41);
	for (i = 0; i < sizeof(base); i++)
		base[i] = 0x3c ^ (unsigned char)(i * 5);

	u = syscall(SYS_userfaultfd, O_CLOEXEC);
	if (u < 0)
		no_uffd = "no userfaultfd(2)";
	else
		close(u);
	unlink(FIFO);
	if (mkfifo(FIFO, 0600))
		no_fifo = "cannot mkfifo " FIFO;

	/* a sample left loaded by another run would refuse our insmod */
	if (!access("/sys/module/" SAMPLE, F_OK) && system(RMMOD(SAMPLE))) {
		tap_result(0, "unload the " SAMPLE " another run left loaded");
		return tap_done();
	}
	if (setup("modprobe configfs")) {
		tap_result(0, "load configfs and " SAMPLE ", mkdir " ITEM);
		return tap_done();
	}
	run_cases();
	tap_is_long(teardown(), 0, "ours: rmdir of the item, the sample unloads");

	/* 6.12's configfs takes the place of ours, which must go first */
	if (access(PRISTINE, R_OK)) {
		tap_skip("6.12's configfs: the same cases", "no " PRISTINE);
	} else if (system("umount /sys/kernel/config")) {
		tap_skip("6.12's configfs: the same cases", "configfs cannot be unmounted");
	} else if (system(RMMOD("configfs"))) {
		tap_skip("6.12's configfs: the same cases",
			 "our configfs stays loaded (another module uses it)");
	} else if (setup("insmod " PRISTINE)) {
		tap_result(0, "load 6.12's configfs and " SAMPLE);
		rmdir(ITEM);
		if (system(RMMOD(SAMPLE) "; umount /sys/kernel/config; " RMMOD("configfs_pristine")))
			printf("# cleaning up after the failed load failed\n");
	} else {
		pristine = 1;
		run_cases();
		tap_is_long(teardown(), 0, "6.12: rmdir of the item, the sample unloads");
		tap_is_long(system("umount /sys/kernel/config && " RMMOD("configfs_pristine")), 0,
			    "6.12's configfs unloads");
	}
	tap_is_long(system("modprobe configfs && { mountpoint -q /sys/kernel/config || "
			   "mount -t configfs none /sys/kernel/config; }"), 0, "ours is back");
	unlink(FIFO);
	free(data);
	return tap_done();
}
