// SPDX-License-Identifier: GPL-2.0
/*
 * qdisc_nl: create a qdisc over rtnetlink exactly as asked, without tc's
 * own argument checks in the way, optionally with the Nth fault-injection
 * point of this task failing (/proc/thread-self/fail-nth, armed once the
 * request is built), and print the kernel's answer.
 *
 *   qdisc_nl [-p PARENT] [-H HANDLE] [-r] [-n FAIL_NTH] [-i BLOCK] [-e BLOCK]
 *            [-R INTERVAL] DEV KIND
 *
 * PARENT and HANDLE are MAJ:MIN in hex (default ffff:fff1 and ffff:0); -r
 * replaces instead of an exclusive create; -R asks for a rate estimator
 * with that interval index (-2 to 3 are valid; ewma_log 2). Prints "OK" or
 * an errno name and the extack message; exits 0 on success.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct req {
	struct nlmsghdr n;
	struct tcmsg t;
	char buf[256];
};

static void put_attr(struct req *r, int type, const void *data, int len)
{
	struct rtattr *a = (void *)((char *)r + NLMSG_ALIGN(r->n.nlmsg_len));

	a->rta_type = type;
	a->rta_len = RTA_LENGTH(len);
	memcpy(RTA_DATA(a), data, len);
	r->n.nlmsg_len = NLMSG_ALIGN(r->n.nlmsg_len) + RTA_ALIGN(a->rta_len);
}

static unsigned int parse_handle(const char *s)
{
	char *end;
	unsigned long maj = strtoul(s, &end, 16), min = 0;

	if (*end == ':')
		min = strtoul(end + 1, NULL, 16);
	return TC_H_MAKE(maj << 16, min);
}

int main(int argc, char **argv)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	unsigned int ifindex, iblock = 0, eblock = 0;
	int has_iblock = 0, has_eblock = 0, has_rate = 0;
	struct tc_estimator est = { .ewma_log = 2 };
	unsigned int parent = TC_H_INGRESS, handle = TC_H_MAKE(TC_H_INGRESS, 0);
	int fd, nthfd = -1, len, err, opt, fail_nth = 0, replace = 0;
	struct req r = { 0 };
	char reply[4096], nth[16];
	struct nlmsgerr *e;
	struct nlmsghdr *h;

	while ((opt = getopt(argc, argv, "p:H:rn:i:e:R:")) != -1) {
		switch (opt) {
		case 'p': parent = parse_handle(optarg); break;
		case 'H': handle = parse_handle(optarg); break;
		case 'r': replace = 1; break;
		case 'n': fail_nth = atoi(optarg); break;
		case 'i': iblock = strtoul(optarg, NULL, 0); has_iblock = 1; break;
		case 'e': eblock = strtoul(optarg, NULL, 0); has_eblock = 1; break;
		case 'R': est.interval = atoi(optarg); has_rate = 1; break;
		default: return 2;
		}
	}
	if (argc - optind != 2) {
		fprintf(stderr, "usage: qdisc_nl [-p PARENT] [-H HANDLE] [-r] [-n FAIL_NTH] [-i BLOCK] [-e BLOCK] [-R INTERVAL] DEV KIND\n");
		return 2;
	}
	ifindex = if_nametoindex(argv[optind]);
	if (!ifindex) {
		perror(argv[optind]);
		return 2;
	}
	r.n.nlmsg_len = NLMSG_LENGTH(sizeof(r.t));
	r.n.nlmsg_type = RTM_NEWQDISC;
	r.n.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE |
			  (replace ? NLM_F_REPLACE : NLM_F_EXCL);
	r.t.tcm_family = AF_UNSPEC;
	r.t.tcm_ifindex = ifindex;
	r.t.tcm_parent = parent;
	r.t.tcm_handle = handle;
	put_attr(&r, TCA_KIND, argv[optind + 1], strlen(argv[optind + 1]) + 1);
	if (has_iblock)	/* 0 too: the kernel must refuse it */
		put_attr(&r, TCA_INGRESS_BLOCK, &iblock, sizeof(iblock));
	if (has_eblock)
		put_attr(&r, TCA_EGRESS_BLOCK, &eblock, sizeof(eblock));
	if (has_rate)
		put_attr(&r, TCA_RATE, &est, sizeof(est));

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		perror("netlink");
		return 2;
	}
	len = 1;
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &len, sizeof(len));
	if (fail_nth > 0) {
		nthfd = open("/proc/thread-self/fail-nth", O_WRONLY);
		len = snprintf(nth, sizeof(nth), "%d", fail_nth);
		if (nthfd < 0 || write(nthfd, nth, len) != len) {
			perror("fail-nth");
			return 2;
		}
	}
	err = send(fd, &r, r.n.nlmsg_len, 0) < 0 ? errno : 0;
	if (nthfd >= 0) {
		/* Disarm whether or not the fault was reached. */
		if (write(nthfd, "0", 1) != 1)
			perror("fail-nth");
	}
	if (err) {
		printf("%s (send)\n", strerrorname_np(err));
		return 1;
	}
	len = recv(fd, reply, sizeof(reply), 0);
	h = (struct nlmsghdr *)reply;
	if (len < (int)NLMSG_LENGTH(sizeof(*e)) || h->nlmsg_type != NLMSG_ERROR) {
		printf("EPROTO (no ack)\n");
		return 1;
	}
	e = NLMSG_DATA(h);
	if (!e->error) {
		printf("OK\n");
		return 0;
	}
	printf("%s", strerrorname_np(-e->error));
	if (h->nlmsg_flags & NLM_F_ACK_TLVS) {
		struct rtattr *a = (void *)((char *)e + sizeof(*e) + e->msg.nlmsg_len - NLMSG_HDRLEN);
		int alen = (char *)h + h->nlmsg_len - (char *)a;

		for (; RTA_OK(a, alen); a = RTA_NEXT(a, alen))
			if (a->rta_type == NLMSGERR_ATTR_MSG)
				printf(": %s", (char *)RTA_DATA(a));
	}
	printf("\n");
	return 1;
}
