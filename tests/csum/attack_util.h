/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the attack helpers (attack_frames.c, gso_attack.c,
 * xdp_frags_attack.c) share around the port under test: entering a network
 * namespace by its path, looking up the netdev genetlink family for
 * port_counters.h, and milliseconds on the monotonic clock. The includer
 * defines _GNU_SOURCE (for setns()) before its first include.
 */
#ifndef CSUM_ATTACK_UTIL_H
#define CSUM_ATTACK_UTIL_H

#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "port_counters.h"

static int setns_path(const char *path)
{
	int fd = open(path, O_RDONLY), r;

	if (fd < 0)
		return -1;
	r = setns(fd, CLONE_NEWNET);
	close(fd);
	return r;
}

static void nl_open(void)
{
	nl_fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC);
	if (nl_fd >= 0 &&
	    !nl_request(nl_fd, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 0, CTRL_ATTR_FAMILY_NAME,
			"netdev", 7))
		nl_walk(nl_fd, family_cb, &nl_family);
	if (nl_family <= 0) {
		printf("Bail out! no netdev genetlink family\n");
		exit(1);
	}
}

static long ms_since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t0->tv_sec) * 1000 + (now.tv_nsec - t0->tv_nsec) / 1000000;
}

#endif
