// SPDX-License-Identifier: GPL-2.0
/*
 * ACPI configfs: an SSDT whose load fails half-way. fsync(2) commits the
 * aml attribute with the Nth fault-injection point of the commit failing
 * (fail-nth: slab and page allocations), for N = 1, 2, ... until a commit
 * passes fewer than N of them. fsync(2) must return 0 (the table loaded)
 * or ENOMEM (it did not, and no device appears); after an ENOMEM the
 * identical table must load from a new item.
 *
 * acpi_load_table() installs the table in ACPICA's root table list before
 * it loads it into the namespace. When the allocation that fails comes
 * after the install, ACPICA keeps the table, pointing at acpi_configfs's
 * copy, and loads the identical table from that copy: the copy must not
 * have been freed (patch 0005; KASAN reports the read otherwise).
 *
 * Most allocations that fail while ACPICA runs the table's AML do not fail
 * the load: ACPICA logs "Ignoring error and continuing table load" and
 * loads the rest. fsync(2) returning 0 with a fault injected is then a
 * load like any other: an identical upload must get EEXIST.
 *
 * The sweep stops at the first load that fails after the install. The
 * allocations after it are made by ACPICA's AML parser, which continues
 * the load past a failure and leaks the parse objects it had made
 * (kmemleak reports them): an ACPICA bug of its own, not this path.
 *
 * Each N uploads a table of its own (the OEM revision differs), so that
 * every N runs the whole path, install included: ACPICA never forgets a
 * table, and only the first upload of given bytes installs anything.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"

#define TBL		"/sys/kernel/config/acpi/table/"
#define DEV		"/sys/bus/acpi/devices/LKTS0045:00"
#define TABLES		"/sys/firmware/acpi/tables"
#define DYN		TABLES "/dynamic"
#define DBG		"/sys/kernel/debug/"
#define FAIL_NTH	"/proc/thread-self/fail-nth"
#define CAP		400	/* faults injected before the sweep gives up */
#define WAIT_MS		10000	/* the device list changes from a workqueue */
#define BUDGET_MS	240000	/* a fail line before the bench's 300 s kill */
#define AML_MAX		4096
/* sysfs names dynamic tables SSDT1..SSDT999 and shows no more */
#define MAX_INSTANCES	999
/* ACPICA's note when it skips AML it could not run, loading the rest */
#define SKIPPED		"Ignoring error and continuing table load"

/* struct acpi_table_header */
struct sdt {
	char signature[4];
	uint32_t length;
	uint8_t revision, checksum;
	char oem_id[6], oem_table_id[8];
	uint32_t oem_revision;
	char asl_compiler_id[4];
	uint32_t asl_compiler_revision;
} __attribute__((packed));

struct commit {
	int setup_err;		/* mkdir, open, write or fail-nth failed */
	int fsync_err, close_err;
	int faulted;		/* the armed fault was injected */
};

static unsigned char aml[AML_MAX];
static size_t aml_len;
static uint32_t run_tag;	/* tables of an earlier run differ from ours */
static int nth_fd = -1, kmsg_fd = -1;

static struct {
	int injected;	/* N whose fault was injected */
	int enomem;	/* ... that fsync(2) reported as ENOMEM */
	int loaded;	/* ... with which the table loaded all the same */
	int kept;	/* ENOMEM after ACPICA had installed the table */
	int early;	/* ENOMEM before it had */
	int reloaded;	/* identical tables loaded after an ENOMEM */
	int twins;	/* loaded tables an identical upload found loaded */
	int partial;	/* loaded tables ACPICA skipped a part of */
	int no_dev;	/* ... whose device then did not appear */
	int rescans;	/* loaded tables whose device needed a rescan */
	long lat;	/* slowest device appearance, ms */
} s;

static int n_bad;	/* the current N failed a check */

static void bad(int n, const char *fmt, ...)
{
	va_list ap;

	printf("# N=%d: ", n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	n_bad = 1;
}

static const char *errname(int err)
{
	return err ? strerrorname_np(err) : "0";
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int dev_there(void)
{
	return !access(DEV, F_OK);
}

/* Poll up to @ms for the device to be there (@want) or gone; the time it
 * took, or -1.
 */
static long wait_dev(int want, long ms)
{
	long t0 = now_ms(), t;

	for (;;) {
		t = now_ms() - t0;
		if (dev_there() == want)
			return t;
		if (t >= ms)
			return -1;
		usleep(10000);
	}
}

/* Long enough for a queued bus scan to have added the device. */
static long scan_ms(void)
{
	return 4 * s.lat + 500;
}

static int count_ssdts(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += !strncmp(e->d_name, "SSDT", 4);
	closedir(d);
	return n;
}

static int put(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY);
	ssize_t n = fd < 0 ? -1 : write(fd, val, strlen(val));

	if (fd >= 0)
		close(fd);
	return n != (ssize_t)strlen(val);
}

/*
 * fail-nth counts the injection points of every fault attribute, but these
 * two let GFP_KERNEL slab allocations and order-0 pages fail only when
 * told so. Probability 0: nothing fails but the Nth point.
 */
static int fault_setup(void)
{
	static const char *const set[][2] = {
		{ "failslab/probability", "0" }, { "failslab/verbose", "0" },
		{ "failslab/ignore-gfp-wait", "N" },
		{ "fail_page_alloc/probability", "0" }, { "fail_page_alloc/verbose", "0" },
		{ "fail_page_alloc/ignore-gfp-wait", "N" }, { "fail_page_alloc/min-order", "0" },
	};
	char p[128];
	unsigned int i;
	int err = 0;

	for (i = 0; i < sizeof(set) / sizeof(set[0]); i++) {
		snprintf(p, sizeof(p), DBG "%s", set[i][0]);
		err |= put(p, set[i][1]);
	}
	return err;
}

/* Back to the defaults, which a later fail-nth user may count on. */
static int fault_restore(void)
{
	return put(DBG "failslab/ignore-gfp-wait", "Y") |
	       put(DBG "fail_page_alloc/ignore-gfp-wait", "Y") |
	       put(DBG "fail_page_alloc/min-order", "1");
}

/* Whether a kernel log record since the last call contains @needle. */
static int kmsg_saw(const char *needle)
{
	char rec[8192];
	int found = 0;
	ssize_t n;

	for (;;) {
		n = read(kmsg_fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;	/* overwritten: on from the oldest left */
		if (n <= 0)
			break;		/* EAGAIN: read them all */
		rec[n] = 0;
		if (needle && strstr(rec, needle))
			found = 1;
	}
	return found;
}

/* The compiled SSDT made a table of its own: @id as OEM table ID, @n in
 * the OEM revision, @len bytes of it (a header alone is an empty table).
 */
static void make_table(unsigned char *t, size_t len, const char *id, int n)
{
	struct sdt h;
	uint8_t sum = 0;
	size_t i;

	memcpy(t, aml, len);
	memcpy(&h, t, sizeof(h));
	h.length = len;
	memcpy(h.oem_table_id, id, 8);
	h.oem_revision = run_tag << 12 | n;
	h.checksum = 0;
	memcpy(t, &h, sizeof(h));
	for (i = 0; i < len; i++)
		sum += t[i];
	t[offsetof(struct sdt, checksum)] = -sum;
}

/*
 * mkdir @item, write @t to its aml file and commit it with fsync(2), the
 * Nth injection point on the way failing if @nth. The fault is armed
 * right before fsync(2), through a descriptor opened beforehand (an open
 * allocates), and read back right after: 0 left means it was injected.
 */
static struct commit commit(const char *item, const unsigned char *t, size_t len, int nth)
{
	struct commit c = { 0 };
	char p[128], num[16];
	ssize_t n;
	int fd;

	snprintf(p, sizeof(p), TBL "%s", item);
	if (mkdir(p, 0755)) {
		c.setup_err = errno;
		return c;
	}
	strcat(p, "/aml");
	fd = open(p, O_WRONLY);
	if (fd < 0) {
		c.setup_err = errno;
		return c;
	}
	if (write(fd, t, len) != (ssize_t)len)
		c.setup_err = EIO;
	if (nth) {
		snprintf(num, sizeof(num), "%d", nth);
		if (write(nth_fd, num, strlen(num)) < 0)
			c.setup_err = errno;
	}
	if (fsync(fd))
		c.fsync_err = errno;
	if (nth) {
		n = pread(nth_fd, num, sizeof(num) - 1, 0);
		num[n > 0 ? n : 0] = 0;
		c.faulted = n > 0 && atoi(num) == 0;
		if (n <= 0 || write(nth_fd, "0", 1) != 1)
			c.setup_err = EIO;
	}
	if (close(fd))
		c.close_err = errno;
	return c;
}

static int rm(const char *item)
{
	char p[128];

	snprintf(p, sizeof(p), TBL "%s", item);
	return rmdir(p) ? errno : 0;
}

/*
 * Load an empty table (header only) of its own: any table load queues a
 * scan of the whole namespace (acpi_scan_table_notify()).
 */
static int rescan(int n)
{
	unsigned char k[sizeof(struct sdt)];
	struct commit c;
	int err;

	make_table(k, sizeof(k), "LK45KIK", n);
	c = commit("lf_kick", k, sizeof(k), 0);
	err = rm("lf_kick");
	return c.setup_err ?: c.fsync_err ?: err;
}

/* fsync(2) said the table of lf_fault loaded. */
static const char *check_loaded(int n, const unsigned char *t, int faulted, int partial)
{
	static char what[160];
	const char *dev = "device there";
	struct commit c;
	long lat;
	int err;

	/* Loaded means ACPICA refuses its twin (AE_ALREADY_EXISTS), with or
	 * without a device.
	 */
	c = commit("lf_twin", t, aml_len, 0);
	if (c.setup_err || c.fsync_err != EEXIST)
		bad(n, "an identical upload: setup %s, fsync %s; want EEXIST",
		    errname(c.setup_err), errname(c.fsync_err));
	else
		s.twins++;
	err = rm("lf_twin");
	if (err)
		bad(n, "rmdir lf_twin: %s", errname(err));

	if (!faulted) {
		lat = wait_dev(1, WAIT_MS);
		if (lat < 0)
			bad(n, "no device within %d ms", WAIT_MS);
		else if (lat > s.lat)
			s.lat = lat;
	} else if (wait_dev(1, scan_ms()) < 0) {
		if (partial) {
			/* ACPICA skipped AML it could not allocate for (the
			 * device or its _HID, maybe) and loaded the rest.
			 */
			s.no_dev++;
			dev = "no device";
		} else {
			/* The whole table loaded, so the device is in the
			 * namespace: what failed was the bus scan's work
			 * item (acpi_scan_table_notify()), or the scan is
			 * slow. Another table load queues a scan again.
			 */
			s.rescans++;
			dev = "device there after a rescan";
			err = rescan(n);
			if (err)
				bad(n, "the empty table for a rescan: %s", errname(err));
			else if (wait_dev(1, WAIT_MS) < 0)
				bad(n, "loaded whole, no device even after a rescan");
		}
	}
	err = rm("lf_fault");
	if (err)
		bad(n, "rmdir: %s", errname(err));
	if (wait_dev(0, WAIT_MS) < 0)
		bad(n, "the device stays after rmdir");
	snprintf(what, sizeof(what), "%s: loaded%s, %s, rmdir unloaded it",
		 faulted ? "fault injected, fsync 0" : "no fault left to inject, fsync 0",
		 partial ? " in part (ACPICA skipped AML)" : "", dev);
	return what;
}

/*
 * Evidence that a failed load had installed the table: its entry under
 * /sys/firmware/acpi/tables/dynamic. ACPICA prints nothing when
 * acpi_ns_load_table() fails for want of memory, but it raises the INSTALL
 * event (acpi_sysfs_table_handler() adds the entry) once the table is in
 * its root table list, before the load; no entry is ever removed. The
 * identical reload then adds no entry: acpi_tb_check_duplication() found
 * the table installed and unloaded, and ACPICA loaded its kept copy
 * without installing anything (no INSTALL event).
 */
static const char *check_failed(int n, const unsigned char *t, int d0, int d1, int enomem)
{
	struct commit c;
	int err, d2;
	long lat;

	/* Nothing loaded, so no scan was queued: a short look will do. */
	if (wait_dev(1, 200) >= 0)
		bad(n, "a device after a failed load");
	err = rm("lf_fault");
	if (err)
		bad(n, "rmdir: %s", errname(err));

	c = commit("lf_reload", t, aml_len, 0);
	d2 = count_ssdts(DYN);
	if (c.setup_err || c.fsync_err || c.close_err) {
		bad(n, "the identical table again: setup %s, fsync %s, close %s",
		    errname(c.setup_err), errname(c.fsync_err), errname(c.close_err));
	} else {
		lat = wait_dev(1, WAIT_MS);
		if (lat < 0)
			bad(n, "the identical table loaded, but no device within %d ms", WAIT_MS);
		s.reloaded += enomem && lat >= 0;
		if (lat > s.lat)
			s.lat = lat;
	}
	err = rm("lf_reload");
	if (err)
		bad(n, "rmdir lf_reload: %s", errname(err));
	if (wait_dev(0, WAIT_MS) < 0)
		bad(n, "the reloaded table's device stays after rmdir");

	if (!enomem)
		return "fsync(2) failed with neither 0 nor ENOMEM";
	if (d1 - d0 == 1 && d2 == d1) {
		s.kept++;
		return "ENOMEM after ACPICA installed the table; its twin loaded from ACPICA's copy";
	}
	if (d1 == d0 && d2 - d1 == 1) {
		s.early++;
		return "ENOMEM before ACPICA installed the table; its twin installed and loaded";
	}
	bad(n, "sysfs entries: %+d at the failure, %+d at the reload; want +1 +0 or +0 +1",
	    d1 - d0, d2 - d1);
	return "ENOMEM";
}

/*
 * One N: 1 when the commit passed fewer than N injection points (the
 * sweep is over), -1 when the upload could not even be made, 0 to go on.
 */
static int sweep_one(int n)
{
	unsigned char t[AML_MAX];
	const char *what;
	struct commit c;
	int d0, d1, partial;

	n_bad = 0;
	make_table(t, aml_len, "LK45FLT", n);
	d0 = count_ssdts(DYN);
	kmsg_saw(NULL);
	c = commit("lf_fault", t, aml_len, n);
	d1 = count_ssdts(DYN);
	partial = kmsg_saw(SKIPPED);
	if (c.setup_err) {
		bad(n, "mkdir, write or fail-nth: %s", errname(c.setup_err));
		rm("lf_fault");
		tap_result(0, "N=%d: the upload could not be made", n);
		return -1;
	}
	if (c.close_err)
		bad(n, "close(2) returned %s", errname(c.close_err));
	s.injected += c.faulted;

	if (!c.fsync_err) {
		s.loaded += c.faulted;
		s.partial += c.faulted && partial;
		what = check_loaded(n, t, c.faulted, partial);
	} else if (c.fsync_err == ENOMEM && c.faulted) {
		s.enomem++;
		what = check_failed(n, t, d0, d1, 1);
	} else {
		bad(n, "fsync(2) failed with %s%s", errname(c.fsync_err),
		    c.faulted ? "" : ", and no fault was injected");
		/* A table announced but not installed: the root table list
		 * could not grow, and acpi_tb_install_table_with_override()
		 * does not say so.
		 */
		if (c.fsync_err == EINVAL && d1 - d0 == 1)
			printf("# N=%d: EINVAL with a new sysfs entry: ACPICA lost a failure to grow its root table list\n",
			       n);
		what = check_failed(n, t, d0, d1, 0);
	}
	tap_result(!n_bad, "N=%d: %s", n, what);
	return !c.fsync_err && !c.faulted;
}

/* iasl -p lk45 lk45_ssdt.asl in a directory of its own, as test_acpi_aml.sh */
static int compile_ssdt(void)
{
	char exe[PATH_MAX], cmd[3 * PATH_MAX], dir[] = "/tmp/lk45lf.XXXXXX", *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int fd, err;

	if (n <= 0 || !mkdtemp(dir))
		return -1;
	exe[n] = 0;
	slash = strrchr(exe, '/');
	if (slash)
		*slash = 0;
	snprintf(cmd, sizeof(cmd), "cp %s/lk45_ssdt.asl %s/ && cd %s && "
		 "iasl -p lk45 lk45_ssdt.asl >/dev/null 2>&1", exe, dir, dir);
	err = system(cmd);
	snprintf(cmd, sizeof(cmd), "%s/lk45.aml", dir);
	fd = open(cmd, O_RDONLY);
	n = fd < 0 ? -1 : read(fd, aml, sizeof(aml));
	if (fd >= 0)
		close(fd);
	aml_len = n > 0 ? n : 0;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return err | system(cmd);
}

int main(void)
{
	int n, r = 0, last = 0, ssdts, swept;
	unsigned char t[AML_MAX];
	struct commit c;
	struct sdt h;
	long t0, lat;
	char d[160];

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (system("command -v iasl >/dev/null")) {
		printf("ok %d - ACPI load fault sweep # SKIP no iasl\n", ++tap_n);
		return tap_done();
	}
	if (access(DBG "failslab", F_OK) || access(DBG "fail_page_alloc", F_OK) ||
	    access(FAIL_NTH, F_OK)) {
		printf("ok %d - ACPI load fault sweep # SKIP no failslab, fail_page_alloc or fail-nth\n",
		       ++tap_n);
		return tap_done();
	}
	ssdts = count_ssdts(TABLES) + count_ssdts(DYN);
	if (ssdts + CAP + 50 > MAX_INSTANCES) {
		printf("ok %d - ACPI load fault sweep # SKIP %d SSDTs already: sysfs would not show ours\n",
		       ++tap_n, ssdts);
		return tap_done();
	}
	/* Every run installs tables: the count never comes back. */
	run_tag = ssdts;

	if (system("modprobe configfs && { mountpoint -q /sys/kernel/config || "
		   "mount -t configfs none /sys/kernel/config; } && modprobe acpi_configfs")) {
		tap_result(0, "load configfs and acpi_configfs");
		return tap_done();
	}
	n = compile_ssdt();
	memcpy(&h, aml, sizeof(h));
	tap_result(!n && aml_len > sizeof(h) && h.length == aml_len,
		   "iasl compiles lk45_ssdt.asl (%zu bytes)", aml_len);
	if (tap_failed)
		return tap_done();
	nth_fd = open(FAIL_NTH, O_RDWR);
	kmsg_fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	if (kmsg_fd >= 0)
		lseek(kmsg_fd, 0, SEEK_END);
	tap_result(nth_fd >= 0 && kmsg_fd >= 0 && !fault_setup(),
		   "fail-nth, /dev/kmsg and the failslab and fail_page_alloc attributes");
	if (tap_failed)
		goto out;

	/* The table loads and unloads when nothing fails. */
	tap_result(!dev_there(), "no " DEV " before the sweep");
	make_table(t, aml_len, "LK45FLT", 0);
	c = commit("lf_fault", t, aml_len, 0);
	tap_result(!c.setup_err && !c.fsync_err && !c.close_err,
		   "the SSDT, table ID LK45FLT: fsync and close return 0");
	lat = wait_dev(1, WAIT_MS);
	tap_result(lat >= 0, "its device appears (%ld ms)", lat);
	s.lat = lat > 0 ? lat : 0;
	tap_is_long(rm("lf_fault"), 0, "rmdir lf_fault");
	tap_result(wait_dev(0, WAIT_MS) >= 0, "and the device goes");
	if (tap_failed)
		goto out;

	t0 = now_ms();
	for (n = 1; n <= CAP && !r && !s.kept; n++) {
		if (now_ms() - t0 > BUDGET_MS) {
			tap_result(0, "the sweep fits in %d s (stopped before N=%d)",
				   BUDGET_MS / 1000, n);
			break;
		}
		r = sweep_one(n);
	}
	last = r == 1 ? n - 1 : 0;
	printf("# sweep: %ld s, slowest device appearance %ld ms\n",
	       (now_ms() - t0) / 1000, s.lat);

	/* Every allocation up to the first failure after the install failed once. */
	tap_result(s.kept == 1 && !last,
		   "the sweep reaches a load that fails after the install, at N=%d", n - 1);
	swept = last ? last - 1 : n - 1;
	snprintf(d, sizeof(d), "%d faults injected: one at every N swept", s.injected);
	tap_is_long(s.injected, swept, d);
	snprintf(d, sizeof(d), "each ended in ENOMEM (%d) or in a loaded table (%d), nothing else",
		 s.enomem, s.loaded);
	tap_is_long(s.enomem + s.loaded, s.injected, d);
	printf("# of the loaded: %d in part (%d with no device), %d needed a rescan\n",
	       s.partial, s.no_dev, s.rescans);
	snprintf(d, sizeof(d), "after each ENOMEM the identical table loaded (%d)", s.reloaded);
	tap_is_long(s.reloaded, s.enomem, d);
	snprintf(d, sizeof(d), "each ENOMEM came before ACPICA installed the table (%d) or after (%d)",
		 s.early, s.kept);
	tap_is_long(s.kept + s.early, s.enomem, d);
	tap_result(s.kept > 0,
		   "%d loads failed after the install, and ACPICA loaded their twins from its copies",
		   s.kept);
	snprintf(d, sizeof(d), "each table fsync(2) called loaded was: an identical upload got EEXIST (%d)",
		 s.twins);
	tap_is_long(s.twins, s.loaded + !!last, d);

out:
	tap_is_long(fault_restore(), 0, "failslab and fail_page_alloc back to their defaults");
	/* Another test of this lane unloads configfs: leave it nothing loaded on it. */
	tap_is_long(system("modprobe -r acpi_configfs"), 0, "acpi_configfs unloads");
	return tap_done();
}
