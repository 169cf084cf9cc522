// SPDX-License-Identifier: GPL-2.0
// bench-ldlibs: -luring -lpthread
/*
 * Corners of the configfs binary attribute contract
 * (Documentation/filesystems/configfs.rst, "Reading and writing a binary
 * attribute"), through the lk45_blobstore sample, in corners the other
 * tests leave alone: an empty first read (asked again at the next read),
 * readv(2) with many small iovecs and a fault in the middle, fsync(2)
 * racing write(2) and close(2) on one open file, write after fsync then
 * close, O_RDWR readers calling fsync, SCM_RIGHTS (in flight and
 * received), a writer killed mid-upload (its part is abandoned), the last
 * descriptor dropped by exit, dup2(2), close_range(2) and close-on-exec
 * (committed silently: close(2) reports nothing, only fsync(2) does),
 * O_PATH, io_uring at cb_max_size, io_uring fixed files and
 * IORING_OP_CLOSE, thousands of opens, readers racing rmdir(2), and a
 * version larger than cb_max_size.
 */
#define _GNU_SOURCE
#include <liburing.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "blob.h"
#include "tap.h"

#define ITEM	STORE_ROOT "/atk"
#define BLOB	ITEM "/blob"
#define IMAGE	ITEM "/image"
#define ITEM2	STORE_ROOT "/atk2"
#define MIB	(1u << 20)

static unsigned char *data;	/* 4 MiB of pattern */

#define ERR(x) ((x) < 0 ? errno : 0)

static long counter(const char *name)
{
	return blob_counter(ITEM, name);
}

/* poll a counter up to 10 s for @want (for commits made by kernel threads) */
static long counter_wait(const char *name, long want)
{
	long v = counter(name);
	int i;

	for (i = 0; i < 100 && v != want; i++) {
		usleep(100000);
		v = counter(name);
	}
	return v;
}

static int blob_is(const char *path, const void *want, size_t len)
{
	unsigned char *got = NULL;
	long n = blob_slurp(path, &got);
	int same = n == (long)len && (!len || !memcmp(got, want, len));

	free(got);
	return same;
}

static long blob_len(void)
{
	unsigned char *got = NULL;
	long n = blob_slurp(BLOB, &got);

	free(got);
	return n;
}

static long refcnt(void)
{
	FILE *f = fopen("/sys/module/lk45_blobstore/refcnt", "r");
	long n = -1;

	if (f) {
		if (fscanf(f, "%ld", &n) != 1)
			n = -1;
		fclose(f);
	}
	return n;
}

/* Commit @len bytes to blob with fsync(2); 0 when every call succeeded. */
static int put_blob(const void *p, size_t len)
{
	struct upload u = blob_commit(BLOB, p, len, 65536);

	return u.open_err || u.write_err || u.fsync_err || u.close_err ? -1 : 0;
}

/* An image whose checksum is off: its commit fails with EBADMSG. */
static unsigned char *bad_image(size_t *size)
{
	return blob_image(data, 500, size, 1);
}

/* ---- 1: an empty first read takes no version ---- */

static void test_empty_version(void)
{
	unsigned char buf[64], *img;
	size_t size;
	struct upload u;
	int fd;

	/* the item is fresh: its blob is empty */
	fd = open(BLOB, O_RDONLY);
	tap_is_long(read(fd, buf, sizeof(buf)), 0,
		    "empty blob: the first read of an open file returns 0");
	tap_is_long(put_blob(data, 5000), 0, "another open file commits 5000 bytes");
	tap_result(read(fd, buf, sizeof(buf)) == sizeof(buf) && !memcmp(buf, data, sizeof(buf)),
		   "an empty attribute is asked for again: the next read gets the 5000-byte "
		   "version's first 64 bytes");
	tap_is_long(put_blob(data + 1, 3000), 0, "another open file commits 3000 other bytes");
	tap_result(pread(fd, buf, sizeof(buf), 4900) == sizeof(buf) &&
		   !memcmp(buf, data + 4900, sizeof(buf)),
		   "that read took its copy: pread(2) at 4900 still reads the 5000-byte version");
	close(fd);

	/* the other way round: a non-empty version stays when the blob empties */
	put_blob(data, 5000);
	fd = open(BLOB, O_RDONLY);
	tap_is_long(read(fd, buf, 10), 10, "blob of 5000: the first read takes the version");
	img = blob_image(data, 0, &size, 0);	/* an image of no payload */
	u = blob_commit(IMAGE, img, size, size);
	free(img);
	tap_is_long(u.fsync_err, 0, "an image with an empty payload commits");
	tap_is_long(blob_len(), 0, "the stored blob is now empty");
	tap_result(pread(fd, buf, 64, 4900) == 64 && !memcmp(buf, data + 4900, 64),
		   "the open file still reads its 5000-byte version at 4900");
	close(fd);
}

/* ---- 2: readv(2) with many small iovecs and a fault in the middle ---- */

#define NIOV	401
#define ISZ	13

static void test_readv_fault(void)
{
	unsigned char *m, *got = malloc(NIOV * ISZ), buf[100];
	struct iovec iov[NIOV];
	ssize_t r;
	int fd, i, straddle = 0, ok = 1;

	put_blob(data, 8000);
	m = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	mprotect(m + 2 * 4096, 4096, PROT_NONE);
	/* iovecs 0..199 run across the boundary of pages 0 and 1 */
	for (i = 0; i < 200; i++) {
		iov[i] = (struct iovec){ m + 4096 - 1305 + i * ISZ, ISZ };
		straddle += (((uintptr_t)iov[i].iov_base) >> 12) !=
			    (((uintptr_t)iov[i].iov_base + ISZ - 1) >> 12);
	}
	iov[200] = (struct iovec){ m + 2 * 4096 + 5, ISZ };	/* PROT_NONE */
	for (i = 201; i < NIOV; i++)
		iov[i] = (struct iovec){ m + 3 * 4096 + (i - 201) * ISZ, ISZ };

	fd = open(BLOB, O_RDONLY);
	r = readv(fd, iov, NIOV);
	tap_is_long(r, 200 * ISZ,
		    "readv of 401 iovecs of 13 bytes, the 201st unmapped: returns the 2600 bytes before it");
	for (i = 0; i < 200; i++)
		memcpy(got + i * ISZ, iov[i].iov_base, ISZ);
	tap_result(straddle == 1 && !memcmp(got, data, 200 * ISZ),
		   "those 2600 bytes, one iovec straddling a page boundary, are the blob's first");
	tap_result(read(fd, buf, 100) == 100 && !memcmp(buf, data + 2600, 100),
		   "the next read(2) goes on at 2600");
	iov[0] = (struct iovec){ m + 2 * 4096, 16 };
	errno = 0;
	tap_is_long(ERR(readv(fd, iov, 2)), EFAULT, "readv whose first iovec faults fails with EFAULT");
	ok = read(fd, buf, 100) == 100 && !memcmp(buf, data + 2700, 100);
	tap_result(ok, "and leaves the position at 2700");
	close(fd);
	munmap(m, 4 * 4096);
	free(got);
}

/* ---- 3: fsync(2) in one thread while another writes the same open file ---- */

#define WCHUNK	256
#define NCHUNK	(MIB / WCHUNK)

struct digest {
	uint64_t size;
	uint32_t crc, commits;
} __attribute__((packed));

static int read_digest(struct digest *d)
{
	int fd = open(ITEM "/digest", O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, d, sizeof(*d));

	if (fd >= 0)
		close(fd);
	return n == sizeof(*d) ? 0 : -1;
}

struct wf {
	int fd;
	volatile int done;
	long write_err, fsyncs, fsync_err, torn, grew;
	long long torn_size;
	uint32_t *prefix_crc;	/* crc of data[0, k * WCHUNK) */
};

static void *wf_writer(void *arg)
{
	struct wf *s = arg;
	size_t off;

	for (off = WCHUNK; off < MIB; off += WCHUNK)	/* the first was written before */
		if (write(s->fd, data + off, WCHUNK) != WCHUNK)
			s->write_err++;
	s->done = 1;
	return NULL;
}

static void *wf_syncer(void *arg)
{
	struct wf *s = arg;
	uint64_t last = 0;
	struct digest d;

	while (!s->done) {
		if (fsync(s->fd))
			s->fsync_err++;
		s->fsyncs++;
		if (read_digest(&d) || d.size % WCHUNK || d.size > MIB ||
		    d.crc != s->prefix_crc[d.size / WCHUNK]) {
			if (!s->torn++)
				s->torn_size = d.size;
		}
		else if (d.size > last)
			s->grew++;
		last = d.size;
	}
	return NULL;
}

static void test_fsync_races_write(void)
{
	struct wf s = { 0 };
	pthread_t a, b;
	uint32_t crc = ~0u;
	size_t k, i;

	s.prefix_crc = malloc((NCHUNK + 1) * sizeof(uint32_t));
	s.prefix_crc[0] = crc;
	for (k = 0; k < NCHUNK; k++) {
		for (i = k * WCHUNK; i < (k + 1) * WCHUNK; i++) {
			int j;

			crc ^= data[i];
			for (j = 0; j < 8; j++)
				crc = (crc >> 1) ^ (0xedb88320u & -(crc & 1));
		}
		s.prefix_crc[k + 1] = crc;
	}
	put_blob(data + 7, 100);
	s.fd = open(BLOB, O_WRONLY);
	if (write(s.fd, data, WCHUNK) != WCHUNK)
		s.write_err++;
	pthread_create(&b, NULL, wf_syncer, &s);
	pthread_create(&a, NULL, wf_writer, &s);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("# %ld fsyncs during %d writes; the stored blob grew %ld times\n", s.fsyncs,
	       (int)NCHUNK, s.grew);
	if (s.torn)
		printf("# first stored size that was no prefix: %lld\n", s.torn_size);
	tap_is_long(s.write_err, 0, "4096 writes of 256 bytes racing fsync(2) on the same open file all succeed");
	tap_is_long(s.fsync_err, 0, "every racing fsync(2) returns 0");
	tap_is_long(s.torn, 0, "every commit stored a whole prefix of the upload (digest size and crc)");
	tap_is_long(close(s.fd), 0, "the final close(2) returns 0");
	tap_result(blob_is(BLOB, data, MIB), "and the stored blob is the whole 1 MiB upload");
	free(s.prefix_crc);
}

/* ---- 4: fsync(2) racing close(2) of the same descriptor ---- */

#define RACE_ROUNDS 200

struct fc {
	int fd;
	volatile int go, ready;
	int err;
};

static void *fc_syncer(void *arg)
{
	struct fc *s = arg;

	s->ready = 1;
	while (!s->go)
		;
	s->err = fsync(s->fd) ? errno : 0;
	return NULL;
}

static void test_fsync_races_close(void)
{
	long rejects0, odd = 0, by_fsync = 0, by_release = 0;
	unsigned char *img;
	size_t size;
	int i;

	rejects0 = counter("rejects");
	img = bad_image(&size);
	for (i = 0; i < RACE_ROUNDS; i++) {
		struct fc s = { 0 };
		pthread_t t;
		volatile int k;
		int c;

		s.fd = open(IMAGE, O_WRONLY);
		write(s.fd, img, size);
		pthread_create(&t, NULL, fc_syncer, &s);
		while (!s.ready)
			;
		s.go = 1;
		for (k = 0; k < (i % 40) * 50; k++)
			;
		c = close(s.fd) ? errno : 0;
		pthread_join(t, NULL);
		if ((s.err != EBADMSG && s.err != EBADF) || c)
			odd++;
		by_fsync += s.err == EBADMSG;
		by_release += s.err == EBADF;
	}
	free(img);
	printf("# of %d rounds: fsync EBADMSG: %ld; fsync EBADF (close first, the release "
	       "committed): %ld\n", RACE_ROUNDS, by_fsync, by_release);
	tap_is_long(odd, 0, "fsync(2) racing close(2): fsync returned only EBADMSG or EBADF, "
		    "close(2) only 0");
	tap_is_long(counter("rejects") - rejects0, RACE_ROUNDS,
		    "one rejected commit per round: by fsync(2), or else by the release, never both");
}

/* ---- 5: write after fsync, then close; an O_RDWR reader's fsync ---- */

static void test_recommit_and_rdwr(void)
{
	long commits0;
	char c;
	int fd, s, cl;

	commits0 = counter("commits");
	fd = open(BLOB, O_WRONLY);
	write(fd, data + 3, 1000);
	s = fsync(fd) ? errno : 0;
	write(fd, data + 1003, 500);
	cl = close(fd) ? errno : 0;
	tap_result(!s && !cl, "write, fsync, write, close: fsync and close(2) return 0");
	tap_is_long(counter("commits") - commits0, 2, "two commits");
	tap_result(blob_is(BLOB, data + 3, 1500), "the close(2) committed the whole 1500 bytes");

	commits0 = counter("commits");
	fd = open(BLOB, O_RDWR);
	tap_is_long(read(fd, &c, 1), 1, "O_RDWR: a first read decides for reading");
	tap_is_long(fsync(fd), 0, "fsync(2) of the reader returns 0");
	errno = 0;
	tap_is_long(ERR(write(fd, data, 10)), ETXTBSY, "a write then fails with ETXTBSY");
	errno = 0;
	tap_is_long(ERR(fdatasync(fd)), EINVAL, "fdatasync(2) after the refused write: EINVAL");
	tap_is_long(close(fd), 0, "close(2) returns 0");
	tap_is_long(counter("commits") - commits0, 0, "the reader committed nothing");
}

/* ---- 6: SCM_RIGHTS ---- */

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

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &m, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	char x;
	struct iovec iov = { &x, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c;
	int fd = -1;

	if (recvmsg(sock, &m, 0) != 1)
		return -1;
	c = CMSG_FIRSTHDR(&m);
	if (c && c->cmsg_type == SCM_RIGHTS)
		memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

static void test_scm_rights(void)
{
	long rejects0 = counter("rejects");
	unsigned char *img;
	size_t size;
	int sv[2], go[2], fd, st;
	pid_t pid;
	char x = 'x';

	img = bad_image(&size);

	/* in flight, never received */
	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	fd = open(IMAGE, O_WRONLY);
	write(fd, img, size);
	tap_is_long(send_fd(sv[0], fd), 0, "SCM_RIGHTS: the bad image's descriptor is sent");
	tap_is_long(close(fd), 0, "the sender's close(2) returns 0 (the message holds the file)");
	tap_is_long(counter("rejects") - rejects0, 0, "and commits nothing");
	close(sv[0]);
	close(sv[1]);
	tap_is_long(counter_wait("rejects", rejects0 + 1) - rejects0, 1,
		    "closing the socket with the message unread commits it once");

	/* received by another process, which closes last */
	rejects0 = counter("rejects");
	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	pipe(go);
	pid = fork();
	if (!pid) {
		int mine = recv_fd(sv[1]), e;

		read(go[0], &x, 1);
		if (mine < 0)
			_exit(255);
		e = fsync(mine) ? errno : 0;
		_exit(close(mine) ? 254 : e);
	}
	fd = open(IMAGE, O_WRONLY);
	write(fd, img, size);
	send_fd(sv[0], fd);
	tap_is_long(close(fd), 0, "the sender's close(2), the receiver holding it, returns 0");
	write(go[1], &x, 1);
	waitpid(pid, &st, 0);
	tap_is_long(WIFEXITED(st) ? WEXITSTATUS(st) : -1, EBADMSG,
		    "the receiver's fsync(2) returns EBADMSG, its close(2) 0");
	tap_is_long(counter("rejects") - rejects0, 1, "one rejected commit");
	close(sv[0]);
	close(sv[1]);
	close(go[0]);
	close(go[1]);

	/* received, then the receiver, which never wrote, is killed */
	rejects0 = counter("rejects");
	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	pipe(go);
	pid = fork();
	if (!pid) {
		int mine = recv_fd(sv[1]);

		write(go[1], &x, 1);
		pause();
		_exit(mine);
	}
	fd = open(IMAGE, O_WRONLY);
	write(fd, img, size);
	send_fd(sv[0], fd);
	close(fd);
	read(go[0], &x, 1);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	tap_result(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
		   "a receiver holding the last reference is killed");
	tap_is_long(counter_wait("rejects", rejects0 + 1) - rejects0, 1,
		    "it did not write: its exit commits the sender's image (one reject)");
	close(sv[0]);
	close(sv[1]);
	close(go[0]);
	close(go[1]);
	free(img);
}

/* ---- 7: the last descriptor goes without close(2) ---- */

/*
 * A writer killed mid-upload: its exit abandons what it wrote since the
 * last commit, even where it holds the last reference.
 */

static void test_killed_writer(void)
{
	long commits0;
	int ready[2], st;
	pid_t pid;
	char x;

	put_blob(data + 9, 100);
	commits0 = counter("commits");
	pipe(ready);
	pid = fork();
	if (!pid) {
		int fd = open(BLOB, O_WRONLY);

		write(fd, data, 3000);	/* of a 10000-byte upload */
		write(ready[1], "x", 1);
		pause();
		_exit(0);
	}
	read(ready[0], &x, 1);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	tap_result(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "a writer is killed after 3000 bytes");
	tap_is_long(counter("commits") - commits0, 0,
		    "its exit, dropping the last reference, commits nothing");
	tap_result(blob_is(BLOB, data + 9, 100), "the stored blob is still the one before");
	close(ready[0]);
	close(ready[1]);
}

enum drop { DROP_EXIT, DROP_DUP2, DROP_CLOSE_RANGE, DROP_EXEC };

static const char *const drop_name[] = {
	"the writer's exit", "dup2(2) over it", "close_range(2)", "execve(2) of an O_CLOEXEC descriptor",
};

/* Upload a bad image and drop the descriptor by @how; returns the call's result. */
static long drop_bad_image(enum drop how)
{
	unsigned char *img;
	size_t size;
	long r = 0;
	int fd, st, nul;
	pid_t pid;

	img = bad_image(&size);
	if (how == DROP_EXIT || how == DROP_EXEC) {
		pid = fork();
		if (!pid) {
			fd = open(IMAGE, O_WRONLY | (how == DROP_EXEC ? O_CLOEXEC : 0));
			write(fd, img, size);
			if (how == DROP_EXEC)
				execl("/bin/true", "true", (char *)NULL);
			_exit(0);
		}
		waitpid(pid, &st, 0);
		r = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	} else {
		fd = open(IMAGE, O_WRONLY);
		write(fd, img, size);
		if (how == DROP_DUP2) {
			nul = open("/dev/null", O_WRONLY);
			r = dup2(nul, fd) == fd ? 0 : -errno;
			close(nul);
			close(fd);
		} else {
			r = syscall(SYS_close_range, fd, fd, 0) ? -errno : 0;
		}
	}
	free(img);
	return r;
}

static void test_silent_drops(void)
{
	char what[160];
	int how;

	for (how = DROP_EXIT; how <= DROP_EXEC; how++) {
		long rejects0 = counter("rejects");

		snprintf(what, sizeof(what), "bad image dropped by %s: the call succeeds",
			 drop_name[how]);
		tap_is_long(drop_bad_image(how), 0, what);
		snprintf(what, sizeof(what), "%s: the bad image was committed once, and the "
			 "outcome reached nobody (as documented: fsync(2) first to know it)",
			 drop_name[how]);
		tap_is_long(counter("rejects") - rejects0, 1, what);
	}
}

/* ---- 8: O_PATH ---- */

static void test_o_path(void)
{
	long commits0 = counter("commits"), ref0 = refcnt();
	char p[64];
	int fd, w;

	fd = open(BLOB, O_PATH);
	tap_result(fd >= 0, "open(O_PATH) of the blob succeeds");
	tap_is_long(refcnt() - ref0, 0, "an O_PATH descriptor does not pin the module");
	errno = 0;
	tap_is_long(ERR(fsync(fd)), EBADF, "fsync(2) of an O_PATH descriptor fails with EBADF");
	errno = 0;
	tap_is_long(ERR(write(fd, data, 10)), EBADF, "write(2) to it fails with EBADF");
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	w = open(p, O_WRONLY);
	tap_is_long(write(w, data + 11, 100), 100, "reopening it O_WRONLY through /proc starts an upload");
	tap_is_long(close(fd), 0, "closing the O_PATH descriptor returns 0");
	tap_is_long(counter("commits") - commits0, 0, "and commits nothing");
	tap_is_long(close(w), 0, "closing the reopened descriptor returns 0");
	tap_result(counter("commits") - commits0 == 1 && blob_is(BLOB, data + 11, 100),
		   "and commits its 100 bytes");
}

/* ---- 9: io_uring ---- */

static int ur_run(struct io_uring *r)
{
	struct io_uring_cqe *cqe;
	int res;

	io_uring_submit(r);
	if (io_uring_wait_cqe(r, &cqe))
		return -EIO;
	res = cqe->res;
	io_uring_cqe_seen(r, cqe);
	return res;
}

static void test_uring_max_size(void)
{
	static struct iovec iov[256];
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	unsigned char *img;
	long commits0;
	size_t size;
	int fd, i, c;

	if (io_uring_queue_init(8, &ring, 0)) {
		tap_result(0, "io_uring_queue_init");
		return;
	}
	img = blob_image(data + 13, MIB - 12, &size, 0);
	commits0 = counter("commits");
	fd = open(IMAGE, O_WRONLY);
	for (i = 0; i < 256; i++)
		iov[i] = (struct iovec){ img + i * 4096, 4096 };
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_writev(sqe, fd, iov, 256, -1);
	tap_is_long(ur_run(&ring), MIB,
		    "io_uring WRITEV of 256 x 4 KiB: an image of exactly cb_max_size (1 MiB) in one op");
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_fsync(sqe, fd, 0);
	tap_is_long(ur_run(&ring), 0, "IORING_OP_FSYNC commits it: 0");
	tap_is_long(close(fd), 0, "close(2) returns 0");
	tap_result(counter("commits") - commits0 == 1 && blob_is(BLOB, data + 13, MIB - 12),
		   "one commit; the payload is the stored blob");

	commits0 = counter("commits");
	fd = open(IMAGE, O_WRONLY);
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_write(sqe, fd, img, MIB, -1);
	tap_is_long(ur_run(&ring), MIB, "io_uring WRITE of 1 MiB");
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_write(sqe, fd, img, 1, -1);
	tap_is_long(ur_run(&ring), -EFBIG, "one byte more through io_uring fails with EFBIG");
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_fsync(sqe, fd, 0);
	tap_is_long(ur_run(&ring), -EFBIG, "IORING_OP_FSYNC reports EFBIG");
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_fsync(sqe, fd, IORING_FSYNC_DATASYNC);
	tap_is_long(ur_run(&ring), -EINVAL, "IORING_OP_FSYNC with IORING_FSYNC_DATASYNC: EINVAL");
	c = close(fd) ? errno : 0;
	tap_is_long(c, 0, "close(2) returns 0");
	tap_is_long(counter("commits") - commits0, 0, "nothing committed");
	free(img);
	io_uring_queue_exit(&ring);
}

static void test_uring_fixed_and_close(void)
{
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	unsigned char *img;
	long commits0, rejects0;
	size_t size;
	int fd, res;

	if (io_uring_queue_init(8, &ring, 0)) {
		tap_result(0, "io_uring_queue_init");
		return;
	}
	/* a registered file: the ring holds it */
	commits0 = counter("commits");
	fd = open(BLOB, O_WRONLY);
	tap_is_long(io_uring_register_files(&ring, &fd, 1), 0, "the blob's open file is registered");
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_write(sqe, 0, data + 17, 2000, -1);
	sqe->flags |= IOSQE_FIXED_FILE;
	tap_is_long(ur_run(&ring), 2000, "a write through the fixed file buffers 2000 bytes");
	tap_is_long(close(fd), 0, "close(2) of the descriptor, the ring holding the file, returns 0");
	tap_is_long(counter("commits") - commits0, 0, "and commits nothing");
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_fsync(sqe, 0, IORING_FSYNC_DATASYNC);
	sqe->flags |= IOSQE_FIXED_FILE;
	tap_is_long(ur_run(&ring), -EINVAL, "IORING_OP_FSYNC with IORING_FSYNC_DATASYNC: EINVAL");
	tap_is_long(counter("commits") - commits0, 0, "and commits nothing");
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_fsync(sqe, 0, 0);
	sqe->flags |= IOSQE_FIXED_FILE;
	tap_is_long(ur_run(&ring), 0, "IORING_OP_FSYNC on the fixed file commits: 0");
	tap_result(counter("commits") - commits0 == 1 && blob_is(BLOB, data + 17, 2000),
		   "one commit of the 2000 bytes");
	tap_is_long(io_uring_unregister_files(&ring), 0, "unregistering the file");
	usleep(500000);
	tap_is_long(counter_wait("commits", commits0 + 1) - commits0, 1,
		    "commits nothing more (nothing was written since)");

	/* a bad image in a fixed slot, dropped by IORING_OP_CLOSE of the slot */
	img = bad_image(&size);
	rejects0 = counter("rejects");
	fd = open(IMAGE, O_WRONLY);
	write(fd, img, size);
	io_uring_register_files(&ring, &fd, 1);
	close(fd);
	tap_is_long(counter("rejects") - rejects0, 0, "bad image in a fixed slot: close(2) commits nothing");
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_close_direct(sqe, 0);
	res = ur_run(&ring);
	tap_is_long(res, 0, "IORING_OP_CLOSE of the slot returns 0");
	tap_is_long(counter_wait("rejects", rejects0 + 1) - rejects0, 1,
		    "the file's last reference commits the image once");
	io_uring_unregister_files(&ring);

	/* IORING_OP_CLOSE of an ordinary descriptor is the final close */
	rejects0 = counter("rejects");
	fd = open(IMAGE, O_WRONLY);
	write(fd, img, size);
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_close(sqe, fd);
	tap_is_long(ur_run(&ring), 0, "IORING_OP_CLOSE of the last descriptor returns 0");
	tap_is_long(counter_wait("rejects", rejects0 + 1) - rejects0, 1,
		    "the release commits the bad image once, silently");
	free(img);
	io_uring_queue_exit(&ring);
}

/* ---- 10: thousands of open files ---- */

#define NOPEN 4000

static void test_many_opens(void)
{
	static int fds[NOPEN];
	struct rlimit rl = { NOPEN + 256, NOPEN + 256 };
	long commits0 = counter("commits"), ref0 = refcnt(), opened = 0, wrote = 0, bad = 0;
	unsigned char last;
	int i;

	if (setrlimit(RLIMIT_NOFILE, &rl)) {
		tap_result(0, "setrlimit(RLIMIT_NOFILE, %d)", NOPEN + 256);
		return;
	}
	for (i = 0; i < NOPEN; i++) {
		fds[i] = open(BLOB, O_WRONLY);
		opened += fds[i] >= 0;
	}
	tap_is_long(opened, NOPEN, "4000 open files of the blob");
	tap_is_long(refcnt() - ref0, NOPEN, "each holds a reference on the module");
	for (i = 0; i < NOPEN; i++) {
		unsigned char b = (unsigned char)(i * 7 + 1);

		wrote += write(fds[i], &b, 1) == 1;
	}
	tap_is_long(wrote, NOPEN, "each buffers one byte of its own");
	tap_is_long(counter("commits") - commits0, 0, "nothing committed before the closes");
	for (i = 0; i < NOPEN; i++)
		bad += close(fds[i]) != 0;
	tap_is_long(bad, 0, "every close(2) returns 0");
	tap_is_long(counter("commits") - commits0, NOPEN, "each committed once");
	last = (unsigned char)((NOPEN - 1) * 7 + 1);
	tap_result(blob_is(BLOB, &last, 1), "the stored blob is the last closed one's byte");
	tap_is_long(refcnt() - ref0, 0, "the module references are all given back");
}

/* ---- 11: readers racing rmdir(2) of the item ---- */

static volatile int rr_done;

static void *rr_remover(void *arg)
{
	long *cycles = arg;
	int i;

	for (i = 0; i < 150; i++) {
		if (mkdir(ITEM2, 0755))
			break;
		blob_upload(ITEM2 "/blob", data + 1, 20000, 20000);
		if (rmdir(ITEM2))
			break;
		(*cycles)++;
	}
	rr_done = 1;
	return NULL;
}

static void test_readers_race_rmdir(void)
{
	unsigned char *buf = malloc(40000);
	long cycles = 0, whole = 0, empty = 0, gone = 0, bad = 0;
	pthread_t t;

	rr_done = 0;
	pthread_create(&t, NULL, rr_remover, &cycles);
	while (!rr_done) {
		int fd = open(ITEM2 "/blob", O_RDONLY);
		long n = 0;
		ssize_t r;

		if (fd < 0) {
			bad += errno != ENOENT;
			continue;
		}
		while ((r = read(fd, buf + n, 40000 - n)) > 0)
			n += r;
		if (r < 0 && errno == ENOENT && !n)
			gone++;
		else if (r < 0)
			bad++;
		else if (n == 0)
			empty++;
		else if (n == 20000 && !memcmp(buf, data + 1, 20000))
			whole++;
		else
			bad++;
		close(fd);
	}
	pthread_join(t, NULL);
	printf("# %ld mkdir/upload/rmdir cycles; reads: %ld whole, %ld empty, %ld ENOENT\n",
	       cycles, whole, empty, gone);
	tap_is_long(cycles, 150, "150 cycles of mkdir, upload, rmdir");
	tap_is_long(bad, 0, "every racing read got the whole blob, the empty one, or ENOENT");
	free(buf);
}

/* ---- 12: a version larger than cb_max_size ---- */

static void test_version_too_big(void)
{
	struct {
		uint64_t size;
		uint32_t crc, commits;
	} __attribute__((packed)) d;
	unsigned char *img, c;
	size_t size;
	struct upload u;
	int fd;

	if (system("modprobe lk45_blobstore max_blob=1000") || mkdir(ITEM, 0755)) {
		tap_result(0, "reload lk45_blobstore with max_blob=1000, mkdir " ITEM);
		return;
	}
	img = blob_image(data, 5000, &size, 0);
	u = blob_commit(IMAGE, img, size, size);
	free(img);
	tap_is_long(u.fsync_err, 0, "max_blob=1000: an image stores a 5000-byte blob");
	fd = open(ITEM "/digest", O_RDONLY);
	tap_result(read(fd, &d, sizeof(d)) == sizeof(d) && d.size == 5000 &&
		   d.crc == blob_crc32(data, 5000), "the digest says 5000 bytes");
	close(fd);
	fd = open(BLOB, O_RDONLY);
	errno = 0;
	tap_is_long(ERR(read(fd, &c, 1)), EFBIG, "reading the blob, larger than cb_max_size, fails with EFBIG");
	errno = 0;
	tap_is_long(ERR(pread(fd, &c, 1, 10)), EFBIG, "so does pread(2) at 10");
	close(fd);
	tap_is_long(rmdir(ITEM), 0, "rmdir " ITEM);
	tap_is_long(system("modprobe -r lk45_blobstore"), 0, "unload the max_blob=1000 sample");
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	data = malloc(4 * MIB);
	blob_fill(data, 4 * MIB, 45);
	if (system("modprobe configfs && { mountpoint -q /sys/kernel/config || "
		   "mount -t configfs none /sys/kernel/config; } && "
		   "modprobe lk45_blobstore max_blob=4194304")) {
		tap_result(0, "load configfs and lk45_blobstore");
		return tap_done();
	}
	tap_is_long(mkdir(ITEM, 0755), 0, "mkdir " ITEM);
	test_empty_version();
	test_readv_fault();
	test_fsync_races_write();
	test_fsync_races_close();
	test_recommit_and_rdwr();
	test_scm_rights();
	test_killed_writer();
	test_silent_drops();
	test_o_path();
	test_uring_max_size();
	test_uring_fixed_and_close();
	test_many_opens();
	test_readers_race_rmdir();
	tap_is_long(rmdir(ITEM), 0, "rmdir " ITEM);
	tap_is_long(system("modprobe -r lk45_blobstore"), 0, "lk45_blobstore unloads");
	test_version_too_big();
	tap_is_long(access("/sys/module/lk45_blobstore", F_OK) ? errno : 0, ENOENT,
		    "lk45_blobstore is gone");
	free(data);
	return tap_done();
}
