// SPDX-License-Identifier: GPL-2.0
// bench-ldlibs: -lpthread
/*
 * fsync(2) is the commit that always reports; close(2) never does. A writer
 * uploads a rejected image thousands of times while other processes take
 * transient references to its open files (readlink and stat of
 * /proc/PID/fd/N, pidfd_getfd()) and a sibling thread forks children that
 * exit at once, every other one killed by SIGKILL: they inherited the
 * writer's descriptors but never wrote, so their deaths must abandon
 * nothing. In two rounds of three the writer calls fsync(2) before
 * close(2): fsync(2) must return EBADMSG every time. In the third it only
 * closes, and the commit happens at the last release, whoever drops it.
 * close(2) must return 0 in every round, and the store must count exactly
 * one rejected commit per round: none lost to a killed child, none twice
 * (a refused commit is final: the release does not commit it again).
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
	long rounds, fsync_rounds, fsync_badmsg, fsync_other;
	long close_only, close_zero, close_other;
	long children, children_killed;
};

static volatile int forker_stop;
static long forked, forked_killed;

static void *forker(void *arg)
{
	long k = 0;

	(void)arg;
	while (!forker_stop) {
		int kill_it = k++ & 1, st;
		pid_t pid = fork();

		if (!pid) {
			if (kill_it)
				raise(SIGKILL);
			_exit(0);
		}
		if (pid > 0 && waitpid(pid, &st, 0) == pid) {
			forked++;
			forked_killed += WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
		}
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
			if (fsync(fd) && errno == EBADMSG)
				t.fsync_badmsg++;
			else
				t.fsync_other++;
		} else {
			t.close_only++;
		}
		c = close(fd) ? errno : 0;
		if (!c)
			t.close_zero++;
		else
			t.close_other++;
	}
	forker_stop = 1;
	pthread_join(th, NULL);
	t.children = forked;
	t.children_killed = forked_killed;
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
	printf("# fsync rounds %ld: EBADMSG %ld, anything else %ld; close-only rounds %ld\n",
	       t.fsync_rounds, t.fsync_badmsg, t.fsync_other, t.close_only);
	printf("# %ld children forked meanwhile, %ld of them killed by SIGKILL\n",
	       t.children, t.children_killed);
	tap_is_long(t.fsync_badmsg, t.fsync_rounds,
		    "fsync(2) returned EBADMSG in every round that called it");
	tap_is_long(t.close_zero, t.rounds, "close(2) returned 0 in every round");
	tap_result(t.children_killed > 0 && t.children_killed * 2 >= t.children - 1,
		   "every other forked child, holding the writer's descriptors, was killed by "
		   "SIGKILL (%ld of %ld)", t.children_killed, t.children);
	tap_is_long(counter("rejects") - rejects0, ROUNDS,
		    "the store counted one rejected commit per round: none abandoned by a "
		    "killed child, none twice");
	tap_is_long(rmdir(ITEM), 0, "rmdir " ITEM);
	tap_is_long(system("modprobe -r lk45_blobstore"), 0, "lk45_blobstore unloads");
	return tap_done();
}
