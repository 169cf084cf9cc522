// SPDX-License-Identifier: GPL-2.0
/*
 * qdisc_nl: add an ingress-slot qdisc over rtnetlink, optionally with the
 * Nth fault-injection point of this task failing (/proc/thread-self/
 * fail-nth, armed after everything else is ready), and print the errno.
 *
 *   qdisc_nl DEV KIND [FAIL_NTH [INGRESS_BLOCK [EGRESS_BLOCK]]]
 *
 * Prints "OK" or an errno name and the extack message; exits 0 on success.
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

int main(int argc, char **argv)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct req r = { 0 };
	char reply[4096], nth[16];
	int fd, nthfd = -1, len, err;
	unsigned int ifindex, block;
	struct nlmsgerr *e;
	struct nlmsghdr *h;

	if (argc < 3) {
		fprintf(stderr, "usage: qdisc_nl DEV KIND [FAIL_NTH [INGRESS_BLOCK [EGRESS_BLOCK]]]\n");
		return 2;
	}
	ifindex = if_nametoindex(argv[1]);
	if (!ifindex) {
		perror(argv[1]);
		return 2;
	}
	r.n.nlmsg_len = NLMSG_LENGTH(sizeof(r.t));
	r.n.nlmsg_type = RTM_NEWQDISC;
	r.n.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL;
	r.t.tcm_family = AF_UNSPEC;
	r.t.tcm_ifindex = ifindex;
	r.t.tcm_parent = TC_H_INGRESS;	/* == TC_H_CLSACT */
	r.t.tcm_handle = TC_H_MAKE(TC_H_INGRESS, 0);
	put_attr(&r, TCA_KIND, argv[2], strlen(argv[2]) + 1);
	if (argc > 4 && (block = strtoul(argv[4], NULL, 0)))
		put_attr(&r, TCA_INGRESS_BLOCK, &block, sizeof(block));
	if (argc > 5 && (block = strtoul(argv[5], NULL, 0)))
		put_attr(&r, TCA_EGRESS_BLOCK, &block, sizeof(block));

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		perror("netlink");
		return 2;
	}
	len = 1;
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &len, sizeof(len));
	if (argc > 3 && atoi(argv[3]) > 0) {
		nthfd = open("/proc/thread-self/fail-nth", O_WRONLY);
		len = snprintf(nth, sizeof(nth), "%d", atoi(argv[3]));
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
