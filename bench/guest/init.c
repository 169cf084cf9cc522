// SPDX-License-Identifier: GPL-2.0
/*
 * Static init for the bench guest.
 *
 * Loads the modules an initramfs may carry in /boot-modules (in name order:
 * a distribution kernel has 9p as modules), mounts the host's /usr and /etc read-only over 9p, the staged kernel
 * modules, tests and scripts at /bench, and a writable results share, runs
 * /bench/guest/main.sh, then reports its exit status on a channel of its
 * own: a file in the results share and QEMU's isa-debug-exit port. A guest
 * that dies before this point leaves no status file, which the host treats
 * as a failure.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/io.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define DEBUG_EXIT_PORT 0xf4

static void say(const char *msg)
{
	fprintf(stderr, "bench-init: %s\n", msg);
}

static int do_mount(const char *src, const char *dst, const char *type,
		    unsigned long flags, const char *opts)
{
	if (mount(src, dst, type, flags, opts) == 0)
		return 0;
	fprintf(stderr, "bench-init: mount %s on %s (%s): %s\n", src, dst, type,
		strerror(errno));
	return -1;
}

/* The read-only trees do not change during a boot, so the guest may cache
 * them: with cache=none every exec of tc or ip read the binary and its
 * libraries over 9p again. The results are written and read back by the
 * host, so they are not cached.
 */
static int mount_9p(const char *tag, const char *dst, unsigned long flags)
{
#define OPTS_9P "trans=virtio,version=9p2000.L,msize=262144"
	return do_mount(tag, dst, "9p", flags, flags & MS_RDONLY ?
			OPTS_9P ",cache=loose" : OPTS_9P ",cache=none");
#undef OPTS_9P
}

#ifndef MODULE_INIT_COMPRESSED_FILE
#define MODULE_INIT_COMPRESSED_FILE 4
#endif

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* Every /boot-modules/NN-name.ko[.xz], in name order; the kernel
 * decompresses .xz itself (CONFIG_MODULE_DECOMPRESS).
 */
static int load_boot_modules(void)
{
	struct dirent **ents;
	char path[300];
	int n, i, fd, flags, rc = 0;

	n = scandir("/boot-modules", &ents, NULL, by_name);
	if (n < 0)
		return 0;	/* none needed */
	for (i = 0; i < n; i++) {
		const char *name = ents[i]->d_name;
		size_t len = strlen(name);

		if (name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/boot-modules/%s", name);
		flags = len > 3 && !strcmp(name + len - 3, ".xz") ?
			MODULE_INIT_COMPRESSED_FILE : 0;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || syscall(SYS_finit_module, fd, "", flags)) {
			if (errno != EEXIST) {
				fprintf(stderr, "bench-init: load %s: %s\n", path,
					strerror(errno));
				rc = -1;
			}
		}
		if (fd >= 0)
			close(fd);
	}
	return rc;
}

static void finish(int status)
{
	char buf[32];
	int fd;

	fd = open("/results/status", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0) {
		int n = snprintf(buf, sizeof(buf), "exit %d\n", status);

		if (write(fd, buf, n) != n)
			say("cannot write /results/status");
		fsync(fd);
		close(fd);
	}
	sync();
	/* QEMU exits with (value << 1) | 1. */
	if (ioperm(DEBUG_EXIT_PORT, 4, 1) == 0)
		outb(status ? 1 : 0, DEBUG_EXIT_PORT);
	reboot(RB_POWER_OFF);
	for (;;)
		pause();
}

int main(void)
{
	char *argv[] = { "/bin/bash", "/bench/guest/main.sh", NULL };
	char *envp[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root",
			 "TERM=linux", "LANG=C.UTF-8", NULL };
	int status = 1, wstatus;
	pid_t pid;

	if (do_mount("proc", "/proc", "proc", 0, NULL) ||
	    do_mount("sysfs", "/sys", "sysfs", 0, NULL) ||
	    do_mount("devtmpfs", "/dev", "devtmpfs", 0, NULL) ||
	    do_mount("tmpfs", "/tmp", "tmpfs", 0, "mode=1777") ||
	    do_mount("tmpfs", "/run", "tmpfs", 0, "mode=755") ||
	    do_mount("tmpfs", "/var/tmp", "tmpfs", 0, "mode=1777") ||
	    load_boot_modules() ||
	    mount_9p("usr", "/usr", MS_RDONLY) ||
	    mount_9p("etc", "/etc", MS_RDONLY) ||
	    mount_9p("stage", "/bench", MS_RDONLY) ||
	    mount_9p("results", "/results", 0) ||
	    /* configfs is a module (a pristine copy is swapped in by its
	     * benchmark): its tests load and mount it.
	     */
	    do_mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL)) {
		say("cannot set up the guest filesystems");
		finish(1);
	}
	mkdir("/dev/pts", 0755);
	do_mount("devpts", "/dev/pts", "devpts", 0, NULL);
	mkdir("/dev/shm", 01777);
	do_mount("tmpfs", "/dev/shm", "tmpfs", 0, "mode=1777");
	mkdir("/run/netns", 0755);

	pid = fork();
	if (pid == 0) {
		setsid();
		execve(argv[0], argv, envp);
		perror("bench-init: exec /bench/guest/main.sh");
		_exit(127);
	}
	if (pid < 0) {
		perror("bench-init: fork");
		finish(1);
	}
	/* As PID 1, reap every orphan until main.sh itself exits. */
	for (;;) {
		pid_t got = wait(&wstatus);

		if (got == pid) {
			status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128;
			break;
		}
		if (got < 0 && errno == ECHILD)
			break;
	}
	finish(status);
	return 0;
}
