// SPDX-License-Identifier: GPL-2.0
/*
 * Frames into the rtl8139 port (8139cp on NETIF_F_HW_CSUM) by the ways a
 * process reaches it that test_raw_frames does not take, each compared byte
 * for byte at the e1000 receiver (netns "rx", promiscuous, tags in-band)
 * with what a correct NETIF_F_HW_CSUM device sends (the sum from csum_start
 * to the end of the frame, seeded by the field, stored at
 * csum_start + csum_offset), or checked to be refused with the exact errno,
 * and with the exact deltas of the port's counters (netdev netlink qstats
 * tx-needs-csum / tx-csum-none, ethtool tx_csum_sw, tx_dropped).
 *
 *   attack_frames raw|bypass|dgram|big TXIF RXIF
 *   attack_frames ring TXIF RXIF 2|3          TPACKET_V2/V3 TX ring
 *   attack_frames threads TXIF RXIF THREADS PER_THREAD
 *   attack_frames tc TXIF RXIF CASE           a tc egress filter is set up
 *   attack_frames veth TXIF RXIF NETNS IF     sent from NETNS's IF
 *   attack_frames pktgen TXIF RXIF KIND COUNT O|S NAME READYFILE
 *   attack_frames tap TXIF STOPFILE           outgoing TCP/IPv4 frames and
 *                                             the counters' deltas
 *   attack_frames bulk ADDR PORT COUNT        TCP to "flow recv", one send()
 *   attack_frames sendfile ADDR PORT COUNT    the same from a file, sendfile(2)
 *
 * Frames are told apart by their source MAC 02:5e:00:00:ID (destination MAC
 * for SOCK_DGRAM, whose source is the port's own), pktgen's by
 * 02:5e:00:01:00:KIND.
 *
 * One tolerance, the chip's (documented in raw_frames.c): where the
 * generic checksum folds to 0, the chip writes 0x0000 and software 0xffff.
 * It is accepted only on the path where the chip wrote the field, and the
 * value seen is printed; a frame checksummed in software must carry 0xffff.
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
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "attack_util.h"
#include "frame_bytes.h"
#include "port_counters.h"
#include "tap.h"

#define ok(...)		tap_result(1, __VA_ARGS__)
#define not_ok(...)	tap_result(0, __VA_ARGS__)


#define MAXF	9200
#define MINF	60
#define MAXSEG	16

#define TCP	IPPROTO_TCP
#define UDP	IPPROTO_UDP

enum path {
	P_OFFLOAD = 'O',	/* the chip checksums it */
	P_SW = 'S',		/* the driver checksums it */
	P_NONE = 'N',		/* handed over without a request */
	P_CORE = 'C',		/* the core checksummed it before the driver */
	P_REFUSED = 'R',	/* the kernel refuses it: errno, nothing counted */
	P_DROPPED = 'D',	/* errno, counted in tx_dropped, nothing else */
	P_GSO_HW = 'g',		/* the core segments, the chip checksums each */
	P_TSO = 'T',		/* LargeSend segments and checksums it */
};

struct frame {
	uint8_t b[MAXF];
	int len, l3off, l4off, l3, l4;
	int csum_start, csum_offset;
	bool csum;		/* VIRTIO_NET_HDR_F_NEEDS_CSUM */
	uint16_t sll_proto;
	uint16_t gso_size;
};

/* What a correct NETIF_F_HW_CSUM device sends. */
struct wire {
	uint8_t b[MAXF];
	int len;
	int csum_at;		/* -1: nothing written */
	bool zero;		/* the sum folds to 0: 0xffff, or 0x0000 by the chip */
	bool mask_ipid;		/* a segment: IPv4 ID free, header checksum valid */
	int ipoff;
	int tcp_flags_at;	/* LargeSend's last segment: PSH/FIN may be gone */
};

/* QEMU's LargeSend clears PSH and FIN in place in every segment but the
 * last, so the last goes out without them too: the chip's, not the
 * driver's. Seen on a frame that matched otherwise (its TCP checksum
 * valid for the flags it has).
 */
static bool psh_lost;

static uint8_t tx_mac[6], rx_mac[6];
static int rxidx;
static int rx_fd, tx_fd;

static void bail(const char *what)
{
	printf("Bail out! %s: %s\n", what, strerror(errno));
	exit(1);
}

/* ---- frames (checksums: frame_bytes.h) ---- */

static int l4_hdrlen(int l4)
{
	return l4 == TCP ? 20 : 8;
}

static int l4_field(int l4)
{
	return l4 == TCP ? 16 : 6;
}

/* The stack's seed: the pseudo-header sum for the length the IP header
 * gives, in the field the request names.
 */
static void reseed(struct frame *fr)
{
	const uint8_t *ip = fr->b + fr->l3off;
	int l4len = fr->l3 == 4 ? get16(ip + 2) - (ip[0] & 15) * 4 : get16(ip + 4);

	put16(fr->b + fr->csum_start + fr->csum_offset,
	      pseudo(fr->b, fr->l3off, fr->l3, fr->l4, l4len));
}

/* TCP or UDP over IPv4 (@l3 4) or IPv6 (6), or a non-IP frame (0) of type
 * 0x88b5, behind @tags in-band tags (1: 802.1Q 100, 2: 802.1ad 200 +
 * 802.1Q 100), with @ip_opts bytes of IPv4 options; the checksum request
 * is the stack's: the L4 field, seeded with the pseudo-header.
 */
static void build(struct frame *fr, unsigned int id, int l3, int l4, int tags,
		  int ip_opts, int payload)
{
	int off = 12, i, l4len = (l3 ? l4_hdrlen(l4) : 0) + payload;
	uint8_t *b = fr->b;
	uint16_t type = l3 == 4 ? 0x0800 : l3 == 6 ? 0x86dd : 0x88b5;

	memset(fr, 0, sizeof(*fr));
	memcpy(b, rx_mac, 6);
	b[6] = 0x02;
	b[7] = 0x5e;
	b[10] = id >> 8;
	b[11] = id;
	if (tags == 2) {
		put16(b + off, 0x88a8);
		put16(b + off + 2, 200);
		off += 4;
	}
	if (tags) {
		put16(b + off, 0x8100);
		put16(b + off + 2, 100);
		off += 4;
	}
	put16(b + off, type);
	fr->sll_proto = tags == 2 ? 0x88a8 : tags ? 0x8100 : type;
	off += 2;
	fr->l3off = off;
	fr->l3 = l3;
	fr->l4 = l4;
	if (l3 == 4) {
		int hl = 20 + ip_opts;

		b[off] = 0x40 | hl / 4;
		put16(b + off + 2, hl + l4len);
		put16(b + off + 4, id);
		b[off + 6] = 0x40;			/* DF */
		b[off + 8] = 64;
		b[off + 9] = l4;
		b[off + 12] = 198; b[off + 13] = 51; b[off + 14] = 100; b[off + 15] = 1;
		b[off + 16] = 198; b[off + 17] = 51; b[off + 18] = 100; b[off + 19] = 2;
		memset(b + off + 20, 1, ip_opts);	/* NOP */
		ipv4_csum(b + off);
		off += hl;
	} else if (l3 == 6) {
		b[off] = 0x60;
		put16(b + off + 4, l4len);
		b[off + 6] = l4;
		b[off + 7] = 64;
		b[off + 8] = 0x20; b[off + 9] = 0x01; b[off + 10] = 0x0d; b[off + 11] = 0xb8;
		b[off + 23] = 1;
		memcpy(b + off + 24, b + off + 8, 15);
		b[off + 39] = 2;
		off += 40;
	}
	fr->l4off = off;
	if (l3) {
		put16(b + off, 40000 + (id & 0x3fff));
		put16(b + off + 2, 9);
		if (l4 == TCP) {
			b[off + 4] = 0x10;
			b[off + 7] = id;		/* seq */
			b[off + 12] = 5 << 4;
			b[off + 13] = 0x18;		/* ACK PSH */
			put16(b + off + 14, 65535);
		} else {
			put16(b + off + 4, l4len);
		}
	}
	for (i = l3 ? l4_hdrlen(l4) : 0; i < l4len; i++)
		b[off + i] = (uint8_t)(id * 7 + i * 13 + 1);
	fr->len = off + l4len;
	fr->csum = l3 != 0;
	fr->csum_start = off;
	fr->csum_offset = l4_field(l4);
	if (l3)
		reseed(fr);
}

/* An IPv4 header whose checksum is 0x0000, made so through the ID; then
 * stored as @stored (0x0000, or 0xffff: the same sum, the other zero).
 */
static void ip_csum_zero(struct frame *fr, uint16_t stored)
{
	uint8_t *ip = fr->b + fr->l3off;
	uint16_t s;

	put16(ip + 4, 0);
	put16(ip + 10, 0);
	s = fold(sum16(ip, (ip[0] & 15) * 4, 0));
	put16(ip + 4, 0xffff - s);
	ipv4_csum(ip);
	if (get16(ip + 10) != 0) {
		printf("Bail out! could not make a zero IPv4 header checksum\n");
		exit(1);
	}
	put16(ip + 10, stored);
}

/* Two payload bytes chosen so that the L4 checksum folds to 0. */
static void l4_sum_zero(struct frame *fr)
{
	int at = fr->l4off + l4_hdrlen(fr->l4);
	uint16_t s;

	put16(fr->b + at, 0);
	s = fold(sum16(fr->b + fr->csum_start, fr->len - fr->csum_start, 0));
	put16(fr->b + at, 0xffff - s);
}

static void generic_csum(struct wire *w, int start, int at)
{
	uint16_t c = ~fold(sum16(w->b + start, w->len - start, 0));

	w->zero = c == 0;
	put16(w->b + at, c ?: 0xffff);
	w->csum_at = at;
}

/* What a correct NETIF_F_HW_CSUM device sends for @fr: @out[0..n). GSO
 * frames are segmented as software GSO does it.
 */
static int expect(const struct frame *fr, struct wire *out)
{
	int hdr, pay, n, i, v = fr->l3;

	if (!fr->gso_size) {
		memcpy(out[0].b, fr->b, fr->len);
		out[0].len = fr->len;
		out[0].csum_at = -1;
		out[0].zero = false;
		out[0].mask_ipid = false;
		out[0].ipoff = fr->l3off;
		out[0].tcp_flags_at = -1;
		if (fr->csum && fr->csum_start >= 0)
			generic_csum(&out[0], fr->csum_start, fr->csum_start + fr->csum_offset);
		return 1;
	}
	hdr = fr->l4off + 20;
	pay = fr->len - hdr;
	n = (pay + fr->gso_size - 1) / fr->gso_size;
	for (i = 0; i < n && i < MAXSEG; i++) {
		struct wire *w = &out[i];
		int seg = pay - i * fr->gso_size < fr->gso_size ? pay - i * fr->gso_size :
			  fr->gso_size;
		uint8_t *t = w->b + fr->l4off, *ip = w->b + fr->l3off;
		uint32_t seq;

		memcpy(w->b, fr->b, hdr);
		memcpy(w->b + hdr, fr->b + hdr + i * fr->gso_size, seg);
		w->len = hdr + seg;
		if (v == 4) {
			put16(ip + 2, w->len - fr->l3off);
			put16(ip + 4, get16(ip + 4) + i);
			ipv4_csum(ip);
		} else {
			put16(ip + 4, w->len - fr->l3off - 40);
		}
		seq = (uint32_t)t[4] << 24 | t[5] << 16 | t[6] << 8 | t[7];
		seq += i * fr->gso_size;
		t[4] = seq >> 24; t[5] = seq >> 16; t[6] = seq >> 8; t[7] = seq;
		if (i + 1 < n)
			t[13] &= ~0x09;		/* FIN PSH on the last only */
		put16(t + 16, pseudo(w->b, fr->l3off, v, TCP, w->len - fr->l4off));
		generic_csum(w, fr->l4off, fr->l4off + 16);
		w->mask_ipid = v == 4;
		w->ipoff = fr->l3off;
		w->tcp_flags_at = -1;
	}
	return n;
}

/* ---- the wire ---- */

static int open_rx(const char *ifname)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL) };
	struct packet_mreq mr = { .mr_type = PACKET_MR_PROMISC };
	int self = open("/proc/self/ns/net", O_RDONLY);
	int fd, big = 32 << 20, one = 1;
	socklen_t sl = sizeof(sll);

	if (self < 0 || setns_path("/var/run/netns/rx"))
		return -1;
	fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	rxidx = if_nametoindex(ifname);
	sll.sll_ifindex = rxidx;
	mr.mr_ifindex = rxidx;
	if (fd < 0 || !rxidx || bind(fd, (void *)&sll, sizeof(sll)) ||
	    setsockopt(fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof(mr)))
		fd = -1;
	else
		setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
	/* the receive path moves the outer tag into skb metadata before the
	 * taps: PACKET_AUXDATA gives it back, as libpcap does
	 */
	if (fd >= 0 && setsockopt(fd, SOL_PACKET, PACKET_AUXDATA, &one, sizeof(one)))
		fd = -1;
	if (fd >= 0 && (getsockname(fd, (void *)&sll, &sl) || sll.sll_halen != 6))
		fd = -1;
	if (fd >= 0)
		memcpy(rx_mac, sll.sll_addr, 6);
	if (setns(self, CLONE_NEWNET))
		return -1;
	close(self);
	return fd;
}

/* A packet socket with a virtio-net header, on @ifindex of the current
 * network namespace, optionally bypassing the qdisc.
 */
static int open_tx(bool bypass)
{
	int one = 1, fd = socket(AF_PACKET, SOCK_RAW, 0);

	if (fd < 0 || setsockopt(fd, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof(one)))
		bail("tx socket");
	if (bypass && setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one)))
		bail("PACKET_QDISC_BYPASS");
	return fd;
}

static void vnet_hdr(const struct frame *fr, struct virtio_net_hdr *vh)
{
	memset(vh, 0, sizeof(*vh));
	if (fr->csum) {
		vh->flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
		vh->csum_start = fr->csum_start;
		vh->csum_offset = fr->csum_offset;
	}
	if (fr->gso_size) {
		vh->gso_type = fr->l3 == 4 ? VIRTIO_NET_HDR_GSO_TCPV4 : VIRTIO_NET_HDR_GSO_TCPV6;
		vh->gso_size = fr->gso_size;
		vh->hdr_len = fr->l4off + 20;
	}
}

/* Send @fr on @fd (a vnet-header socket) out of @ifindex; 0 or errno. */
static int send_vnet(int fd, int ifindex, const struct frame *fr)
{
	uint8_t *buf = malloc(sizeof(struct virtio_net_hdr) + MAXF);
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET, .sll_ifindex = ifindex,
		.sll_protocol = htons(fr->sll_proto),
	};
	struct virtio_net_hdr vh;
	int err = 0;

	vnet_hdr(fr, &vh);
	memcpy(buf, &vh, sizeof(vh));
	memcpy(buf + sizeof(vh), fr->b, fr->len);
	if (sendto(fd, buf, sizeof(vh) + fr->len, 0, (void *)&sll, sizeof(sll)) < 0)
		err = errno;
	free(buf);
	return err;
}

/* Ours: source MAC 02:5e:00:00:ID, or destination MAC (SOCK_DGRAM). */
static int ident(const uint8_t *b, int len)
{
	if (len < 14)
		return -1;
	if (b[6] == 0x02 && b[7] == 0x5e && !b[8] && !b[9])
		return b[10] << 8 | b[11];
	if (b[0] == 0x02 && b[1] == 0x5e && !b[2] && !b[3])
		return b[4] << 8 | b[5];
	return -1;
}

/* A frame off the wire as it was there: with its outer tag put back. */
static int recv_any(uint8_t *b, int *len, int timeout_ms)
{
	struct pollfd p = { .fd = rx_fd, .events = POLLIN };
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(struct tpacket_auxdata))];
	} ctl;
	struct iovec iov = { .iov_base = b, .iov_len = MAXF - 4 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &ctl,
			    .msg_controllen = sizeof(ctl) };
	struct cmsghdr *c;
	ssize_t n;

	if (poll(&p, 1, timeout_ms) <= 0)
		return -1;
	n = recvmsg(rx_fd, &m, MSG_DONTWAIT);
	if (n < 0)
		return -1;
	for (c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
		struct tpacket_auxdata *aux = (void *)CMSG_DATA(c);

		if (c->cmsg_level != SOL_PACKET || c->cmsg_type != PACKET_AUXDATA ||
		    !(aux->tp_status & TP_STATUS_VLAN_VALID) || n < 12)
			continue;
		memmove(b + 16, b + 12, n - 12);
		put16(b + 12, aux->tp_status & TP_STATUS_VLAN_TPID_VALID ?
		      aux->tp_vlan_tpid : 0x8100);
		put16(b + 14, aux->tp_vlan_tci);
		n += 4;
	}
	*len = n;
	return 0;
}

static int recv_frame(uint8_t *b, int *len, int timeout_ms)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int left, id;

		clock_gettime(CLOCK_MONOTONIC, &t);
		left = timeout_ms - ((t.tv_sec - t0.tv_sec) * 1000 +
				     (t.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0 || recv_any(b, len, left))
			return -1;
		id = ident(b, *len);
		if (id >= 0)
			return id;
	}
}

/* Does @got match @w? @zero_ok: the chip wrote the field. *@zero_seen: the
 * field held 0x0000 where 0xffff was the software result.
 */
static bool matches(const struct wire *w, const uint8_t *got, int len, bool zero_ok,
		    bool *zero_seen)
{
	static uint8_t want[MAXF];
	int wl = w->len < MINF ? MINF : w->len, ip = w->ipoff;

	if (len != wl)
		return false;
	memset(want, 0, wl);
	memcpy(want, w->b, w->len);
	if (w->zero && zero_ok && w->csum_at >= 0 && get16(got + w->csum_at) == 0) {
		put16(want + w->csum_at, 0);
		if (zero_seen)
			*zero_seen = true;
	}
	if (w->mask_ipid) {
		if (fold(sum16(got + ip, (got[ip] & 15) * 4, 0)) != 0xffff)
			return false;
		memcpy(want + ip + 4, got + ip + 4, 2);
		memcpy(want + ip + 10, got + ip + 10, 2);
	}
	if (w->tcp_flags_at >= 0 && got[w->tcp_flags_at] != want[w->tcp_flags_at] &&
	    got[w->tcp_flags_at] == (want[w->tcp_flags_at] & ~0x09)) {
		int l4 = w->tcp_flags_at - 13, l4len = get16(got + ip + 2) - (got[ip] & 15) * 4;

		if (l4 + l4len > len ||
		    fold(sum16(got + l4, l4len, pseudo(got, ip, 4, TCP, l4len))) != 0xffff)
			return false;
		want[w->tcp_flags_at] = got[w->tcp_flags_at];
		memcpy(want + w->csum_at, got + w->csum_at, 2);
		if (!memcmp(want, got, wl)) {
			psh_lost = true;
			return true;
		}
		return false;
	}
	return !memcmp(want, got, wl);
}

static void show_diff(const struct wire *w, const uint8_t *got, int len)
{
	int i, shown = 0, wl = w->len < MINF ? MINF : w->len;

	printf("# got %d bytes, want %d\n", len, wl);
	for (i = 0; i < len && i < wl && shown < 6; i++) {
		uint8_t want = i < w->len ? w->b[i] : 0;

		if (got[i] != want) {
			printf("#   byte %d: got 0x%02x, want 0x%02x%s\n", i, got[i], want,
			       i == w->csum_at || i == w->csum_at + 1 ? " (checksum field)" : "");
			shown++;
		}
	}
}

/* ---- counters: port_counters.h ---- */

static void delta(struct counters *d, const struct counters *a, const struct counters *b)
{
	d->needs = b->needs - a->needs;
	d->none = b->none - a->none;
	d->sw = b->sw - a->sw;
	d->dropped = b->dropped - a->dropped;
	d->strays = b->strays;
}

/* Another try of a window that was not quiet: say so, let the last try's
 * late frames go.
 */
static bool again(const char *name, const struct counters *b, int tries)
{
	static uint8_t late[MAXF];
	int len;

	if (!b->strays || tries >= WINDOW_TRIES)
		return false;
	printf("# %s: %d frame%s of others left the port in the window (%s): measuring again\n",
	       name, b->strays, b->strays > 1 ? "s" : "", stray_what);
	while (recv_any(late, &len, 300) == 0)
		;
	return true;
}

/* the counter line's verdict: the deltas, in a window with no other frame */
static const char *quiet_note(const struct counters *d)
{
	return d->strays ? " (frames of others in every try: not measured)" : "";
}

static bool path_ok(char path, const struct counters *d, int n)
{
	switch (path) {
	case P_OFFLOAD:
	case P_GSO_HW:
	case P_TSO:	/* tx-needs-csum counts packets on the wire: segments */
		return d->needs == n && d->none == 0 && d->sw == 0 && d->dropped == 0;
	case P_SW:
		return d->needs == 0 && d->none == n && d->sw == n && d->dropped == 0;
	case P_NONE:
	case P_CORE:
		return d->needs == 0 && d->none == n && d->sw == 0 && d->dropped == 0;
	case P_DROPPED:
		return d->needs == 0 && d->none == 0 && d->sw == 0 && d->dropped == 1;
	default:
		return d->needs == 0 && d->none == 0 && d->sw == 0 && d->dropped == 0;
	}
}

static const char *path_name(char p)
{
	switch (p) {
	case P_OFFLOAD: return "offloaded to the chip";
	case P_SW: return "checksummed by the driver";
	case P_NONE: return "handed over without a checksum request";
	case P_CORE: return "checksummed by the core, handed over without a request";
	case P_REFUSED: return "refused, nothing counted";
	case P_DROPPED: return "dropped, counted in tx_dropped only";
	case P_TSO: return "one GSO packet to LargeSend";
	default: return "segmented by the core, each offloaded to the chip";
	}
}

/* ---- one case ---- */

enum send_mode { S_RAW, S_BYPASS, S_RING, S_DGRAM, S_VETH };

/* transformations a tc egress action applies on the way */
enum xform { X_NONE, X_VLAN_Q, X_VLAN_AD, X_MPLS, X_ETHTYPE, X_TTL, X_TTL_CSUM,
	     X_SHRINK8, X_SHRINK40 };

static int bypass_fd = -1, veth_fd = -1, veth_idx;
static int ring_send(const struct frame *fr);

static int do_send(enum send_mode m, const struct frame *fr)
{
	switch (m) {
	case S_BYPASS:
		return send_vnet(bypass_fd, txidx, fr);
	case S_RING:
		return ring_send(fr);
	case S_VETH:
		return send_vnet(veth_fd, veth_idx, fr);
	default:
		return send_vnet(tx_fd, txidx, fr);
	}
}

static void insert(struct wire *w, int at, const uint8_t *bytes, int n)
{
	memmove(w->b + at + n, w->b + at, w->len - at);
	memcpy(w->b + at, bytes, n);
	w->len += n;
	if (w->csum_at >= at)
		w->csum_at += n;
	if (w->ipoff >= at)
		w->ipoff += n;
}

/* What the action did to the frame before the driver saw it. */
static void xform_pre(struct frame *fr, enum xform x)
{
	int n = x == X_SHRINK8 ? 8 : 40;

	switch (x) {
	case X_ETHTYPE:
		put16(fr->b + 12, 0x88b5);
		break;
	case X_TTL:
	case X_TTL_CSUM:
		fr->b[fr->l3off + 8] = 7;
		if (x == X_TTL_CSUM)
			ipv4_csum(fr->b + fr->l3off);
		break;
	case X_SHRINK8:
	case X_SHRINK40:
		/* bpf_skb_adjust_room(BPF_ADJ_ROOM_MAC): bytes after the
		 * Ethernet header go, csum_start stays at its address
		 */
		memmove(fr->b + 14, fr->b + 14 + n, fr->len - 14 - n);
		fr->len -= n;
		fr->csum_start -= n;
		if (fr->csum_start < 0)
			fr->csum = false;	/* skb_postpull_rcsum() */
		break;
	default:
		break;
	}
}

static void xform_post(struct wire *w, int n, enum xform x)
{
	static const uint8_t q[] = { 0x81, 0x00, 0x00, 100 }, ad[] = { 0x88, 0xa8, 0x00, 200 },
		lse[] = { 0x00, 0x01, 0x11, 0x40 };	/* label 17, S, TTL 64 */
	int i;

	for (i = 0; i < n; i++) {
		switch (x) {
		case X_VLAN_Q:
			insert(&w[i], 12, q, 4);
			break;
		case X_VLAN_AD:
			insert(&w[i], 12, ad, 4);
			break;
		case X_MPLS:
			insert(&w[i], 14, lse, 4);
			put16(w[i].b + 12, 0x8847);
			break;
		default:
			break;
		}
	}
}

/* Send @fr by @mode; check what arrives against what a NETIF_F_HW_CSUM
 * device sends and the counters against @path (with @want_err for
 * refusals). Two TAP lines: the bytes (or the refusal), the counters.
 */
static void run(const char *name, const struct frame *fr, enum send_mode mode, char path,
		int want_err, enum xform x)
{
	static struct wire want[MAXSEG];
	static struct frame tf;
	static uint8_t got[MAXF];
	int n, err, seen[MAXSEG] = { 0 }, len, i, rid, extra = 0, wrong = 0, timeout;
	int first_wrong_len = 0, tries;
	bool zero_seen = false, zero_ok = path == P_OFFLOAD || path == P_GSO_HW || path == P_TSO;
	struct counters a, b, d;
	char what[160];
	static uint8_t first_wrong[MAXF];
	int id = ident(fr->b, fr->len);

	tf = *fr;
	xform_pre(&tf, x);
	n = expect(&tf, want);
	xform_post(want, n, x);
	if (path == P_TSO && n > 1 && tf.l3 == 4)
		want[n - 1].tcp_flags_at = tf.l4off + 13;
	for (tries = 1;; tries++) {
		memset(seen, 0, sizeof(seen));
		extra = wrong = first_wrong_len = 0;
		zero_seen = psh_lost = false;
		window_begin(&a, 0);
		err = do_send(mode, fr);
		timeout = err ? 500 : 3000;
		while ((rid = recv_frame(got, &len, timeout)) >= 0) {
			int k = -1;

			if (rid != id)
				continue;
			for (i = 0; i < n && k < 0; i++)
				if (!seen[i] && matches(&want[i], got, len, zero_ok, &zero_seen))
					k = i;
			if (k < 0) {
				if (!wrong++) {
					memcpy(first_wrong, got, len);
					first_wrong_len = len;
				}
			} else {
				seen[k]++;
			}
			for (i = 0; i < n && seen[i]; i++)
				;
			if (i == n)
				timeout = 300;	/* all in: wait a little for extras */
			if (i == n && (k < 0 || extra++))
				break;
		}
		if (err || path == P_REFUSED || path == P_DROPPED)
			usleep(200000);
		window_end(&b);
		delta(&d, &a, &b);
		if (!again(name, &b, tries))
			break;
	}
	for (i = 0; i < n && seen[i] == 1; i++)
		;
	if (path == P_REFUSED || path == P_DROPPED) {
		bool right = err == want_err && !wrong && !seen[0];

		snprintf(what, sizeof(what), "%s (%s)%s", err ? "refused" : "accepted",
			 err ? strerror(err) : "no error", seen[0] || wrong ? ", and sent" : "");
		tap_result(right, "%s: %s, want %s", name, what, strerror(want_err));
	} else if (err) {
		not_ok("%s: refused (%s)", name, strerror(err));
	} else if (wrong) {
		not_ok("%s: sent wrong (%d wrong frame%s)", name, wrong, wrong > 1 ? "s" : "");
		show_diff(&want[0], first_wrong, first_wrong_len);
	} else if (i < n) {
		not_ok("%s: %s", name, seen[0] ? "lost segments or duplicated" : "lost");
	} else {
		snprintf(what, sizeof(what), "%s%s%s", n > 1 ? "right, every segment" : "right",
			 zero_seen ? " (the sum folds to 0: the chip wrote 0x0000)" :
			 want[0].zero && want[0].csum_at >= 0 ?
			 " (the sum folds to 0: 0xffff on the wire)" : "",
			 psh_lost ? " (QEMU's LargeSend dropped PSH from the last segment)" : "");
		ok("%s: %s", name, what);
	}
	if (path_ok(path, &d, n) && !d.strays)
		ok("%s: %s (tx-needs-csum +%lld, tx-csum-none +%lld, tx_csum_sw +%lld, tx_dropped +%lld)",
		   name, path_name(path), d.needs, d.none, d.sw, d.dropped);
	else
		not_ok("%s: %s? tx-needs-csum +%lld, tx-csum-none +%lld, tx_csum_sw +%lld, tx_dropped +%lld%s",
		       name, path_name(path), d.needs, d.none, d.sw, d.dropped, quiet_note(&d));
}

/* ---- groups ---- */

static struct frame F;

static unsigned int next_id = 0x400;

#define NEW(l3, l4, tags, opts, payload) build(&F, next_id++, l3, l4, tags, opts, payload)

static void pad_to(struct frame *fr, int len, uint8_t byte)
{
	memset(fr->b + fr->len, byte, len - fr->len);
	fr->len = len;
}

/* raw: edge cases through a packet socket with a virtio-net header */
static void group_raw(void)
{
	struct frame *f = &F;

	NEW(4, UDP, 0, 0, 0);
	run("UDP/IPv4 without payload, a 42-byte frame", f, S_RAW, P_OFFLOAD, 0, X_NONE);
	NEW(4, UDP, 0, 0, 1);
	run("UDP/IPv4 with 1 byte of payload, 43 bytes", f, S_RAW, P_OFFLOAD, 0, X_NONE);
	NEW(4, TCP, 0, 0, 0);
	run("TCP/IPv4 without payload, 54 bytes", f, S_RAW, P_OFFLOAD, 0, X_NONE);
	NEW(4, TCP, 0, 0, 6);
	run("TCP/IPv4 of exactly 60 bytes", f, S_RAW, P_OFFLOAD, 0, X_NONE);
	NEW(4, UDP, 0, 0, 0);
	pad_to(f, 60, 0);
	run("UDP/IPv4 42-byte datagram its sender padded to 60 with zeros", f, S_RAW, P_SW, 0,
	    X_NONE);
	NEW(4, TCP, 0, 40, 0);
	run("TCP/IPv4 with ihl 15 and no payload, tot_len 80 = the frame", f, S_RAW, P_OFFLOAD,
	    0, X_NONE);
	NEW(4, UDP, 0, 40, 0);
	run("UDP/IPv4 with ihl 15 and no payload", f, S_RAW, P_OFFLOAD, 0, X_NONE);
	NEW(4, TCP, 0, 40, 0);
	put16(f->b + f->l3off + 2, 81);
	ipv4_csum(f->b + f->l3off);
	reseed(f);
	run("TCP/IPv4 with ihl 15, tot_len one beyond the frame", f, S_RAW, P_SW, 0, X_NONE);
	NEW(4, TCP, 0, 0, 200);
	ip_csum_zero(f, 0x0000);
	run("TCP/IPv4 whose header checksum is 0x0000, and right", f, S_RAW, P_OFFLOAD, 0,
	    X_NONE);
	NEW(4, TCP, 0, 0, 200);
	ip_csum_zero(f, 0xffff);
	run("TCP/IPv4 whose header checksum is 0xffff for 0 (IPCS would rewrite it)", f, S_RAW,
	    P_SW, 0, X_NONE);
	NEW(4, UDP, 0, 4, 200);
	ip_csum_zero(f, 0xffff);
	run("UDP/IPv4 with options, header checksum 0xffff for 0", f, S_RAW, P_SW, 0, X_NONE);
	NEW(4, UDP, 0, 0, 100);
	l4_sum_zero(f);
	run("UDP/IPv4 whose checksum folds to 0, by the chip", f, S_RAW, P_OFFLOAD, 0, X_NONE);
	NEW(4, TCP, 0, 0, 100);
	l4_sum_zero(f);
	run("TCP/IPv4 whose checksum folds to 0, by the chip", f, S_RAW, P_OFFLOAD, 0, X_NONE);
	NEW(6, UDP, 0, 0, 100);
	l4_sum_zero(f);
	run("UDP/IPv6 whose checksum folds to 0, by the driver", f, S_RAW, P_SW, 0, X_NONE);
	NEW(4, TCP, 0, 0, 300);
	f->b[f->l3off + 6] = 0x20;			/* MF */
	ipv4_csum(f->b + f->l3off);
	run("TCP/IPv4 first fragment (MF)", f, S_RAW, P_SW, 0, X_NONE);
	NEW(4, UDP, 0, 0, 300);
	put16(f->b + f->l3off + 6, 185);		/* offset 1480 */
	ipv4_csum(f->b + f->l3off);
	run("UDP/IPv4 non-first fragment", f, S_RAW, P_SW, 0, X_NONE);
	NEW(4, TCP, 0, 0, 100);
	f->b[f->l3off] = 0x44;
	ipv4_csum(f->b + f->l3off);
	run("IPv4 header with ihl 4", f, S_RAW, P_SW, 0, X_NONE);
	NEW(4, TCP, 0, 0, 100);
	f->csum_offset = 6;
	run("TCP/IPv4 with csum_offset 6 (UDP's field)", f, S_RAW, P_SW, 0, X_NONE);
	NEW(4, UDP, 0, 0, 100);
	f->csum_offset = 16;
	run("UDP/IPv4 with csum_offset 16 (TCP's field, in the payload)", f, S_RAW, P_SW, 0,
	    X_NONE);
	NEW(4, TCP, 0, 0, 100);
	pad_to(f, f->len + 4, 0xa5);
	f->csum_start = f->len - 4;
	f->csum_offset = 0;
	run("checksum of the 4 bytes after tot_len (csum_start = the IP end)", f, S_RAW, P_SW,
	    0, X_NONE);
	NEW(4, TCP, 0, 0, 100);
	f->csum_start = f->len - 2;
	f->csum_offset = 0;
	run("csum_start on the last two bytes, csum_offset 0", f, S_RAW, P_SW, 0, X_NONE);
	NEW(4, TCP, 0, 0, 100);
	f->csum_start = 20;
	f->csum_offset = 4;
	run("csum_start 20 in the IPv4 header, the field its header checksum", f, S_RAW, P_SW, 0,
	    X_NONE);
	NEW(4, TCP, 1, 0, 1460);
	run("TCP/IPv4 behind 802.1Q, 1518 bytes (MTU + tag)", f, S_RAW, P_SW, 0, X_NONE);
	NEW(4, TCP, 0, 0, 1461);
	run("untagged frame of 1515 bytes", f, S_RAW, P_REFUSED, EMSGSIZE, X_NONE);
	/* a packet socket's GSO is SKB_GSO_DODGY: with TSO in the features
	 * the core only checks its headers, and LargeSend segments it, while
	 * its 11-bit MSS lasts
	 */
	NEW(4, TCP, 0, 0, 4094);
	f->gso_size = 2047;
	run("GSO TCPv4, gso_size 2047 (LargeSend's largest)", f, S_RAW, P_TSO, 0, X_NONE);
	NEW(4, TCP, 0, 0, 4096);
	f->gso_size = 2048;
	run("GSO TCPv4, gso_size 2048 (beyond LargeSend: the core segments)", f, S_RAW, P_GSO_HW,
	    0, X_NONE);
	NEW(4, TCP, 0, 0, 6000);
	f->gso_size = 3000;
	run("GSO TCPv4, gso_size 3000", f, S_RAW, P_GSO_HW, 0, X_NONE);
}

/* bypass: PACKET_QDISC_BYPASS, dev_direct_xmit() */
static void group_bypass(void)
{
	struct frame *f = &F;

	bypass_fd = open_tx(true);
	NEW(4, TCP, 0, 0, 300);
	run("bypass: TCP/IPv4", f, S_BYPASS, P_OFFLOAD, 0, X_NONE);
	NEW(4, UDP, 0, 0, 0);
	run("bypass: UDP/IPv4, 42 bytes", f, S_BYPASS, P_OFFLOAD, 0, X_NONE);
	NEW(6, TCP, 0, 0, 300);
	run("bypass: TCP/IPv6", f, S_BYPASS, P_SW, 0, X_NONE);
	NEW(4, TCP, 1, 0, 300);
	run("bypass: TCP/IPv4 behind 802.1Q", f, S_BYPASS, P_SW, 0, X_NONE);
	NEW(4, TCP, 0, 0, 200);
	ip_csum_zero(f, 0xffff);
	run("bypass: TCP/IPv4, header checksum 0xffff for 0", f, S_BYPASS, P_SW, 0, X_NONE);
	NEW(4, TCP, 0, 0, 3000);
	f->gso_size = 1000;
	run("bypass: GSO TCPv4 to LargeSend", f, S_BYPASS, P_TSO, 0, X_NONE);
	/* what must be segmented, dev_direct_xmit() drops */
	NEW(6, TCP, 0, 0, 3000);
	f->gso_size = 1000;
	run("bypass: GSO TCPv6 (to be segmented: dropped)", f, S_BYPASS, P_DROPPED, ENOBUFS,
	    X_NONE);
	NEW(4, TCP, 0, 0, 6000);
	f->gso_size = 3000;
	run("bypass: GSO TCPv4, gso_size 3000 (to be segmented: dropped)", f, S_BYPASS,
	    P_DROPPED, ENOBUFS, X_NONE);
}

/* dgram: SOCK_DGRAM cannot ask for a checksum */
static void group_dgram(void)
{
	struct frame *f = &F;
	int one = 1, fd = socket(AF_PACKET, SOCK_DGRAM, 0), err = 0;
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET, .sll_ifindex = txidx,
		.sll_protocol = htons(0x0800), .sll_halen = 6,
	};
	struct counters a, b, d;
	struct wire *w = calloc(1, sizeof(*w));
	static uint8_t got[MAXF];
	int len, rid, id, tries;
	bool right = false;

	if (fd < 0)
		bail("SOCK_DGRAM socket");
	if (setsockopt(fd, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof(one)))
		err = errno;
	tap_result(err == EINVAL, "SOCK_DGRAM: PACKET_VNET_HDR refused (%s), so no checksum request",
		   err ? strerror(err) : "accepted");

	id = next_id++;
	build(f, id, 4, TCP, 0, 0, 300);
	/* the stack's checksum in place; the kernel writes the MACs */
	f->b[0] = 0x02; f->b[1] = 0x5e; f->b[2] = 0; f->b[3] = 0;
	f->b[4] = id >> 8; f->b[5] = id;
	memcpy(f->b + 6, tx_mac, 6);
	memcpy(w->b, f->b, f->len);
	w->len = f->len;
	w->tcp_flags_at = -1;
	generic_csum(w, f->csum_start, f->csum_start + f->csum_offset);
	memcpy(sll.sll_addr, f->b, 6);
	for (tries = 1;; tries++) {
		right = false;
		window_begin(&a, 0);
		err = sendto(fd, w->b + 14, w->len - 14, 0, (void *)&sll, sizeof(sll)) < 0 ?
		      errno : 0;
		while (!err && (rid = recv_frame(got, &len, 3000)) >= 0)
			if (rid == id) {
				right = matches(w, got, len, false, NULL);
				if (!right)
					show_diff(w, got, len);
				break;
			}
		window_end(&b);
		delta(&d, &a, &b);
		if (!again("SOCK_DGRAM", &b, tries))
			break;
	}
	if (err)
		not_ok("SOCK_DGRAM TCP/IPv4 datagram: refused (%s)", strerror(err));
	else
		tap_result(right, "SOCK_DGRAM TCP/IPv4 datagram: sent as given");
	tap_result(path_ok(P_NONE, &d, 1) && !d.strays,
		   "SOCK_DGRAM: handed over without a request (tx-needs-csum +%lld, tx-csum-none +%lld, tx_csum_sw +%lld)%s",
		   d.needs, d.none, d.sw, quiet_note(&d));
	close(fd);
	free(w);
}

/* big: MTU 4096, so that packet_snd() builds paged skbs */
static void group_big(void)
{
	struct frame *f = &F;

	NEW(4, TCP, 0, 0, 4100 - 54);
	run("TCP/IPv4 of 4100 bytes, paged", f, S_RAW, P_OFFLOAD, 0, X_NONE);
	NEW(4, TCP, 0, 40, 4100 - 94);
	run("TCP/IPv4 with ihl 15, 4100 bytes, paged", f, S_RAW, P_OFFLOAD, 0, X_NONE);
	NEW(6, TCP, 0, 0, 4100 - 74);
	run("TCP/IPv6 of 4100 bytes, paged", f, S_RAW, P_SW, 0, X_NONE);
	NEW(4, UDP, 0, 0, 4097 - 42);
	pad_to(f, 4100, 0x5a);
	run("UDP/IPv4 of 4097 bytes and 3 after tot_len, paged", f, S_RAW, P_SW, 0, X_NONE);
	NEW(4, TCP, 1, 0, 4104 - 58);
	run("TCP/IPv4 behind 802.1Q, 4104 bytes, paged", f, S_RAW, P_SW, 0, X_NONE);
	NEW(4, UDP, 0, 0, 4100 - 42);
	l4_sum_zero(f);
	run("UDP/IPv4 of 4100 bytes whose checksum folds to 0, by the chip", f, S_RAW, P_OFFLOAD,
	    0, X_NONE);
}

/* ---- TPACKET TX ring ---- */

#define RING_FRAME	8192
#define RING_BLOCK	16384
#define RING_NR		4

static int ring_fd = -1, ring_version, ring_slot;
static uint8_t *ring_map;

static void ring_open(int version)
{
	int one = 1, v = version == 3 ? TPACKET_V3 : TPACKET_V2;
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_ifindex = txidx };
	struct tpacket_req3 req = {
		.tp_block_size = RING_BLOCK, .tp_block_nr = RING_NR * RING_FRAME / RING_BLOCK,
		.tp_frame_size = RING_FRAME, .tp_frame_nr = RING_NR,
	};

	ring_version = version;
	ring_fd = socket(AF_PACKET, SOCK_RAW, 0);
	if (ring_fd < 0 ||
	    setsockopt(ring_fd, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof(one)) ||
	    setsockopt(ring_fd, SOL_PACKET, PACKET_VERSION, &v, sizeof(v)) ||
	    setsockopt(ring_fd, SOL_PACKET, PACKET_TX_HAS_OFF, &one, sizeof(one)) ||
	    setsockopt(ring_fd, SOL_PACKET, PACKET_TX_RING, &req,
		       version == 3 ? sizeof(req) : sizeof(struct tpacket_req)))
		bail("TX ring");
	ring_map = mmap(NULL, RING_NR * RING_FRAME, PROT_READ | PROT_WRITE, MAP_SHARED,
			ring_fd, 0);
	if (ring_map == MAP_FAILED)
		bail("mmap TX ring");
	if (bind(ring_fd, (void *)&sll, sizeof(sll)))
		bail("bind TX ring");
}

static volatile uint32_t *ring_status(uint8_t *slot)
{
	if (ring_version == 3)
		return &((struct tpacket3_hdr *)slot)->tp_status;
	return &((struct tpacket2_hdr *)slot)->tp_status;
}

/* The frame goes in a slot such that what the kernel copies (up to the
 * end of the checksum field) ends 301 bytes before a page boundary: the
 * rest is two page frags, the first of odd length.
 */
static int ring_send(const struct frame *fr)
{
	uint8_t *slot = ring_map + (ring_slot++ % RING_NR) * RING_FRAME;
	volatile uint32_t *st = ring_status(slot);
	struct virtio_net_hdr vh;
	int copy = fr->gso_size ? fr->l4off + 20 : fr->csum_start + fr->csum_offset + 2;
	int start = 4096 - copy - 301, off = start - (int)sizeof(vh), i;

	if (*st != TP_STATUS_AVAILABLE) {
		printf("# ring slot busy (status 0x%x)\n", *st);
		return EBUSY;
	}
	vnet_hdr(fr, &vh);
	memcpy(slot + off, &vh, sizeof(vh));
	memcpy(slot + start, fr->b, fr->len);
	if (ring_version == 3) {
		struct tpacket3_hdr *h = (void *)slot;

		h->tp_next_offset = 0;
		h->tp_len = sizeof(vh) + fr->len;
		h->tp_mac = off;
	} else {
		struct tpacket2_hdr *h = (void *)slot;

		h->tp_len = sizeof(vh) + fr->len;
		h->tp_mac = off;
	}
	__sync_synchronize();
	*st = TP_STATUS_SEND_REQUEST;
	if (send(ring_fd, NULL, 0, 0) < 0) {
		int err = errno;

		/* a refused frame does not move the kernel's head */
		*st = TP_STATUS_AVAILABLE;
		ring_slot--;
		return err;
	}
	/* the send waited for the frame's completion */
	for (i = 0; i < 300 && *st != TP_STATUS_AVAILABLE; i++)
		usleep(10000);
	if (*st != TP_STATUS_AVAILABLE) {
		printf("# ring slot status 0x%x after the send\n", *st);
		*st = TP_STATUS_AVAILABLE;
		return EIO;
	}
	return 0;
}

static void group_ring(int version)
{
	struct frame *f = &F;
	char name[160];

	ring_open(version);
#define R(what) (snprintf(name, sizeof(name), "TPACKET_V%d TX ring: %s", version, what), name)
	NEW(4, TCP, 0, 0, 1000);
	run(R("TCP/IPv4, payload in two page frags, split at an odd offset"), f, S_RING,
	    P_OFFLOAD, 0, X_NONE);
	NEW(6, TCP, 0, 0, 1000);
	run(R("TCP/IPv6 in page frags"), f, S_RING, P_SW, 0, X_NONE);
	if (version == 2) {
		NEW(4, UDP, 0, 0, 1001);
		run(R("UDP/IPv4 in page frags"), f, S_RING, P_OFFLOAD, 0, X_NONE);
		NEW(4, TCP, 0, 0, 1000);
		pad_to(f, f->len + 3, 0x5a);
		run(R("TCP/IPv4, 3 bytes after tot_len, in page frags"), f, S_RING, P_SW, 0,
		    X_NONE);
		NEW(4, TCP, 0, 0, 1000);
		f->csum_start = 20;
		f->csum_offset = 0;
		run(R("csum_start 20: the IPv4 header split between head and frags"), f, S_RING,
		    P_SW, 0, X_NONE);
		NEW(4, TCP, 0, 0, 1000);
		ip_csum_zero(f, 0xffff);
		run(R("TCP/IPv4, header checksum 0xffff for 0, in page frags"), f, S_RING, P_SW,
		    0, X_NONE);
		NEW(4, TCP, 0, 40, 1000);
		run(R("TCP/IPv4 with ihl 15 in page frags"), f, S_RING, P_OFFLOAD, 0, X_NONE);
		NEW(4, TCP, 1, 0, 1000);
		run(R("TCP/IPv4 behind 802.1Q in page frags"), f, S_RING, P_SW, 0, X_NONE);
		NEW(4, UDP, 0, 0, 1000);
		l4_sum_zero(f);
		run(R("UDP/IPv4 whose checksum folds to 0, in page frags"), f, S_RING, P_OFFLOAD,
		    0, X_NONE);
		NEW(6, UDP, 0, 0, 1000);
		l4_sum_zero(f);
		run(R("UDP/IPv6 whose checksum folds to 0, in page frags"), f, S_RING, P_SW, 0,
		    X_NONE);
		NEW(4, TCP, 0, 0, 3000);
		f->gso_size = 1000;
		run(R("GSO TCPv4 from page frags, to LargeSend"), f, S_RING, P_TSO, 0, X_NONE);
		NEW(6, TCP, 0, 0, 3000);
		f->gso_size = 1000;
		run(R("GSO TCPv6 from page frags, segmented and checksummed by the core"), f,
		    S_RING, P_CORE, 0, X_NONE);
	}
#undef R
}

/* ---- several threads on one socket ---- */

struct tframe {
	struct frame fr;
	struct wire w;
	char path;
	int seen;
};

static struct tframe *tf;
static int per_thread;
static volatile int in_flight;	/* sent and not yet received, about */

/* At most about 24 frames in flight: a burst of hundreds overflows the
 * receiving e1000 model's ring, which is not what is under test.
 */
static void *sender(void *arg)
{
	int t = (int)(long)arg, i, w;

	for (i = 0; i < per_thread; i++) {
		struct tframe *x = &tf[t * per_thread + i];

		for (w = 0; w < 2000 && in_flight >= 24; w++)
			usleep(1000);
		__sync_fetch_and_add(&in_flight, 1);
		if (send_vnet(tx_fd, txidx, &x->fr)) {
			x->seen = -1;
			__sync_fetch_and_sub(&in_flight, 1);
		}
	}
	return NULL;
}

static void group_threads(int nthreads, int per)
{
	int total = nthreads * per, i, got_n = 0, bad = 0, lost = 0, refused = 0, len, rid, tries;
	long long want_needs = 0, want_none = 0, want_sw = 0;
	pthread_t th[16];
	struct counters a, b, d;
	static uint8_t got[MAXF];

	per_thread = per;
	tf = calloc(total, sizeof(*tf));
	for (i = 0; i < total; i++) {
		struct tframe *x = &tf[i];
		unsigned int id = 0x3000 + i;

		switch (i % 6) {
		case 0:
			build(&x->fr, id, 4, TCP, 0, 0, 100 + i % 400);
			x->path = P_OFFLOAD;
			break;
		case 1:
			build(&x->fr, id, 4, UDP, 0, 0, 1);
			x->path = P_OFFLOAD;
			break;
		case 2:
			build(&x->fr, id, 6, TCP, 0, 0, 300);
			x->path = P_SW;
			break;
		case 3:
			build(&x->fr, id, 4, TCP, 1, 0, 100);
			x->path = P_SW;
			break;
		case 4:
			build(&x->fr, id, 4, UDP, 0, 0, 50);
			ip_csum_zero(&x->fr, 0xffff);
			x->path = P_SW;
			break;
		default:
			build(&x->fr, id, 0, 0, 0, 0, 200);
			x->path = P_NONE;
			break;
		}
		expect(&x->fr, &x->w);
		want_needs += x->path == P_OFFLOAD;
		want_none += x->path != P_OFFLOAD;
		want_sw += x->path == P_SW;
	}
	for (tries = 1;; tries++) {
		got_n = bad = 0;
		in_flight = 0;
		for (i = 0; i < total; i++)
			tf[i].seen = 0;
		window_begin(&a, 0);
		for (i = 0; i < nthreads; i++)
			pthread_create(&th[i], NULL, sender, (void *)(long)i);
		while (got_n < total && (rid = recv_frame(got, &len, 5000)) >= 0) {
			struct tframe *x;

			if (rid < 0x3000 || rid >= 0x3000 + total)
				continue;
			__sync_fetch_and_sub(&in_flight, 1);
			x = &tf[rid - 0x3000];
			if (x->seen < 0 || x->seen++ ||
			    !matches(&x->w, got, len, x->path == P_OFFLOAD, NULL))
				bad++;
			else
				got_n++;
		}
		for (i = 0; i < nthreads; i++)
			pthread_join(th[i], NULL);
		usleep(300000);
		while (recv_frame(got, &len, 200) >= 0)
			bad++;			/* late duplicates */
		window_end(&b);
		delta(&d, &a, &b);
		if (!again("threads", &b, tries))
			break;
	}
	for (i = 0; i < total; i++) {
		refused += tf[i].seen < 0;
		lost += tf[i].seen == 0;
	}
	if (!bad && !lost && !refused)
		ok("%d frames from %d threads on one socket: each arrived once, byte for byte",
		   total, nthreads);
	else
		not_ok("%d frames from %d threads on one socket: %d wrong or duplicated, %d lost, %d refused",
		       total, nthreads, bad, lost, refused);
	tap_result(d.needs == want_needs && d.none == want_none && d.sw == want_sw &&
		   d.dropped == 0 && !d.strays,
		   "threads: tx-needs-csum +%lld, tx-csum-none +%lld, tx_csum_sw +%lld, tx_dropped +%lld (want +%lld, +%lld, +%lld, +0)%s",
		   d.needs, d.none, d.sw, d.dropped, want_needs, want_none, want_sw,
		   quiet_note(&d));
	free(tf);
}

/* ---- tc egress actions on the port ---- */

static void group_tc(const char *c)
{
	static const struct {
		const char *name, *what;
		enum xform x;
		char path;
		int l4;
	} t[] = {
		{ "vlan-q", "tc vlan push 802.1Q 100: the chip inserts the tag", X_VLAN_Q,
		  P_OFFLOAD, TCP },
		{ "vlan-q-inband", "tc vlan push 802.1Q 100 with txvlan off: the tag in-band",
		  X_VLAN_Q, P_SW, TCP },
		{ "vlan-ad", "tc vlan push 802.1ad 200: the core pushes it in-band", X_VLAN_AD,
		  P_SW, UDP },
		{ "mpls", "tc mpls push: an MPLS label before the IPv4 header", X_MPLS, P_SW,
		  TCP },
		{ "ethtype", "tc pedit of the type field to 0x88b5 (skb->protocol stays IPv4)",
		  X_ETHTYPE, P_SW, TCP },
		{ "ttl", "tc pedit of the TTL without a header checksum update", X_TTL, P_SW,
		  UDP },
		{ "ttl-csum", "tc pedit of the TTL, then tc csum iph", X_TTL_CSUM, P_OFFLOAD,
		  UDP },
		{ "shrink8", "BPF adjust_room -8 at the MAC header: csum_start inside the IP header",
		  X_SHRINK8, P_SW, TCP },
		{ "shrink40", "BPF adjust_room -40 at the MAC header: csum_start before the frame",
		  X_SHRINK40, P_NONE, TCP },
	};
	unsigned int i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (strcmp(c, t[i].name))
			continue;
		NEW(4, t[i].l4, 0, 0, 100);
		run(t[i].what, &F, S_RAW, t[i].path, 0, t[i].x);
		return;
	}
	printf("Bail out! no tc case %s\n", c);
	exit(1);
}

/* ---- from another namespace, through a veth and tc mirred ---- */

static void group_veth(const char *ns, const char *ifname)
{
	struct frame *f = &F;
	int self = open("/proc/self/ns/net", O_RDONLY);
	char path[128];

	snprintf(path, sizeof(path), "/var/run/netns/%s", ns);
	if (self < 0 || setns_path(path))
		bail("setns");
	veth_fd = open_tx(false);
	veth_idx = if_nametoindex(ifname);
	if (!veth_idx)
		bail(ifname);
	if (setns(self, CLONE_NEWNET))
		bail("setns back");
	close(self);

	NEW(4, TCP, 0, 0, 300);
	run("veth+mirred: TCP/IPv4", f, S_VETH, P_OFFLOAD, 0, X_NONE);
	NEW(4, TCP, 1, 0, 300);
	run("veth+mirred: TCP/IPv4 behind 802.1Q (untagged on the veth, the chip tags it)", f,
	    S_VETH, P_OFFLOAD, 0, X_NONE);
	NEW(4, UDP, 2, 0, 300);
	run("veth+mirred: UDP/IPv4 behind QinQ (outer tag back in-band)", f, S_VETH, P_SW, 0,
	    X_NONE);
	NEW(6, TCP, 0, 0, 300);
	run("veth+mirred: TCP/IPv6", f, S_VETH, P_SW, 0, X_NONE);
	NEW(4, TCP, 0, 0, 200);
	ip_csum_zero(f, 0xffff);
	run("veth+mirred: TCP/IPv4, header checksum 0xffff for 0", f, S_VETH, P_SW, 0, X_NONE);
	NEW(4, UDP, 0, 0, 0);
	run("veth+mirred: UDP/IPv4, 42 bytes", f, S_VETH, P_OFFLOAD, 0, X_NONE);
	NEW(4, TCP, 0, 0, 3000);
	f->gso_size = 1000;
	run("veth+mirred: GSO TCPv4 to LargeSend", f, S_VETH, P_TSO, 0, X_NONE);
	NEW(4, TCP, 1, 0, 3000);
	f->gso_size = 1000;
	run("veth+mirred: GSO TCPv4 behind 802.1Q (LargeSend, the chip tags each segment)", f,
	    S_VETH, P_TSO, 0, X_NONE);
	NEW(4, TCP, 2, 0, 3000);
	f->gso_size = 1000;
	run("veth+mirred: GSO TCPv4 behind QinQ (the core segments and checksums)", f, S_VETH,
	    P_CORE, 0, X_NONE);
}

/* ---- pktgen: ndo_start_xmit() without the core's validation ---- */

/* The UDP checksum of a captured frame: 0 right, 1 wrong, 2 not parsed.
 * *@zero: the sum folds to 0 and the field held 0x0000.
 */
static int check_udp(const uint8_t *b, int len, bool chip, bool *zero)
{
	int off = 12, l3, l4, ulen, v;
	uint16_t type = get16(b + off), c, ipsum;
	uint8_t tmp[MAXF];

	while (type == 0x8100 || type == 0x88a8) {
		off += 4;
		type = get16(b + off);
	}
	off += 2;
	if (type == 0x8847) {
		while (off + 4 <= len && !(b[off + 2] & 1))
			off += 4;
		off += 4;
		type = (b[off] >> 4) == 6 ? 0x86dd : 0x0800;
	}
	l3 = off;
	if (type == 0x0800 && (b[l3] >> 4) == 4) {
		v = 4;
		ipsum = fold(sum16(b + l3, (b[l3] & 15) * 4, 0));
		memcpy(tmp, b + l3, (b[l3] & 15) * 4);
		ipv4_csum(tmp);
		/* valid, and as IPCS or ip_send_check() writes it */
		if (ipsum != 0xffff || get16(tmp + 10) != get16(b + l3 + 10))
			return 1;
		if (b[l3 + 9] != UDP)
			return 2;
		l4 = l3 + (b[l3] & 15) * 4;
	} else if (type == 0x86dd) {
		v = 6;
		if (b[l3 + 6] != UDP)
			return 2;
		l4 = l3 + 40;
	} else {
		return 2;
	}
	ulen = get16(b + l4 + 4);
	if (l4 + ulen > len || ulen < 8)
		return 2;
	memcpy(tmp, b + l4, ulen);
	put16(tmp + 6, 0);
	c = ~fold(sum16(tmp, ulen, pseudo(b, l3, v, UDP, ulen)));
	if (c == 0 && chip && get16(b + l4 + 6) == 0) {
		*zero = true;
		return 0;
	}
	return get16(b + l4 + 6) == (c ?: 0xffff) ? 0 : 1;
}

static void group_pktgen(int kind, int count, char path, const char *name, const char *ready)
{
	static uint8_t got[MAXF];
	struct counters a, b, d;
	int len, n = 0, wrong = 0, unparsed = 0, zeros = 0;
	FILE *f;

	window_begin(&a, 0);
	f = fopen(ready, "w");
	if (f)
		fclose(f);
	for (;;) {
		bool zero = false;
		int r;

		if (recv_any(got, &len, n == count ? 1000 : 15000))
			break;
		if (len < 14 || got[6] != 0x02 || got[7] != 0x5e || got[8] || got[9] != 1 ||
		    got[11] != kind)
			continue;
		n++;
		r = check_udp(got, len, path == P_OFFLOAD, &zero);
		wrong += r == 1;
		unparsed += r == 2;
		zeros += zero;
	}
	window_end(&b);
	delta(&d, &a, &b);
	/* the script runs pktgen again (at most WINDOW_TRIES times) */
	if (b.strays)
		printf("# pktgen %s: %d frame%s of others left the port in the window (%s): not quiet\n",
		       name, b.strays, b.strays > 1 ? "s" : "", stray_what);
	tap_result(n == count && !wrong && !unparsed,
		   "pktgen %s: %d of %d frames, every UDP checksum exact (%d wrong, %d unparsed%s)",
		   name, n, count, wrong, unparsed,
		   zeros ? ", some folding to 0 and 0x0000 from the chip" : "");
	tap_result(path_ok(path, &d, count) && !d.strays,
		   "pktgen %s: %s (tx-needs-csum +%lld, tx-csum-none +%lld, tx_csum_sw +%lld, tx_dropped +%lld)%s",
		   name, path_name(path), d.needs, d.none, d.sw, d.dropped, quiet_note(&d));
}

/* ---- a tap on the port: what the driver is handed ---- */

struct tap_count {
	long frames, partial, maxlen;	/* outgoing TCP/IPv4, tags skipped */
	long requests;			/* of those, frames still CHECKSUM_PARTIAL */
	long other;			/* any other outgoing frame */
};

/* tap_take: outgoing frames into @t (NULL: only counted) until none came
 * for @ms, or for a second at most; returns how many came
 */
static int tap_port;	/* the flow's TCP port; 0: any */

static long tap_take(int fd, int ms, struct tap_count *t)
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
		ssize_t n = recvmsg(fd, &m, MSG_TRUNC) - (ssize_t)sizeof(*vh);
		long hdr, gso, l3;

		if (from.sll_pkttype != PACKET_OUTGOING)
			continue;
		got++;
		if (!t)
			continue;
		/* in-band tags (802.1Q, 802.1ad) the core pushed */
		for (l3 = 14; n >= l3 + 4 && (get16(buf + l3 - 2) == 0x8100 ||
					      get16(buf + l3 - 2) == 0x88a8); l3 += 4)
			;
		if (n < l3 + 20 || get16(buf + l3 - 2) != 0x0800 || buf[l3 + 9] != TCP) {
			t->other++;
			continue;
		}
		/* another flow's, such as an earlier flow's time-wait reply */
		hdr = l3 + (buf[l3] & 15) * 4;
		if (tap_port && (n < hdr + 4 || (get16(buf + hdr) != tap_port &&
						 get16(buf + hdr + 2) != tap_port))) {
			t->other++;
			continue;
		}
		t->frames++;
		if (vh->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) {
			/* Ethernet, IPv4 and TCP headers, then gso_size pieces */
			hdr = l3 + (buf[l3] & 15) * 4;
			hdr += n >= hdr + 13 ? (buf[hdr + 12] >> 4) * 4 : 0;
			gso = vh->gso_type != VIRTIO_NET_HDR_GSO_NONE ? vh->gso_size : 0;
			t->partial += gso && n > hdr ? (n - hdr + gso - 1) / gso : 1;
			t->requests++;
		}
		if (n > t->maxlen)
			t->maxlen = n;
	}
	return got;
}

/* tap_reading: the port's counters, read while it is quiet: 300 ms without
 * a frame (into @t; 33 tries, about 30 s at most), then a grace period, so
 * that every frame tapped so far is counted (a frame is tapped and counted
 * in one RCU-BH section); returns the frames tapped around the reading,
 * which may be counted on either side of it
 */
static long tap_reading(int fd, struct tap_count *t, struct counters *c)
{
	int rounds = 0;

	while (tap_take(fd, 300, t) && ++rounds < 33)
		;
	stray_barrier();
	read_counters(c);
	stray_barrier();
	return tap_take(fd, 0, NULL);
}

/* Prints: outgoing TCP/IPv4 frames (behind in-band tags too), the packets
 * on the wire the chip is asked to checksum for them (each frame still
 * CHECKSUM_PARTIAL, which a TCP reply from a time-wait socket is not,
 * counts as the segments its gso_size makes of it), the largest frame, the
 * tap's drops, the port's counters' deltas (tx-needs-csum, tx-csum-none,
 * tx_csum_sw, tx_dropped), the frames of others (outgoing frames not
 * TCP/IPv4 or, given a port, not to or from it, and frames tapped around a
 * reading) and the TCP/IPv4 frames
 * handed over still CHECKSUM_PARTIAL. The counters are read inside the
 * tap's window, so that every frame they count was tapped.
 */
static void tap(const char *stopfile)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL),
				   .sll_ifindex = txidx };
	int fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL)), big = 32 << 20, one = 1;
	struct tap_count t = { 0 };
	struct tpacket_stats st;
	socklen_t sl = sizeof(st);
	struct counters a, b;
	struct stat sb;
	long edge;

	if (fd < 0 || bind(fd, (void *)&sll, sizeof(sll)))
		bail("tap");
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
	if (setsockopt(fd, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof(one)))
		bail("PACKET_VNET_HDR");
	edge = tap_reading(fd, NULL, &a);
	printf("ready\n");
	fflush(stdout);
	while (stat(stopfile, &sb))
		tap_take(fd, 200, &t);
	edge += tap_reading(fd, &t, &b);
	if (getsockopt(fd, SOL_PACKET, PACKET_STATISTICS, &st, &sl))
		st.tp_drops = -1;
	printf("%ld %ld %ld %u %lld %lld %lld %lld %ld %ld\n", t.frames, t.partial, t.maxlen,
	       st.tp_drops, b.needs - a.needs, b.none - a.none, b.sw - a.sw,
	       b.dropped - a.dropped, edge + t.other, t.requests);
}

/* TCP to flow.c's receiver ("flow recv 4 tcp PORT COUNT OUT"), COUNT
 * chunks of its pattern in one send(): the stack builds GSO packets at once,
 * where flow.c's 1000-byte sends may each leave as a segment of their own.
 * With @from_file the bytes are a file's, sent with sendfile(2): the skbs
 * then carry the file's page cache pages as frags (SKBFL_SHARED_FRAG).
 */
static int bulk(const char *host, int port, long count, bool from_file)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct timeval tv = { .tv_sec = 30 };
	size_t n = count * 1000, off = 0, i;
	uint8_t *buf = malloc(n);
	int fd = socket(AF_INET, SOCK_STREAM, 0), file = -1;
	char ack;

	if (!buf || fd < 0 || inet_pton(AF_INET, host, &a.sin_addr) != 1)
		bail("bulk");
	for (i = 0; i < n; i++)
		buf[i] = (uint8_t)((i / 1000) * 7 + i % 1000);
	if (from_file) {
		file = open("/tmp", O_TMPFILE | O_RDWR, 0600);
		if (file < 0 || write(file, buf, n) != (ssize_t)n)
			bail("bulk: the file");
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (void *)&a, sizeof(a)))
		bail("connect");
	while (off < n) {
		off_t at = off;
		ssize_t w = from_file ? sendfile(fd, file, &at, n - off) :
			    send(fd, buf + off, n - off, 0);

		if (w <= 0)
			bail(from_file ? "sendfile" : "send");
		off += w;
	}
	shutdown(fd, SHUT_WR);
	if (recv(fd, &ack, 1, 0) != 1)
		bail("ack");
	close(fd);
	if (file >= 0)
		close(file);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	const char *g = argc > 1 ? argv[1] : "";
	struct ifreq ifr = { 0 };

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 3) {
		fprintf(stderr, "usage: see the comment at the top of %s\n", __FILE__);
		return 2;
	}
	if ((!strcmp(g, "bulk") || !strcmp(g, "sendfile")) && argc == 5)
		return bulk(argv[2], atoi(argv[3]), atol(argv[4]), g[0] == 's');
	txif = argv[2];
	txidx = if_nametoindex(txif);
	if (!txidx)
		bail(txif);
	nl_open();
	if (!strcmp(g, "tap") && (argc == 4 || argc == 5)) {
		if (argc == 5)
			tap_port = atoi(argv[4]);
		tap(argv[3]);
		return 0;
	}
	if (argc < 4)
		return 2;
	tx_fd = open_tx(false);
	strncpy(ifr.ifr_name, txif, IFNAMSIZ - 1);
	if (ioctl(tx_fd, SIOCGIFHWADDR, &ifr))
		bail("SIOCGIFHWADDR");
	memcpy(tx_mac, ifr.ifr_hwaddr.sa_data, 6);
	rx_fd = open_rx(argv[3]);
	if (rx_fd < 0)
		bail("rx socket in netns rx");

	if (!strcmp(g, "raw"))
		group_raw();
	else if (!strcmp(g, "bypass"))
		group_bypass();
	else if (!strcmp(g, "dgram"))
		group_dgram();
	else if (!strcmp(g, "big"))
		group_big();
	else if (!strcmp(g, "ring") && argc == 5)
		group_ring(atoi(argv[4]));
	else if (!strcmp(g, "threads") && argc == 6)
		group_threads(atoi(argv[4]) > 16 ? 16 : atoi(argv[4]), atoi(argv[5]));
	else if (!strcmp(g, "tc") && argc == 5)
		group_tc(argv[4]);
	else if (!strcmp(g, "veth") && argc == 6)
		group_veth(argv[4], argv[5]);
	else if (!strcmp(g, "pktgen") && argc == 9)
		group_pktgen(atoi(argv[4]), atoi(argv[5]), argv[6][0], argv[7], argv[8]);
	else
		return 2;
	return tap_done();
}
