/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The TCP sending side that gso_attack.c and xdp_frags_attack.c share for
 * flows to "flow recv": flow.c's byte pattern, the peer's address, a socket
 * with send and receive timeouts, a pipe spliced to it, MSG_ZEROCOPY
 * completions and the end of a stream (the receiver's one-byte
 * acknowledgement). The includer defines _GNU_SOURCE (for splice()) before
 * its first include, and die(), which prints its own name.
 */
#ifndef CSUM_FLOW_UTIL_H
#define CSUM_FLOW_UTIL_H

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#ifndef SO_EE_CODE_ZEROCOPY_COPIED
#define SO_EE_CODE_ZEROCOPY_COPIED	1
#endif

/* flow.c's chunk: its pattern restarts, shifted, every CHUNK bytes */
#define CHUNK	1000

static void die(const char *what);

static uint8_t pattern(unsigned long pos)
{
	return (uint8_t)((pos / CHUNK) * 7 + pos % CHUNK);
}

static socklen_t make_addr(int family, const char *host, int port, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)ss;

		a->sin_family = AF_INET;
		a->sin_port = htons(port);
		if (inet_pton(AF_INET, host, &a->sin_addr) != 1)
			die("address");
		return sizeof(*a);
	}
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;

	a6->sin6_family = AF_INET6;
	a6->sin6_port = htons(port);
	if (inet_pton(AF_INET6, host, &a6->sin6_addr) != 1)
		die("address");
	return sizeof(*a6);
}

/* a socket whose sends and receives give up after @timeout_s seconds */
static int make_socket(int family, int type, int timeout_s)
{
	struct timeval tv = { .tv_sec = timeout_s };
	int fd = socket(family, type, 0);

	if (fd < 0)
		die("socket");
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	return fd;
}

/* @len bytes from the pipe's read end @rd to the socket @fd, by splice(2)
 * with @flags; die(@what) when it fails
 */
static void splice_all(int rd, int fd, ssize_t len, unsigned int flags, const char *what)
{
	while (len > 0) {
		ssize_t out = splice(rd, NULL, fd, NULL, len, flags);

		if (out <= 0)
			die(what);
		len -= out;
	}
}

/* MSG_ZEROCOPY completions: how many sends completed, whether the kernel
 * fell back to copying any
 */
static unsigned long zc_done;
static bool zc_copied;

static void zc_drain(int fd, int wait_ms)
{
	struct pollfd p = { .fd = fd, .events = 0 };
	char ctl[256];

	if (wait_ms && poll(&p, 1, wait_ms) <= 0)
		return;
	for (;;) {
		struct msghdr m = { .msg_control = ctl, .msg_controllen = sizeof(ctl) };
		struct cmsghdr *c;

		if (recvmsg(fd, &m, MSG_ERRQUEUE | MSG_DONTWAIT) < 0)
			return;
		for (c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
			struct sock_extended_err *e = (void *)CMSG_DATA(c);

			if (e->ee_errno || e->ee_origin != SO_EE_ORIGIN_ZEROCOPY)
				continue;
			zc_done += e->ee_data - e->ee_info + 1;
			if (e->ee_code & SO_EE_CODE_ZEROCOPY_COPIED)
				zc_copied = true;
		}
	}
}

/* the last MSG_ZEROCOPY completions, waited for up to @wait_ms, and on
 * stderr how many sends completed
 */
static void zc_report(int fd, int wait_ms)
{
	zc_drain(fd, wait_ms);
	fprintf(stderr, "# MSG_ZEROCOPY: %lu sends completed%s\n", zc_done,
		zc_copied ? ", some copied by the kernel" : "");
}

/* the end of a stream: shut down the sending side and wait for the
 * receiver's byte; @zc: then zc_report() with @zc_wait_ms
 */
static void stream_end(int fd, bool zc, int zc_wait_ms)
{
	char ack;

	shutdown(fd, SHUT_WR);
	if (recv(fd, &ack, 1, 0) != 1)
		die("ack");
	if (zc)
		zc_report(fd, zc_wait_ms);
}

#endif
