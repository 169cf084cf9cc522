// SPDX-License-Identifier: GPL-2.0
/*
 * Raw frames through the rtl8139 port, as an outside user would send them:
 * AF_PACKET with PACKET_VNET_HDR (VIRTIO_NET_HDR_F_NEEDS_CSUM, any
 * csum_start/csum_offset, GSO via the header), with lying sll_protocol,
 * wrong seeds and lengths that disagree. The e1000 port in netns "rx"
 * captures every frame (promiscuous, tags in-band), and each must arrive
 * exactly once and byte for byte what a correct NETIF_F_HW_CSUM device
 * would send (the sum from csum_start to the end of the frame, seeded by the
 * field), or be refused by the kernel with EINVAL. The driver's counters
 * (netdev netlink qstats tx-needs-csum / tx-csum-none, ethtool tx_csum_sw)
 * say which path each frame took.
 *
 *   raw_frames TXIF RXIF ours|pristine [BURST]
 *   raw_frames counters TXIF     prints tx-needs-csum tx-csum-none tx_csum_sw
 *   raw_frames watch TXIF PORT [quiet] STOPFILE
 *                                a window for a flow on PORT (port_counters.h):
 *                                "ready" once it watches (after 300 ms
 *                                without a frame of another with "quiet"),
 *                                then, once STOPFILE exists, the number of
 *                                frames of others handed to the driver
 *
 * With "pristine" (6.12's own 8139cp) nothing is asserted: each frame's
 * outcome is printed, for the comparison in the README. Frames that make
 * 6.12's driver WARN are left out there, as a kernel warning fails the run.
 *
 * Two tolerances, both the chip's (as QEMU models it) and not the driver's:
 * where the generic checksum folds to 0, the chip writes 0 and software
 * 0xffff (both valid); and LargeSend clears PSH in every segment, the last
 * too, where software segmentation keeps it on the last.
 *
 * The receiver's stack takes the outer VLAN tag off before a packet socket
 * sees the frame; it is put back from PACKET_AUXDATA.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/ethtool.h>
#include <linux/genetlink.h>
#include <linux/if_packet.h>
#include <linux/netlink.h>
#include <linux/sockios.h>
#include <linux/virtio_net.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "frame_bytes.h"
#include "port_counters.h"
#include "tap.h"

#define ok(...)		tap_result(1, __VA_ARGS__)
#define not_ok(...)	tap_result(0, __VA_ARGS__)

static void bail(const char *fmt, const char *a, const char *b)
{
	printf("Bail out! ");
	printf(fmt, a, b);
	putchar('\n');
	exit(1);
}


#define MAXF	9000
#define MINF	60
#define MAXSEG	16

enum path {
	P_OFFLOAD = 'O',	/* the chip checksums it */
	P_SW = 'S',		/* the driver checksums it */
	P_NONE = 'N',		/* no checksum asked for */
	P_REFUSED = 'R',	/* the kernel refuses the request */
	P_CORE_GSO = 'G',	/* the core segments and checksums each segment */
	P_TSO = 'T',		/* LargeSend segments and checksums */
};

struct fspec {
	const char *name;
	char path;		/* enum path, for our driver */
	uint8_t tags;		/* in-band tags: 1 = 802.1Q, 2 = 802.1ad + 802.1Q */
	uint16_t type_lie;	/* type field written instead of the real one */
	uint16_t sll_proto;	/* what the socket says; 0: the frame's own type */
	uint8_t l3;		/* 4, 6, 0 (no IP: type 0x88b5) */
	uint8_t ip_opts;	/* IPv4 option bytes */
	uint8_t ext;		/* IPv6 extension headers */
	uint8_t l4;		/* IPPROTO_* */
	uint16_t payload;
	char csum;		/* n none, 0 the L4 field, u inside a UDP payload,
				 * o odd start, e the last two bytes,
				 * x beyond the frame, m inside the Ethernet header */
	char seed;		/* p pseudo-header (the stack's), 0 zero, g garbage */
	int8_t len_delta;	/* added to the IP length field */
	uint8_t trailer;	/* bytes after the IP datagram */
	bool bad_ip_csum;
	uint16_t gso;		/* gso_size */
	bool pristine_warns;	/* 6.12's driver WARNs on it */
};

#define T4	.l3 = 4, .l4 = IPPROTO_TCP
#define U4	.l3 = 4, .l4 = IPPROTO_UDP
#define T6	.l3 = 6, .l4 = IPPROTO_TCP
#define U6	.l3 = 6, .l4 = IPPROTO_UDP

static const struct fspec cases[] = {
	{ "TCP/IPv4", P_OFFLOAD, T4, .payload = 600 },
	{ "UDP/IPv4", P_OFFLOAD, U4, .payload = 333 },
	{ "TCP/IPv4 with 12 bytes of options", P_OFFLOAD, T4, .ip_opts = 12, .payload = 501 },
	{ "UDP/IPv4 with 40 bytes of options", P_OFFLOAD, U4, .ip_opts = 40, .payload = 77 },
	{ "TCP/IPv6", P_SW, T6, .payload = 600 },
	{ "UDP/IPv6", P_SW, U6, .payload = 333 },
	{ "TCP/IPv6 with hop-by-hop and destination options", P_SW, T6, .ext = 2, .payload = 400 },
	{ "UDP/IPv6 with a destination options header", P_SW, U6, .ext = 1, .payload = 99 },
	{ "ICMPv4 echo", P_SW, .l3 = 4, .l4 = IPPROTO_ICMP, .payload = 100, .seed = '0' },
	{ "ICMPv6 echo", P_SW, .l3 = 6, .l4 = IPPROTO_ICMPV6, .payload = 100 },
	{ "GRE with checksum over IPv4", P_SW, .l3 = 4, .l4 = IPPROTO_GRE, .payload = 200,
	  .seed = '0' },
	{ "UDP-lite/IPv4", P_SW, .l3 = 4, .l4 = IPPROTO_UDPLITE, .payload = 150,
	  .pristine_warns = true },
	{ "UDP-lite/IPv6", P_SW, .l3 = 6, .l4 = IPPROTO_UDPLITE, .payload = 150 },
	{ "generic checksum inside a UDP/IPv4 payload", P_SW, U4, .payload = 300, .csum = 'u' },
	{ "odd csum_start", P_SW, U4, .payload = 300, .csum = 'o' },
	{ "csum_offset on the last two bytes", P_SW, T4, .payload = 300, .csum = 'e' },
	{ "TCP/IPv4 behind an 802.1Q tag", P_SW, T4, .tags = 1, .payload = 600 },
	{ "UDP/IPv4 behind an 802.1Q tag", P_SW, U4, .tags = 1, .payload = 333 },
	{ "TCP/IPv6 behind an 802.1Q tag", P_SW, T6, .tags = 1, .payload = 300 },
	{ "TCP/IPv4 behind QinQ tags", P_SW, T4, .tags = 2, .payload = 600 },
	{ "IPv4/TCP bytes in a frame of type 0x88b5, sll_protocol IPv4", P_SW, T4,
	  .type_lie = 0x88b5, .sll_proto = 0x0800, .payload = 400 },
	{ "TCP/IPv4 frame, sll_protocol 0x88b5", P_OFFLOAD, T4, .sll_proto = 0x88b5,
	  .payload = 400 },
	{ "TCP/IPv6 frame, sll_protocol IPv4", P_SW, T6, .sll_proto = 0x0800, .payload = 400,
	  .pristine_warns = true },
	{ "TCP/IPv4 seeded with 0", P_SW, T4, .payload = 500, .seed = '0' },
	{ "UDP/IPv4 seeded with garbage", P_SW, U4, .payload = 500, .seed = 'g' },
	{ "TCP/IPv4, tot_len 4 beyond the frame", P_SW, T4, .payload = 500, .len_delta = 4 },
	{ "TCP/IPv4, 6 bytes after tot_len", P_SW, T4, .payload = 500, .trailer = 6 },
	{ "UDP/IPv4, tot_len 2 short of the frame", P_SW, U4, .payload = 500, .len_delta = -2 },
	{ "TCP/IPv4 with a wrong IPv4 header checksum", P_SW, T4, .payload = 500,
	  .bad_ip_csum = true },
	{ "TCP/IPv6, payload length 4 beyond the frame", P_SW, T6, .payload = 500, .len_delta = 4 },
	{ "frame without a checksum request", P_NONE, T4, .payload = 300, .csum = 'n' },
	{ "non-IP frame", P_NONE, .l3 = 0, .payload = 200, .csum = 'n' },
	{ "refused: csum_offset beyond the frame", P_REFUSED, T4, .payload = 100, .csum = 'x' },
	{ "refused: csum_start inside the Ethernet header", P_REFUSED, T4, .payload = 100,
	  .csum = 'm' },
	{ "GSO TCPv4", P_TSO, T4, .payload = 5000, .gso = 1000 },
	{ "GSO TCPv4 with IP options", P_TSO, T4, .ip_opts = 8, .payload = 4000, .gso = 1000 },
	{ "GSO TCPv4 behind an 802.1Q tag", P_CORE_GSO, T4, .tags = 1, .payload = 5000,
	  .gso = 1000 },
	{ "GSO TCPv4 behind QinQ tags", P_CORE_GSO, T4, .tags = 2, .payload = 3000, .gso = 1000 },
	{ "GSO TCPv6", P_CORE_GSO, T6, .payload = 5000, .gso = 1000 },
	{ "GSO TCPv6 behind an 802.1Q tag", P_CORE_GSO, T6, .tags = 1, .payload = 3000,
	  .gso = 1000 },
};

#define NCASES (sizeof(cases) / sizeof(cases[0]))

struct frame {
	uint8_t b[MAXF];
	int len;
	int l3off, l4off, csum_start, csum_offset;
	struct virtio_net_hdr vh;
	uint16_t sll_proto;
};

static uint8_t tx_mac[6], rx_mac[6];
static int rxidx;

/* ---- frames ---- */

static int l4_hdrlen(uint8_t l4)
{
	return l4 == IPPROTO_TCP ? 20 : 8;
}

static int l4_field(uint8_t l4)
{
	switch (l4) {
	case IPPROTO_TCP:
		return 16;
	case IPPROTO_UDP:
	case IPPROTO_UDPLITE:
		return 6;
	case IPPROTO_GRE:
		return 4;
	default:
		return 2;	/* ICMP, ICMPv6 */
	}
}

static void build(const struct fspec *c, unsigned int id, struct frame *fr)
{
	int off = 12, l4len = l4_hdrlen(c->l4) + c->payload, i, ext = 8 * c->ext;
	uint8_t *b = fr->b;
	uint16_t type = c->l3 == 4 ? 0x0800 : c->l3 == 6 ? 0x86dd : 0x88b5;

	memset(fr, 0, sizeof(*fr));
	memcpy(b, rx_mac, 6);
	b[6] = 0x02; b[7] = 0x5e; b[10] = id >> 8; b[11] = id;
	if (c->tags == 2) {
		put16(b + off, 0x88a8); put16(b + off + 2, 200); off += 4;
	}
	if (c->tags) {
		put16(b + off, 0x8100); put16(b + off + 2, 100); off += 4;
	}
	put16(b + off, c->type_lie ?: type);
	fr->sll_proto = c->sll_proto ?: c->tags == 2 ? 0x88a8 : c->tags ? 0x8100 :
			c->type_lie ?: type;
	off += 2;
	fr->l3off = off;
	if (c->l3 == 4) {
		int hl = 20 + c->ip_opts;

		b[off] = 0x40 | hl / 4;
		put16(b + off + 2, hl + l4len + c->len_delta);
		/* ID 0x0011: 6.12's driver reads the protocol byte at a fixed
		 * offset even behind a tag, and must not find it invalid there
		 */
		put16(b + off + 4, 0x0011);
		b[off + 6] = 0x40;
		b[off + 8] = 64;
		b[off + 9] = c->l4;
		b[off + 12] = 198; b[off + 13] = 51; b[off + 14] = 100; b[off + 15] = 1;
		b[off + 16] = 198; b[off + 17] = 51; b[off + 18] = 100; b[off + 19] = 2;
		memset(b + off + 20, 1, c->ip_opts);	/* NOP */
		ipv4_csum(b + off);
		if (c->bad_ip_csum)
			b[off + 11] ^= 0x5a;
		off += hl;
	} else if (c->l3 == 6) {
		b[off] = 0x60;
		put16(b + off + 4, ext + l4len + c->len_delta);
		b[off + 6] = c->ext ? 0 : c->l4;	/* hop-by-hop first */
		b[off + 7] = 64;
		b[off + 8] = 0x20; b[off + 9] = 0x01; b[off + 10] = 0x0d; b[off + 11] = 0xb8;
		b[off + 23] = 1;
		memcpy(b + off + 24, b + off + 8, 15);
		b[off + 39] = 2;
		off += 40;
		for (i = 0; i < c->ext; i++, off += 8) {
			b[off] = i + 1 < c->ext ? 60 : c->l4;
			b[off + 2] = 1;		/* PadN */
			b[off + 3] = 4;
		}
		if (c->ext == 1)
			b[fr->l3off + 6] = 60;	/* destination options only */
	}
	fr->l4off = off;
	if (c->l3) {
		switch (c->l4) {
		case IPPROTO_TCP:
			put16(b + off, 40000 + id); put16(b + off + 2, 9);
			b[off + 4] = 0x10; b[off + 7] = id;		/* seq */
			b[off + 12] = 5 << 4;
			b[off + 13] = 0x18;				/* ACK PSH */
			put16(b + off + 14, 65535);
			break;
		case IPPROTO_UDP:
			put16(b + off, 40000 + id); put16(b + off + 2, 9);
			put16(b + off + 4, l4len);
			break;
		case IPPROTO_UDPLITE:
			put16(b + off, 40000 + id); put16(b + off + 2, 9);
			break;					/* coverage 0: all */
		case IPPROTO_GRE:
			put16(b + off, 0x8000); put16(b + off + 2, 0x88b5);
			break;
		default:
			b[off] = c->l4 == IPPROTO_ICMP ? 8 : 128;	/* echo request */
			put16(b + off + 4, id);
			break;
		}
	}
	for (i = c->l3 ? l4_hdrlen(c->l4) : 0; i < l4len; i++)
		b[off + i] = (uint8_t)(id * 7 + i * 13 + 1);
	fr->len = off + l4len + c->trailer;
	for (i = off + l4len; i < fr->len; i++)
		b[i] = 0xa5;

	/* the request */
	fr->csum_start = off;
	fr->csum_offset = l4_field(c->l4);
	switch (c->csum) {
	case 'u':
		fr->csum_start = off + 8 + 4;
		fr->csum_offset = 6;
		break;
	case 'o':
		fr->csum_start = off + 8 + 3;
		fr->csum_offset = 4;
		break;
	case 'e':
		fr->csum_offset = fr->len - 2 - off;
		break;
	case 'x':
		fr->csum_offset = fr->len - off;
		break;
	case 'm':
		fr->csum_start = 6;
		fr->csum_offset = 0;
		break;
	}
	if (c->csum != 'n' && c->csum != 'x' && c->csum != 'm') {
		/* the stack's seed: the pseudo-header sum of the length the IP
		 * header gives, for the protocols that have one
		 */
		int ip_l4len = c->l3 == 4 ? get16(b + fr->l3off + 2) - (off - fr->l3off) :
			       get16(b + fr->l3off + 4) - ext;
		bool has_pseudo = c->l4 != IPPROTO_ICMP && c->l4 != IPPROTO_GRE && !c->csum;
		uint16_t seed = c->seed == 'g' ? 0xbeef :
				!c->seed && has_pseudo ?
				pseudo(b, fr->l3off, c->l3, c->l4, ip_l4len) : 0;

		put16(b + fr->csum_start + fr->csum_offset, seed);
	}
	if (c->csum != 'n') {
		fr->vh.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
		fr->vh.csum_start = fr->csum_start;
		fr->vh.csum_offset = fr->csum_offset;
	}
	if (c->gso) {
		fr->vh.gso_type = c->l3 == 4 ? VIRTIO_NET_HDR_GSO_TCPV4 :
			VIRTIO_NET_HDR_GSO_TCPV6;
		fr->vh.gso_size = c->gso;
		fr->vh.hdr_len = off + 20;
	}
}

/* What a correct NETIF_F_HW_CSUM device sends for @fr: @out[0..n). */
struct wire {
	uint8_t b[MAXF];
	int len;
	int csum_at;		/* -1: no checksum written */
	bool zero_ok;		/* the sum folds to 0: 0 and 0xffff both right */
	int psh_at;		/* last segment: the TCP flags byte LargeSend may clear PSH in, or -1 */
	uint16_t psh_csum;	/* the TCP checksum then */
};

static void generic_csum(struct wire *w, int start, int at)
{
	uint16_t c = ~fold(sum16(w->b + start, w->len - start, 0));

	w->zero_ok = c == 0;
	put16(w->b + at, c ?: 0xffff);
	w->csum_at = at;
}

static int expect(const struct fspec *c, const struct frame *fr, struct wire *out)
{
	int hdr, pay, n, i, v = c->l3;

	if (!c->gso) {
		memcpy(out[0].b, fr->b, fr->len);
		out[0].len = fr->len;
		out[0].csum_at = -1;
		out[0].psh_at = -1;
		if (fr->vh.flags)
			generic_csum(&out[0], fr->csum_start, fr->csum_start + fr->csum_offset);
		return 1;
	}
	/* TCP segmentation, as software GSO does it */
	hdr = fr->l4off + 20;
	pay = fr->len - hdr;
	n = (pay + c->gso - 1) / c->gso;
	for (i = 0; i < n && i < MAXSEG; i++) {
		struct wire *w = &out[i];
		int seg = pay - i * c->gso < c->gso ? pay - i * c->gso : c->gso;
		uint8_t *t = w->b + fr->l4off, *ip = w->b + fr->l3off;
		uint32_t seq;

		memcpy(w->b, fr->b, hdr);
		memcpy(w->b + hdr, fr->b + hdr + i * c->gso, seg);
		w->len = hdr + seg;
		if (v == 4) {
			put16(ip + 2, w->len - fr->l3off);
			put16(ip + 4, get16(ip + 4) + i);
			ipv4_csum(ip);
		} else {
			put16(ip + 4, w->len - fr->l3off - 40);
		}
		seq = (uint32_t)t[4] << 24 | t[5] << 16 | t[6] << 8 | t[7];
		seq += i * c->gso;
		t[4] = seq >> 24; t[5] = seq >> 16; t[6] = seq >> 8; t[7] = seq;
		if (i + 1 < n)
			t[13] &= ~0x09;		/* FIN PSH on the last only */
		put16(t + 16, pseudo(w->b, fr->l3off, v, IPPROTO_TCP, w->len - fr->l4off));
		w->psh_at = -1;
		if (i + 1 == n && (t[13] & 0x08)) {
			/* the same segment without PSH, as LargeSend sends it */
			uint16_t sum;

			t[13] &= ~0x08;
			sum = ~fold(sum16(t, w->len - fr->l4off, 0));
			w->psh_csum = sum ?: 0xffff;
			t[13] |= 0x08;
			w->psh_at = fr->l4off + 13;
		}
		generic_csum(w, fr->l4off, fr->l4off + 16);
	}
	return n;
}

/* ---- the wire ---- */

static int rx_fd, tx_fd;

static int open_rx(const char *ifname)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL) };
	struct packet_mreq mr = { .mr_type = PACKET_MR_PROMISC };
	int self = open("/proc/self/ns/net", O_RDONLY), ns = open("/var/run/netns/rx", O_RDONLY);
	int fd, big = 32 << 20, one = 1;

	if (self < 0 || ns < 0 || setns(ns, CLONE_NEWNET))
		return -1;
	fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	rxidx = if_nametoindex(ifname);
	sll.sll_ifindex = rxidx;
	mr.mr_ifindex = rxidx;
	if (fd < 0 || !rxidx || bind(fd, (void *)&sll, sizeof(sll)) ||
	    setsockopt(fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof(mr)))
		fd = -1;
	else if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big)) ||
		 setsockopt(fd, SOL_PACKET, PACKET_AUXDATA, &one, sizeof(one)))
		fd = -1;
	if (setns(self, CLONE_NEWNET))
		return -1;
	close(self);
	close(ns);
	return fd;
}

/* Send @fr; 0 or the errno of the refusal. */
static int send_frame(const struct frame *fr)
{
	static uint8_t buf[sizeof(struct virtio_net_hdr) + MAXF];
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET, .sll_ifindex = txidx,
		.sll_protocol = htons(fr->sll_proto),
	};

	memcpy(buf, &fr->vh, sizeof(fr->vh));
	memcpy(buf + sizeof(fr->vh), fr->b, fr->len);
	if (sendto(tx_fd, buf, sizeof(fr->vh) + fr->len, 0, (void *)&sll, sizeof(sll)) < 0)
		return errno;
	return 0;
}

/* Frames of ours (source MAC 02:5e:00:00:id) off the wire, id or -1. */
static int recv_frame(uint8_t *b, int *len, int timeout_ms)
{
	struct pollfd p = { .fd = rx_fd, .events = POLLIN };

	for (;;) {
		char cbuf[CMSG_SPACE(sizeof(struct tpacket_auxdata))];
		struct iovec iov = { .iov_base = b, .iov_len = MAXF - 4 };
		struct msghdr m = {
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
		};
		struct cmsghdr *c;
		ssize_t n;

		if (poll(&p, 1, timeout_ms) <= 0)
			return -1;
		n = recvmsg(rx_fd, &m, MSG_DONTWAIT);
		if (n < 14 || b[6] != 0x02 || b[7] != 0x5e || b[8] || b[9])
			continue;
		for (c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
			struct tpacket_auxdata a;

			if (c->cmsg_level != SOL_PACKET || c->cmsg_type != PACKET_AUXDATA)
				continue;
			memcpy(&a, CMSG_DATA(c), sizeof(a));
			if (!(a.tp_status & TP_STATUS_VLAN_VALID))
				continue;
			memmove(b + 16, b + 12, n - 12);
			put16(b + 12, a.tp_status & TP_STATUS_VLAN_TPID_VALID ?
			      a.tp_vlan_tpid : 0x8100);
			put16(b + 14, a.tp_vlan_tci);
			n += 4;
		}
		*len = n;
		return b[10] << 8 | b[11];
	}
}

/* Does @got match @w? */
static bool matches(const struct wire *w, const uint8_t *got, int len)
{
	static uint8_t want[MAXF];
	int wl = w->len < MINF ? MINF : w->len;

	if (len != wl)
		return false;
	memset(want, 0, wl);
	memcpy(want, w->b, w->len);
	if (w->zero_ok && w->csum_at >= 0 && get16(got + w->csum_at) == 0)
		put16(want + w->csum_at, 0);
	if (w->psh_at >= 0 && got[w->psh_at] == (want[w->psh_at] & ~0x08)) {
		want[w->psh_at] = got[w->psh_at];
		put16(want + w->csum_at, w->psh_csum);
	}
	return !memcmp(want, got, wl);
}

/* What was wrong with a frame that matched nothing: against the expected
 * frame it agrees with longest.
 */
static void show_difference(const struct wire *ws, int nw, const uint8_t *got, int len)
{
	const struct wire *w = ws;
	int i = -1, j, n;

	for (j = 0; j < nw; j++) {
		for (n = 0; n < len && n < ws[j].len && got[n] == ws[j].b[n]; n++)
			;
		if (n > i) {
			i = n;
			w = &ws[j];
		}
	}
	printf("# got %d bytes, want %d; first difference at byte %d:", len, w->len, i);
	for (n = i; n < i + 8 && n < len; n++)
		printf(" %02x", got[n]);
	printf(" (want");
	for (n = i; n < i + 8 && n < w->len; n++)
		printf(" %02x", w->b[n]);
	printf(")\n");
}

/* ---- counters: port_counters.h ---- */

/* ---- the run ---- */

static bool pristine;

/* Send one case with @id; returns its outcome and whether it was right. */
static const char *run_case(const struct fspec *c, unsigned int id, bool *right,
			    struct counters *delta)
{
	static struct wire want[MAXSEG];
	static uint8_t got[MAXF];
	static struct frame fr;
	struct counters a, b;
	int n, err, seen[MAXSEG] = { 0 }, len, i, rid, extra = 0, wrong = 0, timeout;

	build(c, id, &fr);
	n = expect(c, &fr, want);
	window_begin(&a, 0);
	err = send_frame(&fr);
	/* 6.12's driver loses or garbles many: for the record, do not wait long */
	timeout = err ? 300 : pristine ? 1000 : 3000;
	while ((rid = recv_frame(got, &len, timeout)) >= 0) {
		int k = -1;

		if (rid != (int)id)
			continue;
		if (pristine)
			timeout = 1000;	/* the rest of one send follows at once */
		for (i = 0; i < n && k < 0; i++)
			if (!seen[i] && matches(&want[i], got, len))
				k = i;
		if (k < 0 && !wrong++)
			show_difference(want, n, got, len);
		else if (k >= 0)
			seen[k]++;
		for (i = 0; i < n && seen[i]; i++)
			;
		if (i == n)
			timeout = 300;	/* all in: wait a little for extras */
		if (i == n && (k < 0 || extra++))
			break;
	}
	window_end(&b);
	delta->strays = b.strays;
	delta->needs = b.needs - a.needs;
	delta->none = b.none - a.none;
	delta->sw = b.sw - a.sw;
	delta->dropped = b.dropped - a.dropped;
	for (i = 0; i < n && seen[i] == 1; i++)
		;
	*right = false;
	if (err) {
		*right = c->path == P_REFUSED && err == EINVAL && !wrong && !seen[0];
		return err == EINVAL ? "refused (EINVAL)" : strerror(err);
	}
	if (wrong)
		return "sent wrong";
	if (i < n)
		return seen[0] ? "lost segments" : "lost";
	*right = c->path != P_REFUSED;
	return n > 1 ? "right, every segment" : "right";
}

static bool path_ok(const struct fspec *c, const struct counters *d, int nseg)
{
	switch (c->path) {
	case P_OFFLOAD:
		return d->needs == 1 && d->none == 0 && d->sw == 0;
	case P_TSO:	/* tx-needs-csum counts packets on the wire: segments */
		return d->needs == nseg && d->none == 0 && d->sw == 0;
	case P_SW:
		return d->needs == 0 && d->none == 1 && d->sw == 1;
	case P_CORE_GSO:
		return d->needs == 0 && d->none == nseg && d->sw == 0;
	case P_NONE:
		return d->needs == 0 && d->none == 1 && d->sw == 0;
	default:
		return d->needs == 0 && d->none == 0 && d->sw == 0;
	}
}

static const char *path_name(char p)
{
	switch (p) {
	case P_OFFLOAD: return "offloaded to the chip";
	case P_SW: return "checksummed by the driver";
	case P_NONE: return "no checksum asked";
	case P_REFUSED: return "refused by the kernel";
	case P_CORE_GSO: return "segmented and checksummed by the core";
	default: return "segmented and checksummed by LargeSend";
	}
}

static void burst(unsigned int count)
{
	static const uint16_t payloads[] = { 17, 100, 333, 600, 1001, 1400 };
	unsigned int i, bad = 0, lost = 0, sent = 0, batch = 32;
	static struct frame fr;
	static struct wire want[MAXSEG][32];
	static uint8_t got[MAXF];
	int seen[32], len, rid, tries;
	struct counters a, b;

	for (tries = 1;; tries++) {
		bad = lost = sent = 0;
		window_begin(&a, 0);
		for (i = 0; i < count; i += batch) {
			unsigned int j, k, m = count - i < batch ? count - i : batch;
			/* 6.12's driver loses frames of most batches: do not wait long */
			int timeout = pristine ? 1000 : 3000;

			for (j = 0; j < m; j++) {
				struct fspec c;

				c = cases[(i + j) % NCASES];
				if (c.path == P_REFUSED || c.gso || (pristine && c.pristine_warns))
					c = cases[0];
				c.payload = payloads[(i + j) % 6];
				if (c.csum == 'e' || c.csum == 'o' || c.csum == 'u')
					c.payload += 20;
				build(&c, 0x1000 + j, &fr);
				expect(&c, &fr, want[0] + j);
				seen[j] = 0;
				if (send_frame(&fr))
					bad++;
				sent++;
			}
			for (k = 0; k < m;) {
				rid = recv_frame(got, &len, timeout);
				if (rid < 0)
					break;
				rid -= 0x1000;
				if (rid < 0 || rid >= (int)m)
					continue;
				if (seen[rid]++ || !matches(&want[0][rid], got, len))
					bad++;
				else
					k++;
			}
			lost += m - k;
		}
		window_end(&b);
		if (!b.strays || tries >= WINDOW_TRIES)
			break;
		printf("# burst: %d frame%s of others left the port in the window (%s): sending it again\n",
		       b.strays, b.strays > 1 ? "s" : "", stray_what);
		while (recv_frame(got, &len, 300) >= 0)
			;
	}
	if (pristine) {
		printf("# pristine burst of %u mixed frames: %u wrong or duplicated, %u lost\n",
		       sent, bad, lost);
		return;
	}
	if (!bad && !lost)
		ok("burst of %u mixed frames: each arrived once, byte for byte", sent);
	else
		not_ok("burst of %u mixed frames: %u wrong, duplicated or refused, %u lost",
		       sent, bad, lost);
	if (b.needs - a.needs + b.none - a.none == sent && !b.strays)
		ok("burst: tx-needs-csum +%lld, tx-csum-none +%lld (tx_csum_sw +%lld) add up to %u",
		   b.needs - a.needs, b.none - a.none, b.sw - a.sw, sent);
	else
		not_ok("burst: tx-needs-csum +%lld, tx-csum-none +%lld do not add up to %u",
		       b.needs - a.needs, b.none - a.none, sent);
}

int main(int argc, char **argv)
{
	int one = 1;
	unsigned int i;
	struct ifreq ifr = { 0 };

	if (argc == 3 && !strcmp(argv[1], "counters")) {
		struct counters c;

		txif = argv[2];
		txidx = if_nametoindex(txif);
		nl_fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC);
		if (nl_fd >= 0 &&
		    !nl_request(nl_fd, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 0,
				CTRL_ATTR_FAMILY_NAME, "netdev", 7))
			nl_walk(nl_fd, family_cb, &nl_family);
		read_counters(&c);
		printf("%lld %lld %lld\n", c.needs, c.none, c.sw);
		return 0;
	}
	if ((argc == 5 || argc == 6) && !strcmp(argv[1], "watch")) {
		struct stat sb;

		txif = argv[2];
		txidx = if_nametoindex(txif);
		stray_fd = txidx ? stray_open(atoi(argv[3])) : -1;
		if (stray_fd < 0)
			bail("cannot watch %s%s", txif, "");
		stray_seen = argc == 6 && !strcmp(argv[4], "quiet");
		stray_quiesce();
		printf("ready\n");
		fflush(stdout);
		while (stat(argv[argc - 1], &sb))
			usleep(20000);
		i = stray_drain();
		if (i)
			printf("# %s\n", stray_what);
		printf("%u\n", i);
		return 0;
	}
	if (argc < 4) {
		fprintf(stderr, "usage: %s TXIF RXIF ours|pristine [BURST]\n", argv[0]);
		return 2;
	}
	txif = argv[1];
	pristine = !strcmp(argv[3], "pristine");
	txidx = if_nametoindex(txif);
	tx_fd = socket(AF_PACKET, SOCK_RAW, 0);
	if (!txidx || tx_fd < 0 ||
	    setsockopt(tx_fd, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof(one)))
		bail("tx socket on %s: %s", txif, strerror(errno));
	strncpy(ifr.ifr_name, txif, IFNAMSIZ - 1);
	if (ioctl(tx_fd, SIOCGIFHWADDR, &ifr))
		bail("no MAC for %s%s", txif, "");
	memcpy(tx_mac, ifr.ifr_hwaddr.sa_data, 6);
	rx_fd = open_rx(argv[2]);
	if (rx_fd < 0)
		bail("rx socket on %s in netns rx: %s", argv[2], strerror(errno));
	{
		/* the receiver's MAC, from inside its namespace */
		struct sockaddr_ll sll;
		socklen_t sl = sizeof(sll);

		if (getsockname(rx_fd, (void *)&sll, &sl) || sll.sll_halen != 6)
			bail("no MAC for %s%s", argv[2], "");
		memcpy(rx_mac, sll.sll_addr, 6);
	}
	nl_fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC);
	if (nl_fd >= 0 &&
	    !nl_request(nl_fd, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 0, CTRL_ATTR_FAMILY_NAME,
			"netdev", 7))
		nl_walk(nl_fd, family_cb, &nl_family);
	if (!pristine && nl_family <= 0)
		bail("no netdev genetlink family%s%s", "", "");

	for (i = 0; i < NCASES; i++) {
		const struct fspec *c = &cases[i];
		int nseg = c->gso ? (c->payload + c->gso - 1) / c->gso : 1;
		struct counters d;
		const char *what;
		bool right;
		int tries, len;
		static uint8_t late[MAXF];

		if (pristine && c->pristine_warns) {
			printf("# pristine %-62s not sent (6.12's driver WARNs)\n", c->name);
			continue;
		}
		for (tries = 1;; tries++) {
			what = run_case(c, 0x100 + i, &right, &d);
			if (!d.strays || tries >= WINDOW_TRIES)
				break;
			printf("# %s: %d frame%s of others left the port in the window (%s): measuring again\n",
			       c->name, d.strays, d.strays > 1 ? "s" : "", stray_what);
			while (recv_frame(late, &len, 300) >= 0)
				;
		}
		if (pristine) {
			printf("# pristine %-62s %s\n", c->name, what);
			continue;
		}
		if (right)
			ok("%s: %s", c->name, what);
		else
			not_ok("%s: %s", c->name, what);
		if (path_ok(c, &d, nseg) && !d.strays)
			ok("%s: %s (tx-needs-csum +%lld, tx-csum-none +%lld, tx_csum_sw +%lld)",
			   c->name, path_name(c->path), d.needs, d.none, d.sw);
		else
			not_ok("%s: %s? tx-needs-csum +%lld, tx-csum-none +%lld, tx_csum_sw +%lld%s",
			       c->name, path_name(c->path), d.needs, d.none, d.sw,
			       d.strays ? " (frames of others in every try: not measured)" : "");
		if (d.dropped)
			not_ok("%s: tx_dropped +%lld", c->name, d.dropped);
	}
	if (argc > 4)
		burst(atoi(argv[4]));
	return tap_done();
}
