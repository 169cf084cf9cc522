// SPDX-License-Identifier: GPL-2.0
// bench-ldlibs: -lpthread
/*
 * fsync(2) is the commit that always reports. A writer uploads a rejected
 * image thousands of times while other processes take transient references
 * to its open files (readlink and stat of /proc/PID/fd/N, pidfd_getfd()) and
 * a sibling thread forks children that exit at once. In two rounds of three
 * the writer calls fsync(2) before close(2): fsync(2) must return EBADMSG
 * every time. In the third it only closes, which shows how often close(2)
 * could not report. The store must count exactly one rejected commit per
 * round: none lost, none twice.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "blob.h"
#include "tap.h"

#define ITEM	STORE_ROOT "/race"
#define IMAGE	ITEM "/image"
#define ROUNDS	3000

struct tally {
	long rounds, fsync_rounds, fsync_badmsg, fsync_other, close_zero_after_fsync;
	long close_only, close_badmsg, close_zero, close_other;
};

static volatile int forker_stop;

static void *forker(void *arg)
{
	(void)arg;
	while (!forker_stop) {
		pid_t pid = fork();

		if (!pid)
			_exit(0);
		if (pid > 0)
			waitpid(pid, NULL, 0);
	}
	return NULL;
}

static void writer(int out)
{
	struct tally t = { 0 };
	unsigned char payload[600], *img;
	pthread_t th;
	size_t size;
	int i;

	for (i = 0; i < (int)sizeof(payload); i++)
		payload[i] = i * 7;
	img = blob_image(payload, sizeof(payload), &size, 1);
	pthread_create(&th, NULL, forker, NULL);
	for (i = 0; i < ROUNDS; i++) {
		int fd = open(IMAGE, O_WRONLY), c;

		if (fd < 0 || write(fd, img, size) != (ssize_t)size)
			break;
		t.rounds++;
		if (i % 3 != 2) {
			t.fsync_rounds++;
			if (!fsync(fd))
				t.fsync_other++;
			else if (errno == EBADMSG)
				t.fsync_badmsg++;
			else
				t.fsync_other++;
			t.close_zero_after_fsync += !close(fd);
		} else {
			t.close_only++;
			c = close(fd) ? errno : 0;
			if (c == EBADMSG)
				t.close_badmsg++;
			else if (!c)
				t.close_zero++;
			else
				t.close_other++;
		}
	}
	forker_stop = 1;
	pthread_join(th, NULL);
	write(out, &t, sizeof(t));
	_exit(0);
}

/* Transient references through /proc/PID/fd. */
static void proc_hammer(pid_t pid)
{
	char dir[64], p[512], link[256];
	struct stat st;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", pid);
	for (;;) {
		DIR *d = opendir(dir);
		struct dirent *e;

		if (!d)
			_exit(0);
		while ((e = readdir(d))) {
			snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
			readlink(p, link, sizeof(link));
			stat(p, &st);
		}
		closedir(d);
	}
}

/* Transient references through pidfd_getfd(). */
static void pidfd_hammer(pid_t pid)
{
	int pidfd = syscall(SYS_pidfd_open, pid, 0), n;

	if (pidfd < 0)
		_exit(1);
	for (;;) {
		for (n = 3; n < 8; n++) {
			int fd = syscall(SYS_pidfd_getfd, pidfd, n, 0);

			if (fd >= 0)
				close(fd);
			else if (errno == ESRCH)
				_exit(0);
		}
	}
}

static long counter(const char *name)
{
	return blob_counter(ITEM, name);
}

int main(void)
{
	struct tally t = { 0 };
	pid_t w, h1, h2;
	long rejects0;
	int pfd[2];

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (system("modprobe configfs && { mountpoint -q /sys/kernel/config || "
		   "mount -t configfs none /sys/kernel/config; } && "
		   "modprobe lk45_blobstore") || mkdir(ITEM, 0755)) {
		tap_result(0, "load configfs and lk45_blobstore, mkdir " ITEM);
		return tap_done();
	}
	rejects0 = counter("rejects");
	pipe(pfd);
	w = fork();
	if (!w) {
		/* let the hammers start first */
		usleep(300000);
		writer(pfd[1]);
	}
	h1 = fork();
	if (!h1)
		proc_hammer(w);
	h2 = fork();
	if (!h2)
		pidfd_hammer(w);
	if (read(pfd[0], &t, sizeof(t)) != sizeof(t))
		tap_result(0, "the writer reports its tally");
	waitpid(w, NULL, 0);
	kill(h1, SIGKILL);
	kill(h2, SIGKILL);
	waitpid(h1, NULL, 0);
	waitpid(h2, NULL, 0);

	tap_is_long(t.rounds, ROUNDS, "the writer ran every round");
	tap_is_long(t.fsync_badmsg, t.fsync_rounds,
		    "fsync(2) returned EBADMSG in every round that called it");
	printf("# fsync rounds %ld: EBADMSG %ld, anything else %ld; close(2) after fsync "
	       "returned 0 in %ld\n", t.fsync_rounds, t.fsync_badmsg, t.fsync_other,
	       t.close_zero_after_fsync);
	printf("# close-only rounds %ld: close(2) EBADMSG %ld, 0 %ld, other %ld\n",
	       t.close_only, t.close_badmsg, t.close_zero, t.close_other);
	tap_is_long(t.close_other, 0, "close(2) alone returned EBADMSG or 0, nothing else");
	tap_result(t.close_zero + t.close_zero_after_fsync > 0,
		   "the hammers held transient references: close(2) could not report in %ld "
		   "rounds", t.close_zero + t.close_zero_after_fsync);
	tap_is_long(system("dmesg | grep -q 'configfs: configfs:'"), 256,
		    "the log never says \"configfs: configfs:\"");
	{
		/* A commit close(2) could not report is reported to whoever
		 * drops the last reference: another close(2) (a hammer's) or,
		 * from a bare fput(), the log. Which one is timing, so only
		 * the bound holds: at most one log line per lost commit.
		 */
		FILE *f = popen("dmesg | grep -c 'configfs: image: commit at the last "
				"reference failed: -74'", "r");
		long logged = -1;

		if (!f || fscanf(f, "%ld", &logged) != 1)
			logged = -1;
		if (f)
			pclose(f);
		tap_result(logged >= 0 && logged <= t.close_zero + t.close_zero_after_fsync,
			   "a commit lost to close(2) is logged at most once, prefixed, with "
			   "EBADMSG: %ld lines for %ld lost", logged,
			   t.close_zero + t.close_zero_after_fsync);
	}
	tap_is_long(counter("rejects") - rejects0, ROUNDS,
		    "the store counted one rejected commit per round: none lost, none twice");
	tap_is_long(rmdir(ITEM), 0, "rmdir " ITEM);
	tap_is_long(system("modprobe -r lk45_blobstore"), 0, "lk45_blobstore unloads");
	return tap_done();
}
