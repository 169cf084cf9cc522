// SPDX-License-Identifier: GPL-2.0
/* The guest is what the bench promises: our kernel, real tools, shares. */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "tap.h"

static int mounted(const char *where, const char *type, const char *opt)
{
	char dev[256], dir[256], fstype[64], opts[512];
	FILE *f = fopen("/proc/mounts", "r");
	int found = 0;

	if (!f)
		return 0;
	while (fscanf(f, "%255s %255s %63s %511s %*d %*d", dev, dir, fstype, opts) == 4) {
		if (!strcmp(dir, where) && !strcmp(fstype, type) &&
		    (!opt || strstr(opts, opt)))
			found = 1;
	}
	fclose(f);
	return found;
}

int main(void)
{
	static const char *const tools[] = {
		"/usr/sbin/tc", "/usr/bin/ip", "/usr/sbin/ethtool",
		"/usr/bin/python3", "/usr/bin/tcpdump", "/usr/bin/iasl",
	};
	struct utsname u;
	unsigned int i;
	int fd;

	uname(&u);
	tap_result(strstr(u.release, "-lk45") != NULL,
		   "running the bench kernel (%s)", u.release);
	tap_result(mounted("/usr", "9p", "ro"), "host /usr mounted read-only over 9p");
	tap_result(mounted("/etc", "9p", "ro"), "host /etc mounted read-only over 9p");
	tap_result(access("/usr/bin/true", X_OK) == 0 && open("/usr/.lk45-probe", O_CREAT | O_WRONLY, 0600) < 0,
		   "/usr is usable and not writable");
	fd = open("/results/.probe", O_CREAT | O_WRONLY | O_TRUNC, 0600);
	tap_result(fd >= 0 && write(fd, "x", 1) == 1, "results share is writable");
	if (fd >= 0) {
		close(fd);
		unlink("/results/.probe");
	}
	for (i = 0; i < sizeof(tools) / sizeof(tools[0]); i++)
		tap_result(access(tools[i], X_OK) == 0, "tool %s present", tools[i]);
	tap_result(access("/sys/kernel/debug/kunit", F_OK) == 0, "KUnit debugfs present");
	tap_result(access("/sys/kernel/debug/kmemleak", F_OK) == 0, "kmemleak present");
	/* configfs is a module that its own tests load and mount. */
	tap_result(system("modinfo -F filename configfs >/dev/null") == 0,
		   "configfs module installed");
	return tap_done();
}
