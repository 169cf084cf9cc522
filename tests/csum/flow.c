// SPDX-License-Identifier: GPL-2.0
/*
 * Traffic for the checksum tests: the two ends of one flow, and a frame
 * with a deliberately wrong UDP checksum.
 *
 *   flow recv FAMILY tcp|udp PORT COUNT OUTFILE
 *   flow send FAMILY tcp|udp ADDR PORT COUNT [OPTION]
 *   flow badudp IFNAME DSTMAC SRC DST PORT
 *
 * A flow is COUNT chunks of 1000 bytes whose every byte is a function of its
 * position, so the receiver checks the content exactly; it writes
 * "<chunks> <bytes> <bad bytes>" to OUTFILE (OUTFILE.ready once listening).
 *
 * OPTION sets IP_OPTIONS: ipopts (NOPs), ts (timestamps), rr (record
 * route), lsrr:HOP or ssrr:HOP (a loose or strict source route through HOP
 * to ADDR, so that the IPv4 header's destination is HOP, not ADDR); or
 * IPV6_DSTOPTS: dstopts.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define CHUNK 1000

static unsigned char pattern(unsigned long pos)
{
	return (unsigned char)((pos / CHUNK) * 7 + pos % CHUNK);
}

static void die(const char *what)
{
	perror(what);
	exit(2);
}

/* FLOW_WAIT: seconds a socket waits for its peer (30 by default), shorter
 * where a test expects a flow to be lost
 */
static int make_socket(int family, int type)
{
	const char *wait = getenv("FLOW_WAIT");
	struct timeval tv = { .tv_sec = wait ? atoi(wait) : 30 };
	int fd = socket(family, type, 0);

	if (fd < 0)
		die("socket");
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	return fd;
}

static socklen_t make_addr(int family, const char *host, int port,
			   struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)ss;

		a->sin_family = AF_INET;
		a->sin_port = htons(port);
		if (host && inet_pton(AF_INET, host, &a->sin_addr) != 1)
			die("address");
		return sizeof(*a);
	}
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;

	a6->sin6_family = AF_INET6;
	a6->sin6_port = htons(port);
	if (host && inet_pton(AF_INET6, host, &a6->sin6_addr) != 1)
		die("address");
	return sizeof(*a6);
}

static int do_recv(int family, int tcp, int port, long count, const char *out)
{
	unsigned long got = 0, bad = 0, chunks = 0;
	struct sockaddr_storage ss;
	socklen_t len = make_addr(family, NULL, port, &ss);
	unsigned char buf[65536];
	char ready[512];
	int fd, c, one = 1;
	FILE *f;

	fd = make_socket(family, tcp ? SOCK_STREAM : SOCK_DGRAM);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len))
		die("bind");
	if (tcp && listen(fd, 1))
		die("listen");
	snprintf(ready, sizeof(ready), "%s.ready", out);
	f = fopen(ready, "w");
	if (f)
		fclose(f);

	if (tcp) {
		c = accept(fd, NULL, NULL);
		if (c < 0)
			die("accept");
		while (got < (unsigned long)count * CHUNK) {
			ssize_t n = recv(c, buf, sizeof(buf), 0);

			if (n <= 0)
				break;
			for (ssize_t i = 0; i < n; i++)
				bad += buf[i] != pattern(got + i);
			got += n;
		}
		if (send(c, "k", 1, 0) != 1)
			perror("ack");
		chunks = got / CHUNK;
		close(c);
	} else {
		/* datagrams carry their index first; duplicates are not counted */
		static unsigned char seen[1 << 16];

		while (chunks < (unsigned long)count) {
			ssize_t n = recv(fd, buf, sizeof(buf), 0);
			uint32_t idx;

			if (n < 4)
				break;
			memcpy(&idx, buf, 4);
			idx = ntohl(idx);
			if (idx >= sizeof(seen) || seen[idx])
				continue;
			seen[idx] = 1;
			for (ssize_t i = 4; i < n; i++)
				bad += buf[i] != pattern((unsigned long)idx * CHUNK + i - 4);
			got += n - 4;
			chunks++;
		}
	}
	f = fopen(out, "w");
	if (!f)
		die(out);
	fprintf(f, "%lu %lu %lu\n", chunks, got, bad);
	fclose(f);
	return 0;
}

/* the IP_OPTIONS bytes for OPT (see the top), padded to 4 bytes */
static size_t ip_options(const char *opt, unsigned char *o)
{
	static const unsigned char nops[] = { 1, 1, 1, 0 };	/* NOP x3, EOL */
	int strict = !strncmp(opt, "ssrr:", 5);

	if (!strcmp(opt, "ipopts")) {
		memcpy(o, nops, sizeof(nops));
		return sizeof(nops);
	}
	if (!strcmp(opt, "ts") || !strcmp(opt, "rr")) {
		/* two slots; the sender fills the first on the way out */
		int ts = opt[0] == 't';

		memset(o, 0, 12);
		o[0] = ts ? 68 : 7;
		o[1] = ts ? 12 : 11;
		o[2] = ts ? 5 : 4;
		return 12;
	}
	if (strict || !strncmp(opt, "lsrr:", 5)) {
		/* NOP, then the route; the kernel moves HOP into the header's
		 * destination and puts ADDR at the route's end
		 */
		o[0] = 1;
		o[1] = strict ? 137 : 131;
		o[2] = 7;
		o[3] = 4;
		if (inet_pton(AF_INET, opt + 5, o + 4) != 1)
			die("source route hop");
		return 8;
	}
	return 0;
}

static int do_send(int family, int tcp, const char *host, int port, long count,
		   const char *opt)
{
	static const unsigned char dstopts[] = { 0, 0, 1, 4, 0, 0, 0, 0 };
	unsigned char buf[4 + CHUNK], ipopts[40];
	struct sockaddr_storage ss;
	socklen_t len = make_addr(family, host, port, &ss);
	int fd = make_socket(family, tcp ? SOCK_STREAM : SOCK_DGRAM);
	size_t n;

	if (opt && !strcmp(opt, "dstopts")) {
		if (setsockopt(fd, IPPROTO_IPV6, IPV6_DSTOPTS, dstopts, sizeof(dstopts)))
			die("IPV6_DSTOPTS");
	} else if (opt) {
		n = ip_options(opt, ipopts);
		if (!n) {
			fprintf(stderr, "unknown option %s\n", opt);
			exit(2);
		}
		if (setsockopt(fd, IPPROTO_IP, IP_OPTIONS, ipopts, n))
			die("IP_OPTIONS");
	}
	if (connect(fd, (struct sockaddr *)&ss, len))
		die("connect");
	for (long c = 0; c < count; c++) {
		uint32_t idx = htonl(c);

		for (int i = 0; i < CHUNK; i++)
			buf[4 + i] = pattern((unsigned long)c * CHUNK + i);
		if (tcp) {
			if (send(fd, buf + 4, CHUNK, 0) != CHUNK)
				die("send");
		} else {
			memcpy(buf, &idx, 4);
			if (send(fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf))
				die("send");
			usleep(2000);
		}
	}
	if (tcp) {
		char ack;

		shutdown(fd, SHUT_WR);
		if (recv(fd, &ack, 1, 0) != 1)
			die("ack");
	}
	close(fd);
	return 0;
}

static uint16_t csum16(const unsigned char *p, size_t n, uint32_t sum)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		sum += (p[i] << 8) | p[i + 1];
	if (n & 1)
		sum += p[n - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return ~sum & 0xffff;
}

static int do_badudp(const char *ifname, const char *mac, const char *src,
		     const char *dst, int port)
{
	static const char payload[] = "negative control";
	unsigned char frame[14 + 20 + 8 + sizeof(payload)] = { 0 };
	unsigned char *ip = frame + 14, *udp = ip + 20, pseudo[12];
	unsigned int m[6], udplen = 8 + sizeof(payload);
	struct sockaddr_ll sll = { 0 };
	uint16_t good;
	int fd, i;

	if (sscanf(mac, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5]) != 6)
		die("mac");
	for (i = 0; i < 6; i++)
		frame[i] = m[i];
	frame[6] = 0x02;		/* locally administered source */
	frame[12] = 0x08;
	ip[0] = 0x45;
	ip[2] = (20 + udplen) >> 8;
	ip[3] = 20 + udplen;
	ip[6] = 0x40;
	ip[8] = 64;
	ip[9] = IPPROTO_UDP;
	inet_pton(AF_INET, src, ip + 12);
	inet_pton(AF_INET, dst, ip + 16);
	good = csum16(ip, 20, 0);
	ip[10] = good >> 8;
	ip[11] = good;
	udp[0] = 40000 >> 8;
	udp[1] = 40000 & 0xff;
	udp[2] = port >> 8;
	udp[3] = port;
	udp[5] = udplen;
	memcpy(udp + 8, payload, sizeof(payload));
	memcpy(pseudo, ip + 12, 8);
	pseudo[8] = 0;
	pseudo[9] = IPPROTO_UDP;
	pseudo[10] = 0;
	pseudo[11] = udplen;
	{
		uint32_t s = (uint16_t)~csum16(pseudo, 12, 0);

		good = csum16(udp, udplen, s);
	}
	good = (uint16_t)(good + 1) ?: 1;	/* off by one: wrong */
	udp[6] = good >> 8;
	udp[7] = good;

	fd = socket(AF_PACKET, SOCK_RAW, 0);
	if (fd < 0)
		die("AF_PACKET");
	sll.sll_family = AF_PACKET;
	sll.sll_ifindex = if_nametoindex(ifname);
	sll.sll_halen = 6;
	memcpy(sll.sll_addr, frame, 6);
	if (sendto(fd, frame, sizeof(frame), 0, (struct sockaddr *)&sll, sizeof(sll)) < 0)
		die("sendto");
	return 0;
}

int main(int argc, char **argv)
{
	int family;

	if (argc >= 2 && !strcmp(argv[1], "badudp") && argc == 7)
		return do_badudp(argv[2], argv[3], argv[4], argv[5], atoi(argv[6]));
	if (argc < 6)
		goto usage;
	family = atoi(argv[2]) == 6 ? AF_INET6 : AF_INET;
	if (!strcmp(argv[1], "recv") && argc == 7)
		return do_recv(family, !strcmp(argv[3], "tcp"), atoi(argv[4]),
			       atol(argv[5]), argv[6]);
	if (!strcmp(argv[1], "send") && argc >= 7)
		return do_send(family, !strcmp(argv[3], "tcp"), argv[4],
			       atoi(argv[5]), atol(argv[6]), argc > 7 ? argv[7] : NULL);
usage:
	fprintf(stderr, "usage: see the comment at the top of flow.c\n");
	return 2;
}
