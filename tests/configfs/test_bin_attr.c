// SPDX-License-Identifier: GPL-2.0
/*
 * configfs binary attributes, through the lk45_blobstore sample: declaration
 * and modes, reads, buffering up to cb_max_size, fsync(2) as the one call
 * that reports a commit (close(2) returns 0, the release commits silently),
 * a refused commit that stays refused, dup'd and inherited descriptors,
 * zero-length writes, holes, ETXTBSY/ESPIPE/EACCES, concurrent writers,
 * rmdir with open files, fault injection on the buffer's growth (doubling,
 * then exactly what the write needs) and on the commit, unload.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "blob.h"
#include "tap.h"

#define MAX_BLOB	(4u << 20)	/* max_blob given to the module */
#define IMAGE_MAX	(1u << 20)	/* cb_max_size of "image" */
#define ITEM		"t1"

static char path_buf[8][256];
static int path_slot;

/* Path of @attr in item @item; a small ring of buffers. */
static const char *P(const char *item, const char *attr)
{
	char *p = path_buf[path_slot++ % 8];

	snprintf(p, 256, STORE_ROOT "/%s%s%s", item, attr ? "/" : "", attr ? attr : "");
	return p;
}

static long counter(const char *name)
{
	char buf[32] = "";
	int fd = open(P(ITEM, name), O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	return n > 0 ? strtol(buf, NULL, 10) : -1;
}

struct digest {
	uint64_t size;
	uint32_t crc, commits;
} __attribute__((packed));

static int read_digest(struct digest *d)
{
	int fd = open(P(ITEM, "digest"), O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, d, sizeof(*d));

	if (fd >= 0)
		close(fd);
	return n == sizeof(*d) ? 0 : -1;
}

/* The stored blob equals @want (size and bytes, read back through blob). */
static int blob_is(const unsigned char *want, size_t len)
{
	unsigned char *got = NULL;
	long n = blob_slurp(P(ITEM, "blob"), &got);
	int same = n == (long)len && (!len || !memcmp(got, want, len));

	free(got);
	return same;
}

static int write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY);
	ssize_t n = fd < 0 ? -1 : write(fd, val, strlen(val));

	if (fd >= 0)
		close(fd);
	return n == (ssize_t)strlen(val) ? 0 : -1;
}

/* Commit @len bytes to blob with fsync(2); 0 when every call succeeded. */
static int put(const unsigned char *p, size_t len)
{
	struct upload u = blob_commit(P(ITEM, "blob"), p, len, 65536);

	return u.open_err || u.write_err || u.fsync_err || u.close_err ? -1 : 0;
}

static void test_layout(void)
{
	static const struct { const char *name; unsigned int mode; } want[] = {
		{ "blob", 0644 }, { "image", 0200 }, { "digest", 0444 },
		{ "readonly", 0644 }, { "commits", 0444 }, { "rejects", 0444 },
		{ "read_mode", 0644 },
	};
	struct stat st;
	unsigned int i;

	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		int r = stat(P(ITEM, want[i].name), &st);

		tap_result(!r && S_ISREG(st.st_mode) && (st.st_mode & 07777) == want[i].mode,
			   "mkdir created %s with mode %04o", want[i].name, want[i].mode);
		if (r || (st.st_mode & 07777) != want[i].mode)
			printf("# stat %d, mode %04o\n", r, r ? 0 : st.st_mode & 07777);
	}
}

static void test_roundtrip(unsigned char *data)
{
	struct upload u;
	struct digest d;
	long commits = counter("commits");
	unsigned char *got = NULL;
	char buf[7];
	long n;
	int fd;

	blob_fill(data, MAX_BLOB, 1);
	u = blob_upload(P(ITEM, "blob"), data, 1 << 20, 4096);
	tap_result(!u.write_err && !u.close_err && u.written == 1 << 20,
		   "1 MiB in 4 KiB writes: every write and close(2) succeed");
	tap_is_long(counter("commits"), commits + 1, "one upload, one commit");
	tap_result(blob_is(data, 1 << 20), "blob reads back byte for byte");
	tap_result(!read_digest(&d) && d.size == 1 << 20 &&
		   d.crc == blob_crc32(data, 1 << 20),
		   "RO digest: size and crc32 of the stored blob");

	/* Reads in odd-sized pieces see one consistent buffer. */
	fd = open(P(ITEM, "blob"), O_RDONLY);
	got = malloc(1 << 20);
	n = 0;
	while (fd >= 0 && got) {
		ssize_t r = read(fd, got + n, n + sizeof(buf) > (1 << 20) ?
				 (1 << 20) - n : (long)sizeof(buf));

		if (r <= 0)
			break;
		n += r;
	}
	tap_result(n == 1 << 20 && !memcmp(got, data, n), "reads of 7 bytes reassemble the blob");
	tap_is_long(read(fd, buf, sizeof(buf)), 0, "read at the end returns 0");
	tap_is_long(read(fd, buf, 0), 0, "read(fd, buf, 0) returns 0, not EFAULT");
	close(fd);
	free(got);
}

static void test_zero_and_empty(const unsigned char *data)
{
	long commits = counter("commits");
	int fd;

	fd = open(P(ITEM, "blob"), O_WRONLY);
	tap_is_long(write(fd, data, 0), 0, "write(fd, buf, 0) returns 0, not EFAULT");
	tap_is_long(fsync(fd), 0, "fsync(2) after only a zero-length write returns 0");
	tap_is_long(counter("commits"), commits, "and commits nothing");
	tap_is_long(close(fd), 0, "close after only a zero-length write succeeds");
	tap_is_long(counter("commits"), commits, "a zero-length write commits nothing");
	fd = open(P(ITEM, "blob"), O_WRONLY);
	tap_is_long(close(fd), 0, "open for writing and close succeeds");
	tap_is_long(counter("commits"), commits, "open and close without a write commits nothing");
	tap_result(blob_is(data, 1 << 20), "the stored blob is untouched");
}

static void test_modes(const unsigned char *data)
{
	char c;
	int fd;

	fd = open(P(ITEM, "blob"), O_RDWR);
	tap_is_long(write(fd, data, 16), 16, "O_RDWR: a first write is accepted");
	errno = 0;
	tap_is_long(read(fd, &c, 1) < 0 ? errno : 0, ETXTBSY, "then a read fails with ETXTBSY");
	tap_is_long(close(fd), 0, "the refused read does not spoil the upload: close commits");
	tap_result(blob_is(data, 16), "the stored blob is the 16 bytes written");
	fd = open(P(ITEM, "blob"), O_RDWR);
	tap_is_long(read(fd, &c, 1), 1, "O_RDWR: a first read is accepted");
	errno = 0;
	tap_is_long(write(fd, data, 16) < 0 ? errno : 0, ETXTBSY, "then a write fails with ETXTBSY");
	errno = 0;
	tap_is_long(lseek(fd, 0, SEEK_SET) < 0 ? errno : 0, ESPIPE, "lseek fails with ESPIPE");
	tap_result(pread(fd, &c, 1, 15) == 1 && c == (char)data[15],
		   "pread at an offset reads the version the first read took");
	close(fd);
	fd = open(P(ITEM, "blob"), O_WRONLY);
	tap_is_long(pwrite(fd, data + 100, 16, 4096), 16,
		    "pwrite at 4096 of a fresh upload stores its 16 bytes there");
	tap_is_long(fsync(fd), 0, "fsync(2) commits it");
	tap_is_long(close(fd), 0, "close(2) returns 0");
	{
		unsigned char *want = calloc(1, 4096 + 16);

		memcpy(want + 4096, data + 100, 16);
		tap_result(blob_is(want, 4096 + 16),
			   "the blob is 4112 bytes: 4096 zeroes, then the 16 written");
		free(want);
	}
	tap_is_long(put(data, 16), 0, "the 16-byte blob again");

	errno = 0;
	fd = open(P(ITEM, "readonly"), O_WRONLY);
	tap_is_long(fd < 0 ? errno : 0, EACCES, "mode 0644 without a write method: O_WRONLY gets EACCES");
	if (fd >= 0)
		close(fd);
	errno = 0;
	fd = open(P(ITEM, "digest"), O_WRONLY);
	tap_is_long(fd < 0 ? errno : 0, EACCES, "RO attribute: O_WRONLY gets EACCES");
	if (fd >= 0)
		close(fd);
	errno = 0;
	fd = open(P(ITEM, "image"), O_RDONLY);
	tap_is_long(fd < 0 ? errno : 0, EACCES, "WO attribute: O_RDONLY gets EACCES");
	if (fd >= 0)
		close(fd);
	tap_result(blob_is(data, 16), "refused opens commit nothing");
}

static void test_image(const unsigned char *data)
{
	static const struct { const char *what; size_t len; uint32_t delta; int cut, err; } bad[] = {
		{ "checksum off by one", 4096, 1, 0, EBADMSG },
		{ "truncated by a byte", 4096, 0, 1, EMSGSIZE },
		{ "shorter than a header", 0, 0, 5, EINVAL },
	};
	long rejects = counter("rejects"), commits;
	unsigned char *img;
	struct upload u;
	size_t size;
	unsigned int i;

	img = blob_image(data + 7, 3000, &size, 0);
	u = blob_commit(P(ITEM, "image"), img, size, 1000);
	free(img);
	tap_result(!u.write_err && !u.fsync_err && !u.close_err,
		   "a valid image commits: fsync(2) and close(2) return 0");
	tap_result(blob_is(data + 7, 3000), "its payload is the stored blob");

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		commits = counter("commits");
		img = blob_image(data, bad[i].len, &size, bad[i].delta);
		u = blob_commit(P(ITEM, "image"), img, size - bad[i].cut, 1024);
		free(img);
		tap_result(!u.write_err && u.fsync_err == bad[i].err && !u.close_err,
			   "image %s: writes succeed, fsync(2) fails with %s, close(2) returns 0",
			   bad[i].what, strerrorname_np(bad[i].err));
		if (u.write_err || u.fsync_err != bad[i].err || u.close_err)
			printf("# write %s, fsync %s, close %s\n", blob_errname(u.write_err),
			       blob_errname(u.fsync_err), blob_errname(u.close_err));
		tap_is_long(counter("commits"), commits, "nothing committed");
	}
	img = malloc(4);
	memcpy(img, "XXXX", 4);
	u = blob_commit(P(ITEM, "image"), img, 4, 4);
	free(img);
	tap_is_long(u.fsync_err, EINVAL, "bad magic: fsync(2) fails with EINVAL");
	tap_is_long(counter("rejects"), rejects + 4,
		    "the store counted four rejects: the releases did not commit them again");

	/* Left to the release, a bad image is refused all the same, silently. */
	img = malloc(4);
	memcpy(img, "XXXX", 4);
	u = blob_upload(P(ITEM, "image"), img, 4, 4);
	free(img);
	tap_is_long(u.close_err, 0, "bad magic without fsync(2): close(2) returns 0");
	tap_is_long(counter("rejects"), rejects + 5, "the release committed it: one more reject");
	tap_result(blob_is(data + 7, 3000), "a rejected image leaves the earlier blob in place");
}

static void test_max_size(unsigned char *data)
{
	unsigned char *img, *payload = malloc(IMAGE_MAX);
	long commits;
	struct upload u;
	size_t size;

	blob_fill(payload, IMAGE_MAX, 2);
	img = blob_image(payload, IMAGE_MAX - 12, &size, 0);
	u = blob_commit(P(ITEM, "image"), img, size, 4096);
	tap_result(size == IMAGE_MAX && !u.write_err && !u.fsync_err && !u.close_err,
		   "image exactly at cb_max_size (1 MiB) commits");
	free(img);

	commits = counter("commits");
	img = blob_image(payload, IMAGE_MAX - 11, &size, 0);
	u = blob_commit(P(ITEM, "image"), img, size, 4096);
	tap_result(u.write_err == EFBIG && u.written == IMAGE_MAX && u.fsync_err == EFBIG &&
		   !u.close_err,
		   "one byte over: the last write and fsync(2) fail with EFBIG, close(2) returns 0");
	if (u.write_err != EFBIG || u.fsync_err != EFBIG || u.close_err)
		printf("# write %s after %zu bytes, fsync %s, close %s\n",
		       blob_errname(u.write_err), u.written, blob_errname(u.fsync_err),
		       blob_errname(u.close_err));
	tap_is_long(counter("commits"), commits, "nothing committed, at fsync(2) nor at the release");
	free(img);

	/* Far over in one write: refused before any copy, else the short
	 * user buffer would fault (EFAULT).
	 */
	{
		int fd = open(P(ITEM, "blob"), O_WRONLY);
		volatile size_t huge = 1u << 30;	/* hidden from -Wstringop-overread */

		errno = 0;
		tap_is_long(write(fd, data, huge) < 0 ? errno : 0, EFBIG,
			    "a 1 GiB write to a 4 MiB attribute fails with EFBIG up front");
		errno = 0;
		tap_is_long(write(fd, data, 16) < 0 ? errno : 0, EFBIG,
			    "the upload stays abandoned: later writes fail alike");
		errno = 0;
		tap_is_long(fsync(fd) < 0 ? errno : 0, EFBIG, "fsync(2) reports EFBIG");
		tap_is_long(close(fd), 0, "close(2) returns 0");
	}
	tap_result(blob_is(payload, IMAGE_MAX - 12), "failed uploads lost nothing committed");

	/* A write that reaches exactly max_blob, aimed there by pwrite(2). */
	{
		int fd = open(P(ITEM, "blob"), O_WRONLY);

		tap_is_long(pwrite(fd, data, 16, MAX_BLOB - 16), 16,
			    "pwrite(2) of the last 16 bytes below max_blob succeeds");
		errno = 0;
		tap_is_long(pwrite(fd, data, 1, MAX_BLOB) < 0 ? errno : 0, EFBIG,
			    "a byte at max_blob fails with EFBIG");
		errno = 0;
		tap_is_long(fsync(fd) < 0 ? errno : 0, EFBIG, "and abandons the upload");
		close(fd);
	}
	tap_result(blob_is(payload, IMAGE_MAX - 12), "which committed nothing");

	blob_fill(data, MAX_BLOB, 3);
	u = blob_commit(P(ITEM, "blob"), data, MAX_BLOB, 65536);
	tap_result(!u.write_err && !u.fsync_err && !u.close_err && blob_is(data, MAX_BLOB),
		   "blob exactly at max_blob (4 MiB) commits and reads back");
	free(payload);
}

static void test_dup_fork(const unsigned char *data)
{
	long commits = counter("commits"), rejects;
	unsigned char *img;
	size_t size;
	int fd, fd2, st;
	pid_t pid;

	fd = open(P(ITEM, "blob"), O_WRONLY);
	tap_is_long(write(fd, data, 5000), 5000, "dup: write 5000 bytes");
	fd2 = dup(fd);
	tap_is_long(close(fd2), 0, "closing the duplicate returns 0");
	tap_is_long(counter("commits"), commits, "and commits nothing");
	tap_is_long(close(fd), 0, "closing the last descriptor commits");
	tap_result(counter("commits") == commits + 1 && blob_is(data, 5000),
		   "exactly once, with the whole blob");

	img = blob_image(data, 100, &size, 1);
	rejects = counter("rejects");
	fd = open(P(ITEM, "image"), O_WRONLY);
	write(fd, img, size);
	fd2 = dup(fd);
	errno = 0;
	tap_is_long(fsync(fd2) < 0 ? errno : 0, EBADMSG,
		    "bad image: fsync(2) of the duplicate reports EBADMSG");
	errno = 0;
	tap_is_long(fsync(fd) < 0 ? errno : 0, EBADMSG,
		    "so does fsync(2) of the original: one open file, one outcome");
	tap_is_long(close(fd2), 0, "the duplicate's close returns 0");
	tap_is_long(close(fd), 0, "the last close returns 0");
	tap_is_long(counter("rejects"), rejects + 1,
		    "one commit attempt: the refusal is final, the release does not retry");

	/* A child inheriting the descriptor and exiting commits nothing. */
	commits = counter("commits");
	fd = open(P(ITEM, "blob"), O_WRONLY);
	write(fd, data + 1, 6000);
	pid = fork();
	if (!pid)
		_exit(close(fd) ? 1 : 0);
	waitpid(pid, &st, 0);
	tap_result(WIFEXITED(st) && !WEXITSTATUS(st) && counter("commits") == commits,
		   "fork: the child's close returns 0 and commits nothing");
	tap_is_long(close(fd), 0, "the parent's close commits");
	tap_result(counter("commits") == commits + 1 && blob_is(data + 1, 6000),
		   "with what was written before the fork");

	/* Parent closes first: the child holds the last reference. */
	rejects = counter("rejects");
	fd = open(P(ITEM, "image"), O_WRONLY);
	write(fd, img, size);
	pid = fork();
	if (!pid) {
		int s;

		usleep(200000);
		s = fsync(fd) < 0 ? errno : 0;
		_exit(s == EBADMSG && !close(fd) ? 0 : 1);
	}
	tap_is_long(close(fd), 0, "fork: the parent closing first gets 0");
	tap_is_long(counter("rejects"), rejects, "and commits nothing (the child holds the file)");
	waitpid(pid, &st, 0);
	tap_result(WIFEXITED(st) && !WEXITSTATUS(st),
		   "the child's fsync(2) fails with EBADMSG, its close(2), the last, returns 0");
	tap_is_long(counter("rejects"), rejects + 1, "one commit attempt");

	/* Nobody calls fsync(2): the child's close, the last, commits silently. */
	rejects = counter("rejects");
	fd = open(P(ITEM, "image"), O_WRONLY);
	write(fd, img, size);
	pid = fork();
	if (!pid) {
		usleep(200000);
		_exit(close(fd) ? 1 : 0);
	}
	tap_is_long(close(fd), 0, "fork, no fsync: the parent closing first gets 0");
	waitpid(pid, &st, 0);
	tap_result(WIFEXITED(st) && !WEXITSTATUS(st), "the child's close(2), the last, returns 0");
	tap_is_long(counter("rejects"), rejects + 1, "and the release commits the image once");
	free(img);
	tap_result(blob_is(data + 1, 6000), "the stored blob is untouched");
}

#define NR_WRITERS 8
#define WRITER_LEN (256 << 10)

struct writer {
	pthread_t thread;
	unsigned char *buf;
	struct upload u;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;

	w->u = blob_upload(P(ITEM, "blob"), w->buf, WRITER_LEN, 4096);
	return NULL;
}

static void test_concurrent(void)
{
	struct writer w[NR_WRITERS];
	long commits = counter("commits");
	unsigned char *got = NULL;
	int i, ok = 1, match = 0;
	long n;

	for (i = 0; i < NR_WRITERS; i++) {
		w[i].buf = malloc(WRITER_LEN);
		memset(w[i].buf, 'A' + i, WRITER_LEN);
		pthread_create(&w[i].thread, NULL, writer_main, &w[i]);
	}
	for (i = 0; i < NR_WRITERS; i++) {
		pthread_join(w[i].thread, NULL);
		ok &= !w[i].u.write_err && !w[i].u.close_err;
	}
	tap_result(ok, "%d concurrent writers on separate descriptors all succeed", NR_WRITERS);
	tap_is_long(counter("commits"), commits + NR_WRITERS, "each open(2) committed once");
	n = blob_slurp(P(ITEM, "blob"), &got);
	for (i = 0; i < NR_WRITERS; i++)
		match |= n == WRITER_LEN && !memcmp(got, w[i].buf, WRITER_LEN);
	tap_result(match, "the stored blob is one writer's, whole (never interleaved)");
	free(got);
	for (i = 0; i < NR_WRITERS; i++)
		free(w[i].buf);
}

static void test_rmdir_open(const unsigned char *data)
{
	unsigned char *got = malloc(1 << 16);
	int wfd, rfd, ok;
	long n = 0;
	ssize_t r;

	mkdir(P("t2", NULL), 0755);
	blob_upload(P("t2", "blob"), data, 20000, 4096);
	rfd = open(P("t2", "blob"), O_RDONLY);
	r = read(rfd, got, 100);
	wfd = open(P("t2", "blob"), O_WRONLY);
	write(wfd, data, 3000);
	tap_is_long(rmdir(P("t2", NULL)), 0, "rmdir with the blob open for reading and writing");
	errno = 0;
	tap_is_long(fsync(wfd) < 0 ? errno : 0, ENOENT,
		    "the writer's fsync(2) fails with ENOENT: its upload had nowhere to go");
	tap_is_long(close(wfd), 0, "its close(2) returns 0");
	n = r > 0 ? r : 0;
	while ((r = read(rfd, got + n, 4096)) > 0)
		n += r;
	ok = n == 20000 && !memcmp(got, data, 20000);
	tap_result(ok, "the reader still reads what it had buffered");
	tap_is_long(close(rfd), 0, "the reader's close returns 0");
	tap_is_long(mkdir(P("t2", NULL), 0755), 0, "the name can be made again");
	tap_is_long(rmdir(P("t2", NULL)), 0, "and removed");
	free(got);
}

#define DBG "/sys/kernel/debug/"

/* A fault injector restricted to this task. Arming and disarming write to
 * descriptors opened beforehand: opening a file allocates, and would take
 * a failure meant for the code under test.
 */
struct fault {
	int times_fd, fail_fd;
};

static int fault_prepare(struct fault *f, const char *attr)
{
	static const char *const set[][2] = {
		{ "task-filter", "Y" }, { "probability", "100" }, { "interval", "1" },
		{ "verbose", "0" }, { "space", "0" }, { "ignore-gfp-wait", "N" },
		{ "times", "0" },
	};
	char p[160];
	unsigned int i;
	int bad = 0;

	for (i = 0; i < sizeof(set) / sizeof(set[0]); i++) {
		snprintf(p, sizeof(p), DBG "%s/%s", attr, set[i][0]);
		bad |= write_file(p, set[i][1]);
	}
	/* vmalloc()'s pages are __GFP_HIGHMEM, left alone by default */
	if (!strcmp(attr, "fail_page_alloc"))
		bad |= write_file(DBG "fail_page_alloc/min-order", "0") |
		       write_file(DBG "fail_page_alloc/ignore-gfp-highmem", "N");
	snprintf(p, sizeof(p), DBG "%s/times", attr);
	f->times_fd = open(p, O_WRONLY);
	f->fail_fd = open("/proc/self/make-it-fail", O_WRONLY);
	return bad || f->times_fd < 0 || f->fail_fd < 0;
}

/* Fail the next @times allocations of this task. */
static int fault_arm(struct fault *f, const char *times)
{
	return (write(f->times_fd, times, strlen(times)) < 0) |
	       (write(f->fail_fd, "1", 1) < 0);
}

static int fault_disarm(struct fault *f)
{
	return (write(f->fail_fd, "0", 1) < 0) | (write(f->times_fd, "0", 1) < 0);
}

static void test_fault_injection(unsigned char *data)
{
	struct fault slab, page;
	long commits, rejects;
	struct upload u;
	int fd, err;

	if (access(DBG "failslab", F_OK) || access(DBG "fail_page_alloc", F_OK)) {
		printf("ok %d - # SKIP fault injection: no failslab/fail_page_alloc in debugfs\n", ++tap_n);
		return;
	}
	err = fault_prepare(&slab, "failslab") | fault_prepare(&page, "fail_page_alloc");
	blob_fill(data, MAX_BLOB, 4);
	err |= put(data, 10000);
	commits = counter("commits");
	rejects = counter("rejects");

	/* Write path, pages: 8 KiB buffered; growing to 12 KiB needs pages
	 * (kmalloc() of 16 KiB, then vmalloc()), and every page fails.
	 */
	fd = open(P(ITEM, "blob"), O_WRONLY);
	write(fd, data + 1, 8192);
	err |= fault_arm(&page, "-1");
	errno = 0;
	tap_is_long(write(fd, data, 4096) < 0 ? errno : 0, ENOMEM,
		    "fail_page_alloc while the buffer grows: write(2) fails with ENOMEM");
	err |= fault_disarm(&page);
	errno = 0;
	tap_is_long(write(fd, data, 4096) < 0 ? errno : 0, ENOMEM,
		    "the upload is abandoned: the next write fails with ENOMEM too");
	errno = 0;
	tap_is_long(fsync(fd) < 0 ? errno : 0, ENOMEM, "fsync(2) reports ENOMEM");
	tap_is_long(close(fd), 0, "close(2) returns 0");

	/* Write path, slab: a 100-byte buffer grows to 200 (doubling), then to
	 * 146 (the 130 needed and an eighth) when that fails; one kmalloc()
	 * each.
	 */
	fd = open(P(ITEM, "blob"), O_WRONLY);
	write(fd, data + 2, 100);
	err |= fault_arm(&slab, "1");
	tap_is_long(write(fd, data + 102, 30), 30,
		    "failslab on the doubled buffer (1 failure): the write still succeeds");
	err |= fault_disarm(&slab);
	tap_is_long(fsync(fd), 0, "the buffer grew by an eighth more than needed: fsync(2) commits");
	tap_is_long(close(fd), 0, "close(2) returns 0");
	tap_result(counter("commits") == commits + 1 && blob_is(data + 2, 130),
		   "one commit, of the 130 bytes");
	commits = counter("commits");

	fd = open(P(ITEM, "blob"), O_WRONLY);
	write(fd, data + 3, 100);
	err |= fault_arm(&slab, "2");
	errno = 0;
	tap_is_long(write(fd, data + 103, 30) < 0 ? errno : 0, ENOMEM,
		    "failslab on the doubled and the smaller buffer (2 failures): ENOMEM");
	err |= fault_disarm(&slab);
	errno = 0;
	tap_is_long(fsync(fd) < 0 ? errno : 0, ENOMEM, "fsync(2) reports ENOMEM");
	tap_is_long(close(fd), 0, "close(2) returns 0");

	/* Commit path: the store cannot copy the blob (kvmemdup()). */
	fd = open(P(ITEM, "blob"), O_WRONLY);
	write(fd, data + 4, 12000);
	err |= fault_arm(&slab, "-1") | fault_arm(&page, "-1");
	errno = 0;
	tap_is_long(fsync(fd) < 0 ? errno : 0, ENOMEM,
		    "every allocation failing at commit: fsync(2) fails with ENOMEM");
	err |= fault_disarm(&slab) | fault_disarm(&page);
	errno = 0;
	tap_is_long(fsync(fd) < 0 ? errno : 0, ENOMEM,
		    "the refused commit is final: fsync(2) again returns ENOMEM, and commits nothing");
	tap_is_long(close(fd), 0, "close(2) returns 0");
	tap_is_long(err, 0, "fault injection armed and disarmed through debugfs");
	tap_result(counter("commits") == commits && counter("rejects") == rejects &&
		   blob_is(data + 2, 130),
		   "after the failures the stored blob is the last good one");
	u = blob_commit(P(ITEM, "blob"), data + 5, 30000, 4096);
	tap_result(!u.write_err && !u.fsync_err && !u.close_err && blob_is(data + 5, 30000),
		   "the item is usable afterwards");
	close(slab.times_fd);
	close(slab.fail_fd);
	close(page.times_fd);
	close(page.fail_fd);
	write_file(DBG "fail_page_alloc/ignore-gfp-highmem", "Y");	/* the default */
}

int main(void)
{
	unsigned char *data = malloc(MAX_BLOB + 4096);
	int fail;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (system("modprobe configfs && { mountpoint -q /sys/kernel/config || "
		   "mount -t configfs none /sys/kernel/config; } && "
		   "modprobe lk45_blobstore max_blob=4194304")) {
		tap_result(0, "load configfs and lk45_blobstore");
		return tap_done();
	}
	tap_is_long(mkdir(P(ITEM, NULL), 0755), 0, "mkdir " STORE_ROOT "/" ITEM);
	test_layout();
	test_roundtrip(data);
	test_zero_and_empty(data);
	test_modes(data);
	test_image(data);
	test_max_size(data);
	test_dup_fork(data);
	test_concurrent();
	test_rmdir_open(data);
	test_fault_injection(data);

	tap_is_long(rmdir(P(ITEM, NULL)), 0, "rmdir " ITEM);
	fail = system("modprobe -r lk45_blobstore");
	tap_is_long(fail, 0, "lk45_blobstore unloads after all of it");
	tap_is_long(access("/sys/module/lk45_blobstore", F_OK) ? errno : 0, ENOENT,
		    "and is gone");
	free(data);
	return tap_done();
}
