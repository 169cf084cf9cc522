// SPDX-License-Identifier: GPL-2.0
// bench-ldlibs: -lpthread
/*
 * Attack on 8139cp's GSO decision (cp_features_check(): LargeSend, or the
 * core segments, checksumming the segments itself where the chip could
 * not), for extra_gso_decision_attack.sh:
 *
 *   gso_attack tcp 4|6 ADDR PORT COUNT MODE [lsrr:HOP]
 *        COUNT chunks of flow.c's pattern to "flow recv", over TCP, by MODE:
 *        bulk (one send()), sendfile (a file, sendfile(2)), vmsplice (user
 *        pages vmspliced into a pipe and spliced to the socket), zerocopy
 *        (MSG_ZEROCOPY); lsrr:HOP: a loose source route through HOP
 *   gso_attack udp 4|6 ADDR PORT COUNT SEGS THREADS [zerocopy]
 *        COUNT datagrams of flow.c's UDP form (index, then 1000 bytes) with
 *        UDP_SEGMENT: SEGS datagrams a send(), from THREADS threads on one
 *        socket, optionally MSG_ZEROCOPY
 *   gso_attack tap TXIF PORTLO PORTHI STOPFILE
 *        the frames the stack hands the driver in a window (a packet socket
 *        sees them after validate_xmit_skb(), with a virtio-net header that
 *        says whether each still asks for a checksum), and the port's
 *        counters read at quiet points around it; prints "ready", then
 *        frames hw_frames hw_wire sw_frames plain gso maxlen tap_drops
 *        d_needs d_none d_sw d_dropped others
 *        where a frame is the flows' when a TCP/UDP port in PORTLO..PORTHI
 *        is its own or, for VXLAN and GRE, its inner frame's; hw_frames are
 *        those the chip is asked to checksum (a GSO frame to LargeSend, or
 *        a request cp_csum_spec admits: plain TCP/UDP over untagged IPv4,
 *        seed and lengths the chip's own), hw_wire the packets on the wire
 *        for them, sw_frames the requests left to the driver, plain those
 *        handed over already summed
 *   gso_attack dodgy TXIF RXIF
 *        GSO frames from a packet socket (SKB_GSO_DODGY) whose tot_len,
 *        seed or IPv4 header checksum lie, checked segment by segment at
 *        the e1000 (netns "rx"), with the exact counter deltas; TAP
 *
 * The segments of a dodgy frame are checked for what a NETIF_F_HW_CSUM
 * device promises, whoever segments: headers rewritten, payload in order,
 * and each checksum the sum seeded by the field, adjusted to the segment's
 * length as software GSO adjusts it. A seed that lies leaves every segment
 * off by the same amount, which is checked too; LargeSend, which sums a
 * pseudo-header of its own, would make them right instead.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_packet.h>
#include <linux/virtio_net.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "attack_util.h"
#include "flow_util.h"
#include "frame_bytes.h"
#include "port_counters.h"
#include "tap.h"

#ifndef VIRTIO_NET_HDR_GSO_UDP_L4
#define VIRTIO_NET_HDR_GSO_UDP_L4	5
#endif
#define TCP	IPPROTO_TCP
#define UDP	IPPROTO_UDP

static void die(const char *what)
{
	fprintf(stderr, "gso_attack: %s: %s\n", what, strerror(errno));
	exit(2);
}

/* ---- senders ---- */

/* send() with MSG_ZEROCOPY, waiting for completions while optmem is short */
static ssize_t zc_send(int fd, const void *buf, size_t len)
{
	int tries;

	for (tries = 0; tries < 300; tries++) {
		ssize_t w = send(fd, buf, len, MSG_ZEROCOPY);

		if (w >= 0 || errno != ENOBUFS)
			return w;
		zc_drain(fd, 100);
	}
	errno = ENOBUFS;
	return -1;
}

static int tcp_send(int family, const char *host, int port, long count, const char *mode,
		    const char *opt)
{
	struct sockaddr_storage ss;
	socklen_t sl = make_addr(family, host, port, &ss);
	int fd = make_socket(family, SOCK_STREAM, 30), one = 1;
	size_t n = count * CHUNK, off = 0, i;
	uint8_t *buf = malloc(n);

	if (!buf)
		die("malloc");
	for (i = 0; i < n; i++)
		buf[i] = pattern(i);
	if (opt && !strncmp(opt, "lsrr:", 5)) {
		/* NOP, then a loose source route through the hop; the kernel
		 * puts the hop in the header's destination
		 */
		uint8_t o[8] = { 1, 131, 7, 4 };

		if (family != AF_INET || inet_pton(AF_INET, opt + 5, o + 4) != 1)
			die("lsrr hop");
		if (setsockopt(fd, IPPROTO_IP, IP_OPTIONS, o, sizeof(o)))
			die("IP_OPTIONS");
	} else if (opt) {
		fprintf(stderr, "gso_attack: unknown option %s\n", opt);
		return 2;
	}
	if (!strcmp(mode, "zerocopy") && setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one)))
		die("SO_ZEROCOPY");
	if (connect(fd, (struct sockaddr *)&ss, sl))
		die("connect");

	if (!strcmp(mode, "bulk") || !strcmp(mode, "zerocopy")) {
		bool zc = mode[0] == 'z';

		while (off < n) {
			size_t len = n - off > 65536 ? 65536 : n - off;
			ssize_t w = zc ? zc_send(fd, buf + off, len) : send(fd, buf + off, len, 0);

			if (w <= 0)
				die("send");
			off += w;
			if (zc)
				zc_drain(fd, 0);
		}
	} else if (!strcmp(mode, "sendfile")) {
		int file = open("/tmp", O_TMPFILE | O_RDWR, 0600);
		off_t foff = 0;

		if (file < 0 || write(file, buf, n) != (ssize_t)n)
			die("sendfile: the file");
		while ((size_t)foff < n)
			if (sendfile(fd, file, &foff, n - foff) <= 0)
				die("sendfile");
		close(file);
	} else if (!strcmp(mode, "vmsplice")) {
		int p[2];

		if (pipe(p))
			die("pipe");
		while (off < n) {
			struct iovec iov = { .iov_base = buf + off,
					     .iov_len = n - off > 65536 ? 65536 : n - off };
			ssize_t in = vmsplice(p[1], &iov, 1, 0);

			if (in <= 0)
				die("vmsplice");
			off += in;
			splice_all(p[0], fd, in, SPLICE_F_MORE, "splice");
		}
		close(p[0]);
		close(p[1]);
	} else {
		fprintf(stderr, "gso_attack: unknown mode %s\n", mode);
		return 2;
	}
	stream_end(fd, mode[0] == 'z', 300);
	close(fd);
	free(buf);
	return 0;
}

struct udp_job {
	int fd, segs, stride, first;
	long count;
	bool zc;
	uint8_t *buf;		/* this thread's datagrams, built once: the
				 * pages of a MSG_ZEROCOPY send are never
				 * written again */
	int err;
};

#define DGRAM	(4 + CHUNK)

/* datagrams first, first + stride, ...: SEGS of them a send() */
static void *udp_sender(void *arg)
{
	struct udp_job *j = arg;
	size_t len = 0, off, n;
	long idx;

	for (idx = j->first; idx < j->count; idx += j->stride) {
		uint8_t *d = j->buf + len;
		uint32_t be = htonl(idx);
		int i;

		memcpy(d, &be, 4);
		for (i = 0; i < CHUNK; i++)
			d[4 + i] = pattern((unsigned long)idx * CHUNK + i);
		len += DGRAM;
	}
	for (off = 0; off < len; off += n) {
		n = len - off < (size_t)j->segs * DGRAM ? len - off : (size_t)j->segs * DGRAM;
		if ((j->zc ? zc_send(j->fd, j->buf + off, n) : send(j->fd, j->buf + off, n, 0)) !=
		    (ssize_t)n) {
			j->err = errno ?: EIO;
			return NULL;
		}
		if (j->zc)
			zc_drain(j->fd, 0);
		usleep(20000);
	}
	return NULL;
}

static int udp_send(int family, const char *host, int port, long count, int segs, int threads,
		    bool zc)
{
	struct sockaddr_storage ss;
	socklen_t sl = make_addr(family, host, port, &ss);
	int fd = make_socket(family, SOCK_DGRAM, 30), gso = DGRAM, one = 1, t;
	struct udp_job jobs[16];
	pthread_t th[16];
	int rc = 0;

	if (threads < 1 || threads > 16 || segs < 1 || segs > 32 || (zc && threads > 1)) {
		fprintf(stderr, "gso_attack: 1-16 threads, 1-32 segments, zerocopy with 1 thread\n");
		return 2;
	}
	if (setsockopt(fd, SOL_UDP, UDP_SEGMENT, &gso, sizeof(gso)))
		die("UDP_SEGMENT");
	if (zc && setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one)))
		die("SO_ZEROCOPY");
	if (connect(fd, (struct sockaddr *)&ss, sl))
		die("connect");
	for (t = 0; t < threads; t++) {
		jobs[t] = (struct udp_job){ .fd = fd, .segs = segs, .stride = threads, .first = t,
					    .count = count, .zc = zc,
					    .buf = malloc((count / threads + 1) * DGRAM) };
		if (!jobs[t].buf || pthread_create(&th[t], NULL, udp_sender, &jobs[t]))
			die("thread");
	}
	for (t = 0; t < threads; t++) {
		pthread_join(th[t], NULL);
		if (jobs[t].err) {
			fprintf(stderr, "gso_attack: thread %d: send: %s\n", t, strerror(jobs[t].err));
			rc = 1;
		}
	}
	if (zc)
		zc_report(fd, 300);
	close(fd);
	for (t = 0; t < threads; t++)
		free(jobs[t].buf);
	return rc;
}

/* ---- the tap ---- */

static int port_lo, port_hi;

static bool in_range(unsigned int port)
{
	return (int)port >= port_lo && (int)port <= port_hi;
}

static bool own_eth(const uint8_t *b, int len, int depth);

/* Is the packet whose network header of @type is at @off one of the
 * flows'? Through VXLAN (UDP 4789-4791) and GRE, by the inner frame.
 */
static bool own_l3(const uint8_t *b, int len, int off, unsigned int type, int depth)
{
	int l4, proto, i;

	if (type == 0x0800 && off + 20 <= len) {
		if (get16(b + off + 6) & 0x1fff)
			return false;		/* not a first fragment */
		proto = b[off + 9];
		l4 = off + (b[off] & 15) * 4;
	} else if (type == 0x86dd && off + 40 <= len) {
		proto = b[off + 6];
		l4 = off + 40;
		for (i = 0; i < 8 && (proto == 0 || proto == 43 || proto == 60) && l4 + 8 <= len;
		     i++) {
			proto = b[l4];
			l4 += (b[l4 + 1] + 1) * 8;
		}
	} else {
		return false;
	}
	if (depth < 2 && proto == 47 && l4 + 4 <= len) {
		unsigned int fl = get16(b + l4), gt = get16(b + l4 + 2);
		int g = l4 + 4 + (fl & 0x8000 ? 4 : 0) + (fl & 0x2000 ? 4 : 0) +
			(fl & 0x1000 ? 4 : 0);

		if (g > len)
			return false;
		if (gt == 0x6558)
			return own_eth(b + g, len - g, depth + 1);
		return own_l3(b, len, g, gt, depth + 1);
	}
	if ((proto != TCP && proto != UDP) || l4 + 4 > len)
		return false;
	if (depth < 2 && proto == UDP && get16(b + l4 + 2) >= 4789 && get16(b + l4 + 2) <= 4791 &&
	    l4 + 16 + 14 <= len)
		return own_eth(b + l4 + 16, len - l4 - 16, depth + 1);
	return in_range(get16(b + l4)) || in_range(get16(b + l4 + 2));
}

static bool own_eth(const uint8_t *b, int len, int depth)
{
	int off = 12;
	unsigned int type;

	if (len < 14)
		return false;
	for (type = get16(b + off); (type == 0x8100 || type == 0x88a8) && off + 6 <= len;
	     type = get16(b + off))
		off += 4;
	return own_l3(b, len, off + 2, type, depth);
}

/* Would cp_csum_spec admit this request? Plain TCP or UDP right behind an
 * untagged IPv4 header, not a fragment, the datagram the whole frame, the
 * header checksum right (and not 0xffff for 0), the seed the chip's own
 * pseudo-header. (A tag the chip inserts is not in the frame.)
 */
static bool chip_can(const uint8_t *b, int n, const struct virtio_net_hdr *vh)
{
	const uint8_t *ip = b + 14;
	int ihl, l4, field;

	if (n < 34 || get16(b + 12) != 0x0800 || ip[0] >> 4 != 4)
		return false;
	ihl = (ip[0] & 15) * 4;
	l4 = 14 + ihl;
	if (ihl < 20 || l4 > n || (get16(ip + 6) & 0x3fff))
		return false;
	field = ip[9] == TCP ? 16 : ip[9] == UDP ? 6 : -1;
	if (field < 0 || vh->csum_start != l4 || vh->csum_offset != field ||
	    l4 + (ip[9] == TCP ? 20 : 8) > n || get16(ip + 2) != n - 14)
		return false;
	if (fold(sum16(ip, ihl, 0)) != 0xffff || get16(ip + 10) == 0xffff)
		return false;
	return get16(b + l4 + field) == pseudo(b, 14, 4, ip[9], n - l4);
}

/* the packets LargeSend makes of a GSO frame, as cp_tx_wire_frames() counts */
static long wire_segments(const uint8_t *b, int n, const struct virtio_net_hdr *vh)
{
	int off = 12, hdr;

	while ((get16(b + off) == 0x8100 || get16(b + off) == 0x88a8) && off + 6 <= n)
		off += 4;
	off += 2;
	if (off + 20 > n)
		return 1;
	hdr = off + (b[off] & 15) * 4;
	if (hdr + 13 > n)
		return 1;
	hdr += (b[hdr + 12] >> 4) * 4;
	return n > hdr && vh->gso_size ? (n - hdr + vh->gso_size - 1) / vh->gso_size : 1;
}

struct tapc {
	long frames, hw_frames, hw_wire, sw_frames, plain, gso, maxlen, others;
};

/* outgoing frames into @t (NULL: only counted) until none came for @ms, or
 * for a second at most; returns how many came
 */
static long tap_take(int fd, int ms, struct tapc *t)
{
	static uint8_t vbuf[sizeof(struct virtio_net_hdr) + 70000];
	uint8_t *buf = vbuf + sizeof(struct virtio_net_hdr);
	struct virtio_net_hdr *vh = (struct virtio_net_hdr *)vbuf;
	struct pollfd p = { .fd = fd, .events = POLLIN };
	struct timespec t0;
	long got = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (ms_since(&t0) < 1000 && poll(&p, 1, ms) > 0) {
		struct sockaddr_ll from = { 0 };
		struct iovec iov = { .iov_base = vbuf, .iov_len = sizeof(vbuf) };
		struct msghdr m = { .msg_name = &from, .msg_namelen = sizeof(from),
				    .msg_iov = &iov, .msg_iovlen = 1 };
		ssize_t r = recvmsg(fd, &m, MSG_TRUNC);
		long n = r - (ssize_t)sizeof(*vh);

		got++;
		if (!t)
			continue;
		/* no virtio-net header for it (an unknown GSO type): not
		 * measurable, not the flows' as far as the window goes
		 */
		if (r < (ssize_t)sizeof(*vh) || from.sll_pkttype != PACKET_OUTGOING ||
		    n > (long)(sizeof(vbuf) - sizeof(*vh)) || !own_eth(buf, n, 0)) {
			t->others++;
			continue;
		}
		t->frames++;
		if (n > t->maxlen)
			t->maxlen = n;
		if (vh->gso_type != VIRTIO_NET_HDR_GSO_NONE)
			t->gso++;
		if (!(vh->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM)) {
			t->plain++;
		} else if (vh->gso_type != VIRTIO_NET_HDR_GSO_NONE) {
			t->hw_frames++;
			t->hw_wire += wire_segments(buf, n, vh);
		} else if (chip_can(buf, n, vh)) {
			t->hw_frames++;
			t->hw_wire++;
		} else {
			t->sw_frames++;
		}
	}
	return got;
}

/* the port's counters, read while it is quiet (300 ms without a frame; 33
 * tries at most), between grace periods (a frame is tapped and counted in
 * one RCU-BH section); returns the frames tapped around the reading, which
 * may be counted on either side of it
 */
static long tap_reading(int fd, struct tapc *t, struct counters *c)
{
	int rounds = 0;

	while (tap_take(fd, 300, t) && ++rounds < 33)
		;
	stray_barrier();
	read_counters(c);
	stray_barrier();
	return tap_take(fd, 0, NULL);
}

static void tap(const char *stopfile)
{
	/* outgoing frames only, whole */
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, SKF_AD_OFF + SKF_AD_PKTTYPE),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PACKET_OUTGOING, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, 0x40000),
		BPF_STMT(BPF_RET | BPF_K, 0),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL),
				   .sll_ifindex = txidx };
	int fd = socket(AF_PACKET, SOCK_RAW, 0), big = 32 << 20, one = 1;
	struct tapc t = { 0 };
	struct tpacket_stats st;
	socklen_t sl = sizeof(st);
	struct counters a, b;
	struct stat sb;
	long edge;

	/* protocol 0 until the filter is on: nothing queued unfiltered */
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)) ||
	    setsockopt(fd, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof(one)) ||
	    bind(fd, (void *)&sll, sizeof(sll)))
		die("tap");
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
	edge = tap_reading(fd, NULL, &a);
	printf("ready\n");
	fflush(stdout);
	while (stat(stopfile, &sb))
		tap_take(fd, 200, &t);
	edge += tap_reading(fd, &t, &b);
	if (getsockopt(fd, SOL_PACKET, PACKET_STATISTICS, &st, &sl))
		st.tp_drops = -1;
	printf("%ld %ld %ld %ld %ld %ld %ld %u %lld %lld %lld %lld %ld\n", t.frames, t.hw_frames,
	       t.hw_wire, t.sw_frames, t.plain, t.gso, t.maxlen, st.tp_drops, b.needs - a.needs,
	       b.none - a.none, b.sw - a.sw, b.dropped - a.dropped, edge + t.others);
}

/* ---- dodgy: GSO frames from a packet socket whose headers lie ---- */

#define DMAX	9000

struct dcase {
	const char *name;
	char path;		/* T LargeSend; G the core segments, the chip sums
				 * each; C the core segments and sums */
	uint8_t l4;
	int payload, gso;
	int len_delta;		/* added to tot_len */
	char seed;		/* p the stack's; g garbage; z the pseudo-header
				 * without a length (LSO style); l the
				 * pseudo-header of the lying tot_len */
	bool bad_ipsum;		/* the IPv4 header checksum wrong */
	bool no_csum;		/* no VIRTIO_NET_HDR_F_NEEDS_CSUM */
};

static const struct dcase dcases[] = {
	{ "GSO TCPv4, honest (control)", 'T', TCP, 4000, 1000, 0, 'p', false, false },
	{ "GSO TCPv4, tot_len 4 beyond the frame", 'C', TCP, 4000, 1000, 4, 'p', false, false },
	{ "GSO TCPv4, tot_len 4 short of the frame", 'C', TCP, 4000, 1000, -4, 'p', false, false },
	{ "GSO TCPv4, tot_len and seed 8 beyond the frame alike", 'C', TCP, 4000, 1000, 8, 'l',
	  false, false },
	{ "GSO TCPv4, a garbage seed", 'C', TCP, 4000, 1000, 0, 'g', false, false },
	{ "GSO TCPv4, seed without the TCP length (LSO style)", 'C', TCP, 4000, 1000, 0, 'z',
	  false, false },
	{ "GSO TCPv4, a wrong IPv4 header checksum (LargeSend rewrites it)", 'T', TCP, 4000, 1000,
	  0, 'p', true, false },
	{ "GSO TCPv4 without a checksum request", 'C', TCP, 4000, 1000, 0, 'g', false, true },
	{ "GSO UDPv4 (UDP_L4), honest", 'G', UDP, 4000, 1000, 0, 'p', false, false },
	{ "GSO UDPv4 (UDP_L4), a garbage seed", 'C', UDP, 4000, 1000, 0, 'g', false, false },
	{ "GSO UDPv4 (UDP_L4), tot_len 4 beyond the frame", 'C', UDP, 4000, 1000, 4, 'p', false,
	  false },
};

#define NDCASES (sizeof(dcases) / sizeof(dcases[0]))

static uint8_t rx_mac[6];
static int rx_fd, tx_fd;

static int open_rx(const char *ifname)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL) };
	int self = open("/proc/self/ns/net", O_RDONLY), fd, big = 32 << 20;
	socklen_t sl = sizeof(sll);

	if (self < 0 || setns_path("/var/run/netns/rx"))
		return -1;
	fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	sll.sll_ifindex = if_nametoindex(ifname);
	if (fd < 0 || !sll.sll_ifindex || bind(fd, (void *)&sll, sizeof(sll)) ||
	    getsockname(fd, (void *)&sll, &sl) || sll.sll_halen != 6)
		fd = -1;
	else
		setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
	if (fd >= 0)
		memcpy(rx_mac, sll.sll_addr, 6);
	if (setns(self, CLONE_NEWNET))
		return -1;
	close(self);
	return fd;
}

/* ones' complement a - b, folded */
static uint16_t oc_sub(uint16_t a, uint16_t b)
{
	return fold((uint32_t)a + (uint16_t)~b);
}

static uint16_t oc_norm(uint16_t v)
{
	return v == 0xffff ? 0 : v;
}

struct dframe {
	uint8_t b[DMAX];
	int len, hl;
	struct virtio_net_hdr vh;
	uint16_t err;		/* what each segment's check is off by */
};

static void dbuild(const struct dcase *c, int id, struct dframe *f)
{
	uint8_t *b = f->b, *ip = b + 14, *l4 = b + 34;
	int field = c->l4 == TCP ? 16 : 6, actual, i;
	uint16_t seed, honest;

	memset(f, 0, sizeof(*f));
	f->hl = c->l4 == TCP ? 20 : 8;
	f->len = 34 + f->hl + c->payload;
	actual = f->len - 34;
	memcpy(b, rx_mac, 6);
	b[6] = 0x02; b[7] = 0x5e; b[10] = id >> 8; b[11] = id;
	put16(b + 12, 0x0800);
	ip[0] = 0x45;
	put16(ip + 2, f->len - 14 + c->len_delta);
	put16(ip + 4, id);
	ip[6] = 0x40;				/* DF */
	ip[8] = 64;
	ip[9] = c->l4;
	/* to an address rx does not have: its stack drops them quietly */
	ip[12] = 198; ip[13] = 51; ip[14] = 100; ip[15] = 1;
	ip[16] = 198; ip[17] = 51; ip[18] = 100; ip[19] = 2;
	ipv4_csum(ip);
	if (c->bad_ipsum)
		ip[11] ^= 0x5a;
	put16(l4, 40000 + id);
	put16(l4 + 2, 9);
	if (c->l4 == TCP) {
		l4[4] = 0x10; l4[7] = id;		/* seq */
		l4[12] = 5 << 4;
		l4[13] = 0x18;				/* ACK PSH */
		put16(l4 + 14, 65535);
	} else {
		put16(l4 + 4, actual);
	}
	for (i = 0; i < c->payload; i++)
		l4[f->hl + i] = (uint8_t)(i * 7 + i / 251 + id);
	honest = pseudo(b, 14, 4, c->l4, actual);
	seed = c->seed == 'g' ? 0xbeef : c->seed == 'z' ? pseudo(b, 14, 4, c->l4, 0) :
	       c->seed == 'l' ? pseudo(b, 14, 4, c->l4, actual + c->len_delta) : honest;
	put16(l4 + field, seed);
	/* LargeSend sums its own pseudo-header; without a request the core
	 * sets the seed up itself
	 */
	f->err = c->path == 'T' || c->no_csum ? 0xffff : oc_sub(seed, honest);
	if (!c->no_csum) {
		f->vh.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
		f->vh.csum_start = 34;
		f->vh.csum_offset = field;
	}
	f->vh.gso_type = c->l4 == TCP ? VIRTIO_NET_HDR_GSO_TCPV4 : VIRTIO_NET_HDR_GSO_UDP_L4;
	f->vh.gso_size = c->gso;
	f->vh.hdr_len = 34 + f->hl;
}

static int dsend(const struct dframe *f)
{
	static uint8_t buf[sizeof(struct virtio_net_hdr) + DMAX];
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_ifindex = txidx,
				   .sll_protocol = htons(0x0800) };

	memcpy(buf, &f->vh, sizeof(f->vh));
	memcpy(buf + sizeof(f->vh), f->b, f->len);
	if (sendto(tx_fd, buf, sizeof(f->vh) + f->len, 0, (void *)&sll, sizeof(sll)) < 0)
		return errno;
	return 0;
}

/* a frame of @id off the receiver's port, or -1 after @ms */
static int drecv(int id, uint8_t *b, int ms)
{
	struct pollfd p = { .fd = rx_fd, .events = POLLIN };
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		long left = ms - ms_since(&t0);
		ssize_t n;

		if (left <= 0 || poll(&p, 1, left) <= 0)
			return -1;
		n = recv(rx_fd, b, DMAX, MSG_DONTWAIT);
		if (n >= 14 && b[6] == 0x02 && b[7] == 0x5e && !b[8] && !b[9] &&
		    (b[10] << 8 | b[11]) == id)
			return n;
	}
}

/* One segment against the frame: headers, lengths, its place in the
 * payload, the checksum off by exactly f->err. Returns NULL or what is
 * wrong; *@at: where its payload starts.
 */
static const char *dcheck(const struct dcase *c, const struct dframe *f, const uint8_t *s, int n,
			  int udp_next, int *at, int *plen)
{
	const uint8_t *ip = s + 14, *l4 = s + 34;
	int l4len = n - 34, off, i;
	uint16_t v;

	if (n < 34 + f->hl || get16(s + 12) != 0x0800 || ip[0] != 0x45)
		return "not a plain IPv4 frame";
	if (get16(ip + 2) != n - 14)
		return "tot_len is not the segment's";
	if (fold(sum16(ip, 20, 0)) != 0xffff)
		return "IPv4 header checksum wrong";
	if (memcmp(ip + 12, f->b + 26, 8) || ip[9] != c->l4 || memcmp(l4, f->b + 34, 4))
		return "addresses or ports changed";
	*plen = n - 34 - f->hl;
	if (*plen <= 0 || *plen > c->gso)
		return "payload size not within gso_size";
	if (c->l4 == TCP) {
		uint32_t s0 = (uint32_t)f->b[38] << 24 | f->b[39] << 16 | f->b[40] << 8 | f->b[41];
		uint32_t s1 = (uint32_t)l4[4] << 24 | l4[5] << 16 | l4[6] << 8 | l4[7];

		off = (int)(s1 - s0);
	} else {
		if (get16(l4 + 4) != l4len)
			return "UDP length is not the segment's";
		off = udp_next;
	}
	if (off < 0 || off + *plen > c->payload)
		return "payload out of place";
	for (i = 0; i < *plen; i++)
		if (l4[f->hl + i] != f->b[34 + f->hl + off + i])
			return "payload bytes differ";
	*at = off;
	v = fold(sum16(l4, l4len, pseudo(s, 14, 4, c->l4, l4len)));
	if (oc_norm(v) != oc_norm(~f->err & 0xffff))
		return f->err == 0xffff ? "checksum wrong" :
		       "checksum not the seed's (off by other than the seed's error)";
	return NULL;
}

static bool dpath_ok(char path, const struct counters *d, int n)
{
	switch (path) {
	case 'T':
	case 'G':
		return d->needs == n && d->none == 0 && d->sw == 0 && d->dropped == 0;
	default:
		return d->needs == 0 && d->none == n && d->sw == 0 && d->dropped == 0;
	}
}

static const char *dpath_name(char path)
{
	return path == 'T' ? "one GSO packet to LargeSend" :
	       path == 'G' ? "segmented by the core, each segment checksummed by the chip" :
	       "segmented and checksummed by the core";
}

static void dodgy(const char *rxif)
{
	static struct dframe f;
	static uint8_t s[DMAX];
	static uint8_t covered[DMAX];
	unsigned int i;
	int one = 1;

	tx_fd = socket(AF_PACKET, SOCK_RAW, 0);
	if (tx_fd < 0 || setsockopt(tx_fd, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof(one)))
		die("tx socket");
	rx_fd = open_rx(rxif);
	if (rx_fd < 0) {
		printf("Bail out! no packet socket on %s in netns rx\n", rxif);
		exit(1);
	}
	for (i = 0; i < NDCASES; i++) {
		const struct dcase *c = &dcases[i];
		int id = 0x700 + i, nseg = (c->payload + c->gso - 1) / c->gso, tries, err = 0;
		int segs = 0, extra = 0, cover = 0, udp_next = 0, n, at, plen, k;
		const char *bad = NULL;
		struct counters a, b, d;

		dbuild(c, id, &f);
		for (tries = 1;; tries++) {
			segs = extra = cover = udp_next = 0;
			bad = NULL;
			memset(covered, 0, sizeof(covered));
			window_begin(&a, 0);
			err = dsend(&f);
			while (!err && (n = drecv(id, s, cover == c->payload ? 300 : 3000)) >= 0) {
				const char *why;

				if (cover == c->payload) {
					extra++;
					continue;
				}
				why = dcheck(c, &f, s, n, udp_next, &at, &plen);
				segs++;
				if (why) {
					if (!bad)
						bad = why;
					continue;
				}
				for (k = at; k < at + plen; k++)
					if (covered[k]++)
						bad = bad ?: "a byte sent twice";
				cover += plen;
				udp_next += plen;
			}
			usleep(100000);
			window_end(&b);
			d.needs = b.needs - a.needs;
			d.none = b.none - a.none;
			d.sw = b.sw - a.sw;
			d.dropped = b.dropped - a.dropped;
			if (!b.strays || tries >= WINDOW_TRIES)
				break;
			printf("# %s: %d frame%s of others left the port in the window (%s): again\n",
			       c->name, b.strays, b.strays > 1 ? "s" : "", stray_what);
			while (drecv(id, s, 300) >= 0)
				;
		}
		if (err)
			tap_result(0, "%s: refused (%s)", c->name, strerror(err));
		else if (bad)
			tap_result(0, "%s: segments as a NETIF_F_HW_CSUM device makes them: %s", c->name,
				   bad);
		else
			tap_result(segs == nseg && !extra && cover == c->payload,
				   "%s: %d segments (want %d)%s, every byte in place once, checksums %s",
				   c->name, segs, nseg, extra ? ", and more" : "",
				   f.err == 0xffff ? "right" : "off by exactly the seed's error");
		tap_result(dpath_ok(c->path, &d, nseg) && !b.strays,
			   "%s: %s (tx-needs-csum +%lld, tx-csum-none +%lld, tx_csum_sw +%lld, tx_dropped +%lld)%s",
			   c->name, dpath_name(c->path), d.needs, d.none, d.sw, d.dropped,
			   b.strays ? " (frames of others in every try: not measured)" : "");
	}
}

/* ---- main ---- */

static void port_open(const char *ifname)
{
	txif = ifname;
	txidx = if_nametoindex(txif);
	if (!txidx) {
		printf("Bail out! no %s\n", txif);
		exit(1);
	}
	nl_open();
}

int main(int argc, char **argv)
{
	const char *g = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(g, "tcp") && (argc == 7 || argc == 8))
		return tcp_send(atoi(argv[2]) == 6 ? AF_INET6 : AF_INET, argv[3], atoi(argv[4]),
				atol(argv[5]), argv[6], argc == 8 ? argv[7] : NULL);
	if (!strcmp(g, "udp") && (argc == 8 || argc == 9))
		return udp_send(atoi(argv[2]) == 6 ? AF_INET6 : AF_INET, argv[3], atoi(argv[4]),
				atol(argv[5]), atoi(argv[6]), atoi(argv[7]),
				argc == 9 && !strcmp(argv[8], "zerocopy"));
	if (!strcmp(g, "tap") && argc == 6) {
		port_lo = atoi(argv[3]);
		port_hi = atoi(argv[4]);
		port_open(argv[2]);
		tap(argv[5]);
		return 0;
	}
	if (!strcmp(g, "dodgy") && argc == 4) {
		port_open(argv[2]);
		dodgy(argv[3]);
		return tap_done();
	}
	fprintf(stderr, "usage: see the comment at the top of %s\n", __FILE__);
	return 2;
}
