// SPDX-License-Identifier: GPL-2.0
/*
 * Cost per segment of a GSO packet the chip cannot checksum, for
 * make csum-bench:
 *
 *   gso_send IFNAME COUNT
 *
 * sends COUNT TCP/IPv6 GSO packets of 45 segments (1440 bytes of payload
 * each) through a packet socket with a virtio net header, to a MAC address
 * no port has, waits until the port has sent every segment (its tx_packets)
 * and prints the nanoseconds from the first send to the last segment,
 * divided by the segments. 8139cp's chip checksums no IPv6: the core
 * segments each packet and the segments' checksums are computed in
 * software, by the core or by the driver. Under QEMU's -icount a
 * nanosecond is an instruction, so the figure repeats from run to run.
 */
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <linux/virtio_net.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MSS	1440
#define SEGS	45
#define HDR	(14 + 40 + 20)
#define LEN	(HDR + MSS * SEGS)

static unsigned long long tx_packets(const char *ifname)
{
	char path[128];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/net/%s/statistics/tx_packets", ifname);
	f = fopen(path, "r");
	if (!f || fscanf(f, "%llu", &v) != 1) {
		perror(path);
		exit(2);
	}
	fclose(f);
	return v;
}

static uint32_t sum16(const uint8_t *p, size_t n, uint32_t s)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		s += p[i] << 8 | p[i + 1];
	return s;
}

static long long ns_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char **argv)
{
	static uint8_t buf[sizeof(struct virtio_net_hdr) + LEN];
	struct virtio_net_hdr *vh = (struct virtio_net_hdr *)buf;
	uint8_t *f = buf + sizeof(*vh), *ip6 = f + 14, *tcp = ip6 + 40;
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_halen = 6,
				   .sll_protocol = htons(ETH_P_IPV6) };
	unsigned long long want, start;
	long long t0, t1, deadline;
	int fd, one = 1, count, i;
	uint32_t s;

	if (argc != 3 || (count = atoi(argv[2])) <= 0) {
		fprintf(stderr, "usage: gso_send IFNAME COUNT\n");
		return 2;
	}
	sll.sll_ifindex = if_nametoindex(argv[1]);
	fd = socket(AF_PACKET, SOCK_RAW, 0);
	if (!sll.sll_ifindex || fd < 0 ||
	    setsockopt(fd, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof(one))) {
		perror("gso_send: packet socket");
		return 2;
	}

	/* to 02:00:00:00:00:99, which no port has, from a local address */
	memcpy(f, "\x02\x00\x00\x00\x00\x99\x02\x00\x00\x00\x00\x98\x86\xdd", 14);
	memcpy(sll.sll_addr, f, 6);
	ip6[0] = 0x60;
	ip6[4] = (LEN - 14 - 40) >> 8;
	ip6[5] = (LEN - 14 - 40) & 0xff;
	ip6[6] = IPPROTO_TCP;
	ip6[7] = 64;
	inet_pton(AF_INET6, "2001:db8:99::1", ip6 + 8);
	inet_pton(AF_INET6, "2001:db8:99::2", ip6 + 24);
	tcp[0] = 0x9c;			/* ports 40000 -> 9 */
	tcp[1] = 0x40;
	tcp[3] = 9;
	tcp[7] = 1;			/* sequence number 1 */
	tcp[12] = 5 << 4;
	tcp[13] = 0x18;			/* PSH, ACK */
	tcp[14] = 0xff;
	for (i = HDR; i < LEN; i++)
		f[i] = (uint8_t)(i * 7);
	/* the seed: the pseudo-header sum, folded, not inverted */
	s = sum16(ip6 + 8, 32, 0) + (LEN - 14 - 40) + IPPROTO_TCP;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	tcp[16] = s >> 8;
	tcp[17] = s & 0xff;

	vh->flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
	vh->gso_type = VIRTIO_NET_HDR_GSO_TCPV6;
	vh->hdr_len = HDR;
	vh->gso_size = MSS;
	vh->csum_start = 14 + 40;
	vh->csum_offset = 16;

	start = tx_packets(argv[1]);
	want = start + (unsigned long long)count * SEGS;
	t0 = ns_now();
	for (i = 0; i < count; i++)
		if (sendto(fd, buf, sizeof(buf), 0, (struct sockaddr *)&sll, sizeof(sll)) !=
		    (ssize_t)sizeof(buf)) {
			perror("gso_send: sendto");
			return 1;
		}
	deadline = t0 + 30000000000LL;
	while (tx_packets(argv[1]) < want) {
		if (ns_now() > deadline) {
			fprintf(stderr, "gso_send: %llu of %llu segments sent in 30 s\n",
				tx_packets(argv[1]) - start, want - start);
			return 1;
		}
		sched_yield();
	}
	t1 = ns_now();
	printf("%lld\n", (t1 - t0) / ((long long)count * SEGS));
	return 0;
}
