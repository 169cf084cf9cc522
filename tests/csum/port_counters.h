/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The transmit checksum counters of the port under test, for the raw-frame
 * tests: tx-needs-csum and tx-csum-none of the netdev netlink family's
 * queue stats, ethtool -S tx_csum_sw, and tx_dropped.
 */
#ifndef CSUM_PORT_COUNTERS_H
#define CSUM_PORT_COUNTERS_H

#include <linux/ethtool.h>
#include <linux/filter.h>
#include <linux/genetlink.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/netlink.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* include/uapi/linux/netdev.h of 6.12; Debian 12's headers predate them */
#define NETDEV_CMD_QSTATS_GET		12
#define NETDEV_A_QSTATS_IFINDEX		1
#define NETDEV_A_QSTATS_TX_CSUM_NONE	26
#define NETDEV_A_QSTATS_TX_NEEDS_CSUM	27

/* the port: its name and index, and the generic netlink socket and family */
static const char *txif;
static int txidx, nl_fd, nl_family;

struct counters {
	long long needs, none, sw, dropped;
	int strays;	/* frames of others handed to the driver in the window */
};

static int nl_request(int fd, uint16_t type, uint8_t cmd, uint16_t flags,
		      uint16_t attr, const void *val, int vlen)
{
	struct {
		struct nlmsghdr n;
		struct genlmsghdr g;
		char buf[64];
	} req = { 0 };
	struct nlattr *a = (void *)req.buf;

	req.n.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN) + NLA_HDRLEN + NLA_ALIGN(vlen);
	req.n.nlmsg_type = type;
	req.n.nlmsg_flags = NLM_F_REQUEST | flags;
	req.g.cmd = cmd;
	req.g.version = 1;
	a->nla_type = attr;
	a->nla_len = NLA_HDRLEN + vlen;
	memcpy(req.buf + NLA_HDRLEN, val, vlen);
	return send(fd, &req, req.n.nlmsg_len, 0) < 0 ? -1 : 0;
}

static long long nla_uint(const struct nlattr *a)
{
	if (a->nla_len == NLA_HDRLEN + 8)
		return *(const uint64_t *)((const char *)a + NLA_HDRLEN);
	return *(const uint32_t *)((const char *)a + NLA_HDRLEN);
}

/* Walk the replies; call @fn for each attribute of each message. */
static int nl_walk(int fd, void (*fn)(const struct nlattr *, void *), void *arg)
{
	static char buf[16384];

	for (;;) {
		int n = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h;

		if (n <= 0)
			return -1;
		for (h = (void *)buf; NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
			struct nlattr *a;
			int rest;

			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (h->nlmsg_type == NLMSG_ERROR)
				return ((struct nlmsgerr *)NLMSG_DATA(h))->error;
			a = (void *)((char *)NLMSG_DATA(h) + GENL_HDRLEN);
			rest = h->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);
			while (rest >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= rest) {
				fn(a, arg);
				rest -= NLA_ALIGN(a->nla_len);
				a = (void *)((char *)a + NLA_ALIGN(a->nla_len));
			}
			if (!(h->nlmsg_flags & NLM_F_MULTI))
				return 0;
		}
	}
}

static void family_cb(const struct nlattr *a, void *arg)
{
	if (a->nla_type == CTRL_ATTR_FAMILY_ID)
		*(int *)arg = *(const uint16_t *)((const char *)a + NLA_HDRLEN);
}

struct qs {
	int ifindex;
	bool mine;
	struct counters *c;
};

static void qstats_cb(const struct nlattr *a, void *arg)
{
	struct qs *q = arg;

	if (a->nla_type == NETDEV_A_QSTATS_IFINDEX)
		q->mine = *(const uint32_t *)((const char *)a + NLA_HDRLEN) == (uint32_t)q->ifindex;
	else if (q->mine && a->nla_type == NETDEV_A_QSTATS_TX_NEEDS_CSUM)
		q->c->needs = nla_uint(a);
	else if (q->mine && a->nla_type == NETDEV_A_QSTATS_TX_CSUM_NONE)
		q->c->none = nla_uint(a);
}

static long long ethtool_stat(const char *name)
{
	struct ethtool_drvinfo di = { .cmd = ETHTOOL_GDRVINFO };
	struct ifreq ifr = { 0 };
	struct ethtool_gstrings *gs;
	struct ethtool_stats *st;
	long long v = -1;
	unsigned int i;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	strncpy(ifr.ifr_name, txif, IFNAMSIZ - 1);
	ifr.ifr_data = (void *)&di;
	if (ioctl(fd, SIOCETHTOOL, &ifr)) {
		close(fd);
		return -1;
	}
	gs = calloc(1, sizeof(*gs) + di.n_stats * ETH_GSTRING_LEN);
	st = calloc(1, sizeof(*st) + di.n_stats * 8);
	gs->cmd = ETHTOOL_GSTRINGS;
	gs->string_set = ETH_SS_STATS;
	gs->len = di.n_stats;
	st->cmd = ETHTOOL_GSTATS;
	st->n_stats = di.n_stats;
	ifr.ifr_data = (void *)gs;
	if (!ioctl(fd, SIOCETHTOOL, &ifr)) {
		ifr.ifr_data = (void *)st;
		if (!ioctl(fd, SIOCETHTOOL, &ifr))
			for (i = 0; i < di.n_stats; i++)
				if (!strcmp((char *)gs->data + i * ETH_GSTRING_LEN, name))
					v = st->data[i];
	}
	free(gs);
	free(st);
	close(fd);
	return v;
}

static void read_counters(struct counters *c)
{
	struct qs q = { .ifindex = txidx, .c = c };
	char path[128];
	FILE *f;

	c->needs = c->none = -1;
	if (nl_family > 0 &&
	    !nl_request(nl_fd, nl_family, NETDEV_CMD_QSTATS_GET, NLM_F_DUMP,
			NETDEV_A_QSTATS_IFINDEX, &txidx, 4))
		nl_walk(nl_fd, qstats_cb, &q);
	c->sw = ethtool_stat("tx_csum_sw");
	snprintf(path, sizeof(path), "/sys/class/net/%s/statistics/tx_dropped", txif);
	f = fopen(path, "r");
	if (!f || fscanf(f, "%lld", &c->dropped) != 1)
		c->dropped = -1;
	if (f)
		fclose(f);
}

/*
 * Frames of others. The counters are the port's, so a frame the test did
 * not send (a neighbour probe, the tail of an earlier flow) that leaves
 * inside a window moves them. A packet socket on the port sees every frame
 * the stack hands the driver before the driver counts it
 * (dev_queue_xmit_nit() runs ahead of ndo_start_xmit()), so a window whose
 * socket stayed empty saw nothing but the test's frames. Its filter drops
 * the test's own frames (source or destination MAC 02:5e:00:..., or TCP or
 * UDP on the flow's port right behind an untagged IP header) in the
 * kernel, so that they are neither queued nor left shared with the driver;
 * what passes is parsed here once more (tags, IPv6 extension headers,
 * VXLAN's inner frame), and those of the flow's frames stay shared with
 * the skb the driver gets, as with any tap. pktgen and
 * PACKET_QDISC_BYPASS frames skip the taps: they are the test's.
 */
static int stray_fd = -1, stray_port;
static bool stray_seen;		/* the last window was not quiet */
static char stray_what[96];	/* what the last drain's first stray was */

#define STRAY_OWN	0
#define STRAY_OTHER	0xffff

#define J(op, k, jt, jf)	BPF_JUMP(BPF_JMP | (op) | BPF_K, k, jt, jf)
#define L(size, mode, k)	BPF_STMT(BPF_LD | (size) | (mode), k)

static int stray_open(int port)
{
	/* jt/jf count instructions from the next one; REJ is 28, ACC 29 */
	struct sock_filter f[] = {
		/* 0 */ L(BPF_W, BPF_ABS, SKF_AD_OFF + SKF_AD_PKTTYPE),
		/* 1 */ J(BPF_JEQ, PACKET_OUTGOING, 0, 26),
		/* 2: the test's source MAC */ L(BPF_H, BPF_ABS, 6),
		/* 3 */ J(BPF_JEQ, 0x025e, 0, 2),
		/* 4 */ L(BPF_B, BPF_ABS, 8),
		/* 5 */ J(BPF_JEQ, 0, 22, 0),
		/* 6: or destination MAC */ L(BPF_H, BPF_ABS, 0),
		/* 7 */ J(BPF_JEQ, 0x025e, 0, 2),
		/* 8 */ L(BPF_B, BPF_ABS, 2),
		/* 9 */ J(BPF_JEQ, 0, 18, 0),
		/* 10: no port: ACC (set below) */ BPF_JUMP(BPF_JMP | BPF_JA, 0, 0, 0),
		/* 11 */ L(BPF_H, BPF_ABS, 12),
		/* 12 */ J(BPF_JEQ, ETH_P_IP, 0, 2),
		/* 13 */ BPF_STMT(BPF_LDX | BPF_B | BPF_MSH, 14),
		/* 14 */ BPF_JUMP(BPF_JMP | BPF_JA, 4, 0, 0),
		/* 15 */ J(BPF_JEQ, ETH_P_IPV6, 0, 13),
		/* 16 */ BPF_STMT(BPF_LDX | BPF_W | BPF_IMM, 40),
		/* 17: IPv6 next header */ L(BPF_B, BPF_ABS, 20),
		/* 18 */ BPF_JUMP(BPF_JMP | BPF_JA, 1, 0, 0),
		/* 19: IPv4 protocol */ L(BPF_B, BPF_ABS, 23),
		/* 20 */ J(BPF_JEQ, 6, 1, 0),
		/* 21 */ J(BPF_JEQ, 17, 0, 7),
		/* 22: source port */ L(BPF_H, BPF_IND, 14),
		/* 23 */ J(BPF_JEQ, 0, 4, 0),
		/* 24: destination port */ L(BPF_H, BPF_IND, 16),
		/* 25 */ J(BPF_JEQ, 0, 2, 0),
		/* 26: not the flow's ports (VXLAN's inner ones: here) */
		BPF_STMT(BPF_RET | BPF_K, 256),
		/* 27: unused */ BPF_STMT(BPF_RET | BPF_K, 256),
		/* 28: REJ */ BPF_STMT(BPF_RET | BPF_K, 0),
		/* 29: ACC */ BPF_STMT(BPF_RET | BPF_K, 256),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL),
				   .sll_ifindex = txidx };
	int fd, big = 8 << 20;

	stray_port = port;
	if (!port)
		f[10].k = 18;
	f[23].k = port;
	f[25].k = port;
	/* protocol 0 until the filter is on: nothing queued unfiltered */
	fd = socket(AF_PACKET, SOCK_RAW, 0);
	if (fd < 0)
		return -1;
	if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)) ||
	    bind(fd, (void *)&sll, sizeof(sll))) {
		close(fd);
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
	return fd;
}

#undef J
#undef L

static inline unsigned int be16at(const uint8_t *b)
{
	return b[0] << 8 | b[1];
}

/* A frame the filter passed: STRAY_OWN if it is the flow's after all
 * (behind tags or IPv6 extension headers), else STRAY_OTHER.
 */
static int stray_classify(const uint8_t *b, int len)
{
	int off = 12, l4 = -1, proto = -1, depth;
	unsigned int type;

	if (!stray_port || len < 14)
		return STRAY_OTHER;
again:
	for (type = be16at(b + off); (type == 0x8100 || type == 0x88a8) && off + 6 <= len;
	     type = be16at(b + off))
		off += 4;
	off += 2;
	if (type == ETH_P_IP && off + 20 <= len) {
		proto = b[off + 9];
		l4 = off + (b[off] & 15) * 4;
	} else if (type == ETH_P_IPV6 && off + 40 <= len) {
		proto = b[off + 6];
		l4 = off + 40;
		/* hop-by-hop, routing, destination options */
		for (depth = 0; depth < 8 && (proto == 0 || proto == 43 || proto == 60) &&
		     l4 + 8 <= len; depth++) {
			proto = b[l4];
			l4 += (b[l4 + 1] + 1) * 8;
		}
	}
	if ((proto != 6 && proto != 17) || l4 + 4 > len)
		return STRAY_OTHER;
	if (be16at(b + l4) == (unsigned int)stray_port ||
	    be16at(b + l4 + 2) == (unsigned int)stray_port)
		return STRAY_OWN;
	/* VXLAN: the flow's if its inner frame is (8 bytes of UDP, 8 of VXLAN) */
	if (proto == 17 && (be16at(b + l4 + 2) == 4789 || be16at(b + l4 + 2) == 4790) &&
	    l4 + 16 + 14 <= len) {
		b += l4 + 16;
		len -= l4 + 16;
		off = 12;
		l4 = proto = -1;
		goto again;
	}
	return STRAY_OTHER;
}

/* Frames of others queued on the watch since the last call; -1: no watch. */
static int stray_drain(void)
{
	uint8_t buf[256];
	int n = 0;
	ssize_t len;

	if (stray_fd < 0)
		return -1;
	stray_what[0] = 0;
	while ((len = recv(stray_fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC)) > 0) {
		int got = len > (ssize_t)sizeof(buf) ? (int)sizeof(buf) : (int)len;

		if (stray_classify(buf, got) != STRAY_OTHER)
			continue;
		if (!n++ && got >= 14)
			snprintf(stray_what, sizeof(stray_what),
				 "first: %zd bytes, type 0x%04x, to %02x:%02x:%02x:%02x:%02x:%02x, bytes 14-17 %02x %02x %02x %02x",
				 len, be16at(buf + 12), buf[0], buf[1], buf[2], buf[3], buf[4], buf[5],
				 buf[14], got > 15 ? buf[15] : 0, got > 16 ? buf[16] : 0,
				 got > 17 ? buf[17] : 0);
	}
	return n;
}

/* Wait for an RCU grace period: rebinding a running packet socket to
 * another protocol unhooks it with synchronize_net().
 */
static void stray_barrier(void)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET,
				   .sll_protocol = htons(ETH_P_LOOPBACK) };
	int fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));

	if (fd < 0)
		return;
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)))
		perror("# stray_barrier: bind");
	close(fd);
}

/* After a window that was not quiet, wait for 300 ms without a frame of
 * another (at most 10 s); otherwise only forget what came between windows.
 */
static void stray_quiesce(void)
{
	struct pollfd p = { .fd = stray_fd, .events = POLLIN };
	int rounds = 0;

	if (stray_fd < 0)
		return;
	stray_drain();
	while (stray_seen && rounds++ < 33 && poll(&p, 1, 300) > 0)
		stray_drain();
	/* 20 ms without a frame, then a grace period: a frame is tapped and
	 * counted by the driver in one RCU-BH section, so after it every frame
	 * drained so far is counted, and none is counted inside the window. A
	 * frame tapped since the last drain may be counted on either side of
	 * the first reading: it stays queued, and the window counts it.
	 */
	for (rounds = 0; rounds < 50 && poll(&p, 1, 20) > 0; rounds++)
		stray_drain();
	stray_barrier();
	stray_seen = false;
}

/* window_begin/window_end bracket one measurement: the counters at each
 * end, and in @b->strays the frames of others handed to the driver in
 * between (the caller measures again while it is not 0). @port: the flow's
 * TCP/UDP port, 0 when the test's frames carry its MAC mark.
 */
static void window_begin(struct counters *a, int port)
{
	if (stray_fd < 0 || port != stray_port) {
		if (stray_fd >= 0)
			close(stray_fd);
		stray_fd = stray_open(port);
		if (stray_fd < 0) {
			printf("Bail out! no packet socket to watch %s\n", txif);
			exit(1);
		}
	}
	if (getenv("STRAY_QUIET")) {	/* a try after one that was not quiet */
		stray_seen = true;
		unsetenv("STRAY_QUIET");
	}
	stray_quiesce();
	read_counters(a);
	a->strays = 0;
}

static void window_end(struct counters *b)
{
	read_counters(b);
	b->strays = stray_drain();
	stray_seen = b->strays > 0;
}

/* tries per measurement before a window that never stayed quiet fails it */
#define WINDOW_TRIES	4

#endif
