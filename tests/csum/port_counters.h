/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The transmit checksum counters of the port under test, for the raw-frame
 * tests: tx-needs-csum and tx-csum-none of the netdev netlink family's
 * queue stats, ethtool -S tx_csum_sw, and tx_dropped.
 */
#ifndef CSUM_PORT_COUNTERS_H
#define CSUM_PORT_COUNTERS_H

#include <linux/ethtool.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
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

#endif
