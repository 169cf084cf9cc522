// SPDX-License-Identifier: GPL-2.0
// bench-ldlibs: -lbpf
/*
 * Helper of extra_xdp_frags_attack.sh, an attack on 8139cp's transmit
 * decision and fragment mapping (patches net/0004, 0006, 0007); not named
 * extra_*, so that a TESTS='extra_xdp*' glob does not run it as a test:
 *
 *   xdp_frags_attack reflect TXIF RXIF OBJ PROG NAME SEG TS CWR BURSTS EXPECT
 *        Generic XDP XDP_TX on the 8139cp port TXIF: PROG of OBJ
 *        (extra_xdp_reflect.bpf.o) is attached in skb mode and reflects the
 *        attack's TCP frames. The e1000 peer RXIF (netns "rx") sends
 *        packet-socket GSO frames to the port, one a burst, of SEG payload
 *        bytes a segment (TS 1: with a timestamps option), BURSTS (a comma
 *        list) segments each; CWR 1 sets CWR on each burst's first
 *        segment. The peer's own core segments them (TSO is off there) and
 *        its e1000 sends a burst in one go, so that GRO on the 8139cp
 *        receive path can build GSO packets of them; the program logs each
 *        frame it reflects. What comes back to the peer is captured and
 *        compared byte for byte with what was sent (MACs, addresses and
 *        ports swapped), and the port's counters (tx-needs-csum,
 *        tx-csum-none, tx_csum_sw, tx_dropped) with what the logged frames
 *        call for. EXPECT says what a GRO packet must become:
 *          L  LargeSend: its segments, exactly the ones sent
 *          C  LargeSend at another cut (QEMU's chip cuts at 1500 bytes
 *             whatever the MSS): every payload byte once, every frame's
 *             headers and checksums right
 *          D  dropped and counted in tx_dropped, nothing of it sent
 *          E  either L or D, each GRO packet whole
 *        TAP on stdout.
 *
 *   xdp_frags_attack tcp 4|6 ADDR PORT MODE BYTES
 *        BYTES (a multiple of 1000) of flow.c's pattern over TCP to
 *        "flow recv", sent so that the skbs carry many fragments:
 *          sendfile  sendfile(2) of a file (page cache frags)
 *          splice    splice(2) of a file through a pipe
 *          vmsplice  user pieces of 700 to 3000 bytes at odd page offsets,
 *                    vmspliced into a pipe and spliced to the socket
 *          zerocopy  MSG_ZEROCOPY sendmsg() of 16 such pieces at a time
 *          msgmore   send() of 1 to 1400 bytes at a time with MSG_MORE
 *        Prints "# MSG_ZEROCOPY: ..." for zerocopy; exit 0 when the
 *        receiver acknowledged the end.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_link.h>
#include <linux/if_packet.h>
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

#define MAXSEGS		512
#define MAXSEG		4096
#define MAXFRAME	(14 + 60 + 60 + MAXSEG)
#define GSOMAX		(14 + 60 + 65536)

/* the stats map of extra_xdp_reflect.bpf.c */
enum {
	ST_FRAMES, ST_GRO, ST_BYTES, ST_GRO_BYTES, ST_PAGED, ST_GRO_CWR, ST_MAXLEN, ST_SEG,
	ST_MAX,
};
#define LOG_SIZE	1024

static void die(const char *what)
{
	fprintf(stderr, "xdp_frags_attack: %s: %s\n", what, strerror(errno));
	exit(2);
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

/* ---- the reflection case ---- */

static struct {
	const char *name;
	int seg, thl, cwr, bursts[64], nb, nsegs;
	char expect;
	uint16_t sport, dport, id0;
	uint32_t isn, ack, tsval;
} rc;

static uint8_t tx_mac[6], rx_mac[6];
static int rx_fd = -1, snd_fd = -1, rx_idx;

/* one segment as the peer's core puts it on the wire (what software GSO
 * makes of the burst's GSO frame); @first: the first of its burst
 */
static int seg_frame(int g, bool first, uint8_t *f)
{
	uint8_t *ip = f + 14, *th = ip + 20;
	int i, l4len = rc.thl + rc.seg;

	memset(f, 0, 14 + 20 + rc.thl);
	memcpy(f, tx_mac, 6);
	memcpy(f + 6, rx_mac, 6);
	put16(f + 12, 0x0800);
	ip[0] = 0x45;
	put16(ip + 2, 20 + l4len);
	put16(ip + 4, (uint16_t)(rc.id0 + g));
	ip[6] = 0x40;			/* DF */
	ip[8] = 64;
	ip[9] = 6;
	ip[12] = 198; ip[13] = 51; ip[14] = 100; ip[15] = 1;
	ip[16] = 198; ip[17] = 51; ip[18] = 100; ip[19] = 2;
	ipv4_csum(ip);
	put16(th, rc.sport);
	put16(th + 2, rc.dport);
	put32(th + 4, rc.isn + (uint32_t)g * rc.seg);
	put32(th + 8, rc.ack);
	th[12] = (rc.thl / 4) << 4;
	th[13] = 0x10 | (rc.cwr && first ? 0x80 : 0);	/* ACK (CWR) */
	put16(th + 14, 502);
	if (rc.thl == 32) {			/* NOP NOP timestamps */
		th[20] = 1; th[21] = 1; th[22] = 8; th[23] = 10;
		put32(th + 24, rc.tsval);
		put32(th + 28, rc.tsval ^ 0x5a5a);
	}
	for (i = 0; i < rc.seg; i++)
		th[rc.thl + i] = pattern((unsigned long)g * rc.seg + i);
	put16(th + 16, ~fold(sum16(th, l4len, pseudo(f, 14, 4, 6, l4len))));
	return 14 + 20 + l4len;
}

/* MACs, addresses and ports swapped, as the program sends it back */
static void swap_frame(uint8_t *f)
{
	uint8_t t[6];

	memcpy(t, f, 6); memcpy(f, f + 6, 6); memcpy(f + 6, t, 6);
	memcpy(t, f + 26, 4); memcpy(f + 26, f + 30, 4); memcpy(f + 30, t, 4);
	memcpy(t, f + 34, 2); memcpy(f + 34, f + 36, 2); memcpy(f + 36, t, 2);
}

/* the burst of @k segments from segment @g0 as one frame for the peer's
 * packet socket: a GSO frame (a plain one for one segment) with a
 * virtio-net header asking for the TCP checksum
 */
static int burst_frame(int g0, int k, uint8_t *buf)
{
	struct virtio_net_hdr *vh = (void *)buf;
	uint8_t *f = buf + sizeof(*vh), *ip = f + 14, *th = ip + 20;
	int i, l4len = rc.thl + k * rc.seg;

	memset(vh, 0, sizeof(*vh));
	seg_frame(g0, true, f);
	put16(ip + 2, 20 + l4len);
	ipv4_csum(ip);
	for (i = 0; i < k * rc.seg; i++)
		th[rc.thl + i] = pattern((unsigned long)g0 * rc.seg + i);
	/* the stack's seed: the pseudo-header sum with the whole length */
	put16(th + 16, pseudo(f, 14, 4, 6, l4len));
	vh->flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
	vh->csum_start = 34;
	vh->csum_offset = 16;
	if (k > 1) {
		vh->gso_type = VIRTIO_NET_HDR_GSO_TCPV4 | (rc.cwr ? VIRTIO_NET_HDR_GSO_ECN : 0);
		vh->gso_size = rc.seg;
		vh->hdr_len = 34 + rc.thl;
	}
	return sizeof(*vh) + 14 + 20 + l4len;
}

/* the peer's sockets on RXIF in netns rx: one that sends, one that takes
 * what comes back (IPv4 from 198.51.100.2, for the host)
 */
static int peer_open(const char *rxif)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, SKF_AD_OFF + SKF_AD_PKTTYPE),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PACKET_HOST, 0, 5),
		BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 12),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x0800, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 26),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0xc6336402, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, 0x40000),
		BPF_STMT(BPF_RET | BPF_K, 0),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL) };
	int self = open("/proc/self/ns/net", O_RDONLY), big = 32 << 20, one = 1;
	socklen_t sl = sizeof(sll);

	if (self < 0 || setns_path("/var/run/netns/rx"))
		return -1;
	rx_idx = if_nametoindex(rxif);
	rx_fd = socket(AF_PACKET, SOCK_RAW, 0);
	snd_fd = socket(AF_PACKET, SOCK_RAW, 0);
	sll.sll_ifindex = rx_idx;
	if (!rx_idx || rx_fd < 0 || snd_fd < 0 ||
	    setsockopt(rx_fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)) ||
	    bind(rx_fd, (void *)&sll, sizeof(sll)) || getsockname(rx_fd, (void *)&sll, &sl) ||
	    sll.sll_halen != 6 ||
	    setsockopt(snd_fd, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof(one)))
		return -1;
	setsockopt(rx_fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
	setsockopt(snd_fd, SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof(big));
	memcpy(rx_mac, sll.sll_addr, 6);
	if (setns(self, CLONE_NEWNET))
		return -1;
	close(self);
	return 0;
}

static int read_mac(const char *ifname, uint8_t *mac)
{
	char path[128];
	unsigned int m[6];
	FILE *f;
	int i, n;

	snprintf(path, sizeof(path), "/sys/class/net/%s/address", ifname);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fscanf(f, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5]);
	fclose(f);
	for (i = 0; i < 6; i++)
		mac[i] = m[i];
	return n == 6 ? 0 : -1;
}

/* what came back: per segment, how often it arrived and whether exact */
static struct {
	int arrived[MAXSEGS], exact[MAXSEGS];
	int extra, dup, bad;
	char why[160];
	/* coverage (EXPECT C): each payload byte's arrivals */
	uint8_t *cover;
	int frames;
} got;

static void note_bad(const char *fmt, int g, int off)
{
	got.bad++;
	if (!got.why[0])
		snprintf(got.why, sizeof(got.why), fmt, g, off);
}

/* a frame off the peer's port: one of the case's? compare it */
static void take_frame(const uint8_t *b, int n)
{
	static uint8_t want[MAXFRAME];
	const uint8_t *ip = b + 14, *th = ip + 20;
	uint32_t off;
	int g, i, thl, plen;

	if (n < 54 || ip[0] != 0x45 || ip[9] != 6 || get16(th) != rc.dport ||
	    get16(th + 2) != rc.sport)
		return;			/* not this try's */
	got.frames++;
	off = get32(th + 4) - rc.isn;
	if (rc.expect == 'C') {
		uint16_t ipsum = fold(sum16(ip, 20, 0)), tsum;
		int l4len = get16(ip + 2) - 20;

		thl = (th[12] >> 4) * 4;
		plen = l4len - thl;
		if (l4len < thl || 14 + 20 + l4len != n) {
			note_bad("a frame whose length is not its IPv4 total length (at %d, %d)", 0, n);
			return;
		}
		tsum = fold(sum16(th, l4len, pseudo(b, 14, 4, 6, l4len)));
		if (ipsum != 0xffff || tsum != 0xffff) {
			got.bad++;
			if (!got.why[0])
				snprintf(got.why, sizeof(got.why),
					 "a frame with a wrong %s checksum (payload offset %u)",
					 ipsum != 0xffff ? "IPv4 header" : "TCP", off);
			return;
		}
		if (th[13] != 0x10 || get32(th + 8) != rc.ack || thl != rc.thl) {
			note_bad("a frame with other TCP flags, ack or header (%d, %d)", th[13], thl);
			return;
		}
		if ((long)off + plen > (long)rc.nsegs * rc.seg || plen <= 0) {
			got.extra++;
			return;
		}
		for (i = 0; i < plen; i++) {
			if (th[thl + i] != pattern(off + i))
				note_bad("payload byte %d of the frame at offset %d differs", i,
					 (int)off);
			if (got.cover[off + i]++)
				got.dup++;
		}
		return;
	}
	if (off % rc.seg || off / rc.seg >= (uint32_t)rc.nsegs) {
		got.extra++;
		return;
	}
	g = off / rc.seg;
	if (got.arrived[g]++) {
		got.dup++;
		return;
	}
	{
		/* the first segment of a burst is the one that carries CWR */
		int s = 0, k;
		bool first = false;

		for (k = 0; k < rc.nb && s <= g; s += rc.bursts[k++])
			if (s == g)
				first = true;
		if (seg_frame(g, first, want) != n) {
			note_bad("segment %d came back %d bytes long", g, n);
			return;
		}
	}
	swap_frame(want);
	for (i = 0; i < n && b[i] == want[i]; i++)
		;
	/* a TCP sum folding to zero: 0x0000 from one summer, 0xffff from
	 * another, both right
	 */
	if (i == 50 && !memcmp(b + 52, want + 52, n - 52) &&
	    (get16(b + 50) ^ get16(want + 50)) == 0xffff &&
	    (get16(b + 50) == 0 || get16(b + 50) == 0xffff))
		i = n;
	if (i == n) {
		got.exact[g] = 1;
		return;
	}
	if (i == 47 && (b[i] & 0x80) && !(want[i] & 0x80)) {
		/* the same segment with CWR set, summed again */
		uint8_t *th2 = want + 34;
		int l4len = n - 34;

		th2[13] |= 0x80;
		put16(th2 + 16, 0);
		put16(th2 + 16, ~fold(sum16(th2, l4len, pseudo(want, 14, 4, 6, l4len))));
		if (!memcmp(b, want, n)) {
			note_bad("segment %d came back with CWR, which it was sent without (TCP flags, byte %d)",
				 g, i);
			return;
		}
	}
	note_bad("segment %d came back changed from byte %d on", g, i);
}

static void drain(int quiet_ms, int max_ms)
{
	static uint8_t b[GSOMAX];
	struct pollfd p = { .fd = rx_fd, .events = POLLIN };
	struct timespec t0, last;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	last = t0;
	while (ms_since(&t0) < max_ms && ms_since(&last) < quiet_ms) {
		ssize_t n;

		if (poll(&p, 1, 50) <= 0)
			continue;
		while ((n = recv(rx_fd, b, sizeof(b), MSG_DONTWAIT)) > 0) {
			take_frame(b, n);
			clock_gettime(CLOCK_MONOTONIC, &last);
		}
	}
}

static int map_fd(struct bpf_object *obj, const char *name)
{
	struct bpf_map *m = bpf_object__find_map_by_name(obj, name);

	return m ? bpf_map__fd(m) : -1;
}

static void map_reset(int fd, int n)
{
	uint64_t z = 0;
	uint32_t k;

	for (k = 0; k < (uint32_t)n; k++)
		bpf_map_update_elem(fd, &k, &z, BPF_ANY);
}

static uint64_t map_get(int fd, uint32_t k)
{
	uint64_t v = 0;

	if (bpf_map_lookup_elem(fd, &k, &v))
		return (uint64_t)-1;
	return v;
}

static int reflect(char **argv)
{
	static uint8_t buf[sizeof(struct virtio_net_hdr) + GSOMAX];
	const char *rxif = argv[3], *objpath = argv[4], *progname = argv[5];
	struct sockaddr_ll to = { .sll_family = AF_PACKET, .sll_protocol = htons(0x0800) };
	uint64_t st[ST_MAX];
	static uint64_t logv[LOG_SIZE];
	static int covered[MAXSEGS], gro_of[MAXSEGS];
	struct bpf_object *obj;
	struct bpf_program *prog, *p;
	struct counters a = { 0 }, b = { 0 };
	int stats, logfd, try, i, k, g, n, err;
	char *s, *tok;
	bool frags = !!strstr(progname, "frags");

	rc.name = argv[6];
	rc.seg = atoi(argv[7]);
	rc.thl = atoi(argv[8]) ? 32 : 20;
	rc.cwr = atoi(argv[9]);
	rc.expect = argv[11][0];
	for (s = argv[10]; (tok = strtok(s, ",")) && rc.nb < 64; s = NULL) {
		rc.bursts[rc.nb] = atoi(tok);
		rc.nsegs += rc.bursts[rc.nb++];
	}
	if (rc.seg < 1 || rc.seg > MAXSEG || rc.nsegs > MAXSEGS || !strchr("LCDE", rc.expect)) {
		fprintf(stderr, "xdp_frags_attack: bad case\n");
		return 2;
	}
	for (i = 0; i < rc.nb; i++)
		if (rc.bursts[i] < 1 || 34 + rc.thl + rc.bursts[i] * rc.seg > 65535) {
			fprintf(stderr, "xdp_frags_attack: a burst of %d does not fit\n", rc.bursts[i]);
			return 2;
		}
	got.cover = calloc((size_t)rc.nsegs * rc.seg, 1);

	txif = argv[2];
	txidx = if_nametoindex(txif);
	if (!txidx || read_mac(txif, tx_mac)) {
		printf("Bail out! no %s\n", txif);
		return 1;
	}
	nl_open();
	if (peer_open(rxif)) {
		printf("Bail out! no packet sockets on %s in netns rx: %s\n", rxif, strerror(errno));
		return 1;
	}
	to.sll_ifindex = rx_idx;

	libbpf_set_strict_mode(LIBBPF_STRICT_ALL);
	obj = bpf_object__open_file(objpath, NULL);
	if (!obj) {
		printf("Bail out! cannot open %s: %s\n", objpath, strerror(errno));
		return 1;
	}
	prog = bpf_object__find_program_by_name(obj, progname);
	if (!prog) {
		printf("Bail out! no program %s in %s\n", progname, objpath);
		return 1;
	}
	bpf_object__for_each_program(p, obj)
		bpf_program__set_autoload(p, p == prog);
	err = bpf_object__load(obj);
	if (err) {
		printf("Bail out! cannot load %s: %s\n", objpath, strerror(-err));
		return 1;
	}
	stats = map_fd(obj, "xdp_reflect_stats");
	logfd = map_fd(obj, "xdp_reflect_log");
	err = bpf_xdp_attach(txidx, bpf_program__fd(prog), XDP_FLAGS_SKB_MODE, NULL);
	if (stats < 0 || logfd < 0 || err) {
		printf("Bail out! cannot attach %s to %s in skb mode: %s\n", progname, txif,
		       strerror(-err));
		return 1;
	}

	srand(getpid() ^ time(NULL));
	for (try = 1; try <= WINDOW_TRIES; try++) {
		memset(got.arrived, 0, sizeof(got.arrived));
		memset(got.exact, 0, sizeof(got.exact));
		memset(got.cover, 0, (size_t)rc.nsegs * rc.seg);
		got.extra = got.dup = got.bad = got.frames = 0;
		got.why[0] = 0;
		rc.sport = 20000 + rand() % 20000;
		rc.dport = 9;
		rc.id0 = rand();
		rc.isn = (uint32_t)rand() << 1;
		rc.ack = rand();
		rc.tsval = rand();
		map_reset(stats, ST_MAX);
		map_reset(logfd, LOG_SIZE);
		k = ST_SEG;
		{
			uint64_t v = rc.seg;

			bpf_map_update_elem(stats, &k, &v, BPF_ANY);
		}
		drain(200, 2000);	/* an earlier try's tail */
		window_begin(&a, 0);
		for (i = 0, g = 0; i < rc.nb; g += rc.bursts[i++]) {
			n = burst_frame(g, rc.bursts[i], buf);
			if (sendto(snd_fd, buf, n, 0, (void *)&to, sizeof(to)) != n) {
				printf("Bail out! the peer cannot send a burst of %d: %s\n", rc.bursts[i],
				       strerror(errno));
				bpf_xdp_detach(txidx, XDP_FLAGS_SKB_MODE, NULL);
				return 1;
			}
			/* one burst at a time: the receive ring has room for
			 * it, and GRO sees it in one poll
			 */
			drain(150, 3000);
		}
		drain(1000, 10000);
		window_end(&b);
		if (!b.strays)
			break;
		printf("# %s: try %d: %d frame%s of others left the port in the window (%s): again\n",
		       rc.name, try, b.strays, b.strays > 1 ? "s" : "", stray_what);
	}
	for (k = 0; k < ST_MAX; k++)
		st[k] = map_get(stats, k);
	for (k = 0; k < LOG_SIZE && k < (int)st[ST_FRAMES]; k++)
		logv[k] = map_get(logfd, k);
	bpf_xdp_detach(txidx, XDP_FLAGS_SKB_MODE, NULL);

	/* what the program reflected, frame by frame */
	{
		long frames = st[ST_FRAMES], gro = 0, single = 0, strange = 0, gro_segs = 0;
		long sent_gro = 0, dropped_gro = 0, sent_gro_segs = 0, partial = 0;
		long need_needs, need_none, need_drop;
		bool all_once = frames <= LOG_SIZE;
		char what[200];

		memset(covered, 0, sizeof(covered));
		for (k = 0; k < frames && k < LOG_SIZE; k++) {
			uint32_t off = (uint32_t)(logv[k] >> 32) - rc.isn, len = (uint32_t)logv[k];
			int g0 = off / rc.seg, m = len / rc.seg;

			if (off % rc.seg || len % rc.seg || !m || g0 + m > rc.nsegs) {
				strange++;
				all_once = false;
				continue;
			}
			for (g = g0; g < g0 + m; g++) {
				covered[g]++;
				gro_of[g] = m > 1 ? k + 1 : 0;
			}
			if (m == 1) {
				single++;
				continue;
			}
			gro++;
			gro_segs += m;
			/* E: the packet went out whole, or not at all */
			for (n = 0, g = g0; g < g0 + m; g++)
				n += got.arrived[g] > 0;
			if (n == m) {
				sent_gro++;
				sent_gro_segs += m;
			} else if (!n) {
				dropped_gro++;
			} else {
				partial++;
			}
		}
		for (g = 0; g < rc.nsegs; g++)
			all_once &= covered[g] == 1;
		tap_result(all_once && !strange,
			   "%s: every segment the peer sent reached the XDP program once (%d segments in %ld frames%s)",
			   rc.name, rc.nsegs, frames, strange ? ", some not on segment bounds" : "");
		if (!all_once)
			for (g = 0; g < rc.nsegs; g++)
				if (covered[g] != 1) {
					printf("# segment %d reached the program %d times\n", g, covered[g]);
					break;
				}
		if (gro)
			tap_result(gro == (long)st[ST_GRO],
				   "%s: GRO built GSO packets on the 8139cp receive path (%ld of %ld frames, %ld segments; largest %llu bytes; %llu with CWR)",
				   rc.name, gro, frames, gro_segs, (unsigned long long)st[ST_MAXLEN],
				   (unsigned long long)st[ST_GRO_CWR]);
		else
			printf("ok %d - %s: GRO built GSO packets on the 8139cp receive path # SKIP GRO did not coalesce here: all %ld frames came one segment each (the GSO assertions below hold for none)\n",
			       ++tap_n, rc.name, frames);
		fflush(stdout);

		/* what must have come back */
		switch (rc.expect) {
		case 'L':
			for (n = 0, g = 0; g < rc.nsegs; g++)
				n += got.arrived[g] == 1 && got.exact[g];
			tap_result(n == rc.nsegs && !got.dup && !got.extra && !got.bad,
				   "%s: the peer got every segment back once, byte for byte as sent (%d of %d exact, %d duplicates, %d others, %d changed%s%s)",
				   rc.name, n, rc.nsegs, got.dup, got.extra, got.bad,
				   got.why[0] ? ": " : "", got.why);
			need_needs = gro_segs;
			need_drop = 0;
			break;
		case 'D':
			for (n = 0, k = 0, g = 0; g < rc.nsegs; g++) {
				if (gro_of[g])
					k += got.arrived[g] > 0;
				else
					n += got.arrived[g] == 1 && got.exact[g];
			}
			tap_result(n == single && !k && !got.dup && !got.extra && !got.bad,
				   "%s: the peer got back exactly the %ld segments GRO left alone, byte for byte, and nothing of the %ld GRO packets (%d exact, %d segments of GRO packets, %d duplicates, %d others, %d changed%s%s)",
				   rc.name, single, gro, n, k, got.dup, got.extra, got.bad,
				   got.why[0] ? ": " : "", got.why);
			need_needs = 0;
			need_drop = gro;
			break;
		case 'E':
			for (n = 0, g = 0; g < rc.nsegs; g++)
				n += got.arrived[g] == 1 && got.exact[g];
			tap_result(n == single + sent_gro_segs && !partial && !got.dup && !got.extra &&
				   !got.bad,
				   "%s: each GRO packet came back whole and byte for byte as sent, or not at all; every other segment as sent (%ld GRO packets sent, %ld not, %ld in part; %d exact of %ld; %d duplicates, %d others, %d changed%s%s)",
				   rc.name, sent_gro, dropped_gro, partial, n, single + sent_gro_segs,
				   got.dup, got.extra, got.bad, got.why[0] ? ": " : "", got.why);
			need_needs = sent_gro_segs;
			need_drop = dropped_gro;
			break;
		default: /* C */
			for (n = 0, i = 0; i < rc.nsegs * rc.seg; i++)
				n += got.cover[i] == 1;
			tap_result(n == rc.nsegs * rc.seg && !got.dup && !got.extra && !got.bad,
				   "%s: every payload byte came back once, in %d frames with right headers and checksums (%d of %d bytes; %d again, %d others, %d bad%s%s)",
				   rc.name, got.frames, n, rc.nsegs * rc.seg, got.dup, got.extra,
				   got.bad, got.why[0] ? ": " : "", got.why);
			need_needs = gro_segs;
			need_drop = 0;
			break;
		}
		need_none = frames - gro;
		snprintf(what, sizeof(what), "%lld %lld %lld %lld", b.needs - a.needs,
			 b.none - a.none, b.sw - a.sw, b.dropped - a.dropped);
		{
			char want[100];

			snprintf(want, sizeof(want), "%ld %ld 0 %ld", need_needs, need_none, need_drop);
			tap_result(!strcmp(what, want) && !b.strays,
				   "%s: tx-needs-csum, tx-csum-none, tx_csum_sw, tx_dropped +%s, as the reflected frames call for (want +%s)%s",
				   rc.name, what, want,
				   b.strays ? "; frames of others in every window" : "");
		}
		if (frags) {
			/* the core copies a packet past ~3.5 KB into page-pool
			 * frags for an xdp.frags program
			 */
			long big = 0;

			for (k = 0; k < frames && k < LOG_SIZE; k++)
				big += (uint32_t)logv[k] >= 8192;
			if (big)
				tap_result(st[ST_PAGED] >= (uint64_t)big,
					   "%s: packets reached the program and the driver in page-pool frags (%llu paged, %ld of 8 KB or more)",
					   rc.name, (unsigned long long)st[ST_PAGED], big);
		} else {
			tap_result(st[ST_PAGED] == 0,
				   "%s: the core linearised every packet for the linear program (%llu paged)",
				   rc.name, (unsigned long long)st[ST_PAGED]);
		}
	}
	return 0;
}

/* ---- the fragment flows ---- */

/* the stream cut into pieces of 700 to 3000 bytes, each at its own odd
 * offset in its own pages of @area (which it fills with the pattern)
 */
struct piece {
	uint8_t *p;
	size_t len;
};

static struct piece *pieces(size_t total, int *count, uint8_t **area)
{
	size_t n = total / 700 + 2, pos = 0, len;
	struct piece *pc = calloc(n, sizeof(*pc));
	uint8_t *base = aligned_alloc(4096, n * 8192);
	int i = 0, j;

	if (!pc || !base)
		die("pieces");
	while (pos < total) {
		len = 700 + (size_t)(i * 577) % 2301;
		if (len > total - pos)
			len = total - pos;
		/* from 1 to 4093 bytes into the first of its two pages */
		pc[i].p = base + (size_t)i * 8192 + 1 + (size_t)(i * 1237) % 4093;
		pc[i].len = len;
		for (j = 0; j < (int)len; j++)
			pc[i].p[j] = pattern(pos + j);
		pos += len;
		i++;
	}
	*count = i;
	*area = base;
	return pc;
}

static int tcp_send(int family, const char *host, int port, const char *mode, size_t total)
{
	struct sockaddr_storage ss;
	socklen_t sl = make_addr(family, host, port, &ss);
	int fd = make_socket(family, SOCK_STREAM, 60), one = 1, i, np;
	uint8_t *area;
	size_t pos = 0;

	if (!strcmp(mode, "zerocopy") && setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one)))
		die("SO_ZEROCOPY");
	if (connect(fd, (struct sockaddr *)&ss, sl))
		die("connect");

	if (!strcmp(mode, "sendfile") || !strcmp(mode, "splice")) {
		int file = open("/tmp", O_TMPFILE | O_RDWR, 0600), p[2];
		uint8_t *buf = malloc(total);
		off_t off = 0;

		if (file < 0 || !buf)
			die("the file");
		for (pos = 0; pos < total; pos++)
			buf[pos] = pattern(pos);
		if (write(file, buf, total) != (ssize_t)total)
			die("the file");
		free(buf);
		if (mode[1] == 'e') {
			while ((size_t)off < total)
				if (sendfile(fd, file, &off, total - off) <= 0)
					die("sendfile");
		} else {
			if (pipe(p))
				die("pipe");
			while ((size_t)off < total) {
				ssize_t in = splice(file, &off, p[1], NULL, total - off, SPLICE_F_MORE);

				if (in <= 0)
					die("splice from the file");
				splice_all(p[0], fd, in, SPLICE_F_MORE, "splice to the socket");
			}
			close(p[0]);
			close(p[1]);
		}
		close(file);
	} else if (!strcmp(mode, "vmsplice")) {
		struct piece *pc = pieces(total, &np, &area);
		int p[2];

		if (pipe(p))
			die("pipe");
		for (i = 0; i < np; i++) {
			struct iovec iov = { .iov_base = pc[i].p, .iov_len = pc[i].len };

			while (iov.iov_len) {
				ssize_t in = vmsplice(p[1], &iov, 1, 0);

				if (in <= 0)
					die("vmsplice");
				iov.iov_base = (uint8_t *)iov.iov_base + in;
				iov.iov_len -= in;
				splice_all(p[0], fd, in, i + 1 < np ? SPLICE_F_MORE : 0, "splice");
			}
		}
		close(p[0]);
		close(p[1]);
	} else if (!strcmp(mode, "zerocopy")) {
		struct piece *pc = pieces(total, &np, &area);
		struct iovec iov[16];

		for (i = 0; i < np;) {
			struct msghdr m = { .msg_iov = iov };
			int j, tries;
			ssize_t w;

			for (j = 0; j < 16 && i + j < np; j++)
				iov[j] = (struct iovec){ .iov_base = pc[i + j].p,
							 .iov_len = pc[i + j].len };
			m.msg_iovlen = j;
			for (tries = 0; (w = sendmsg(fd, &m, MSG_ZEROCOPY)) < 0 && errno == ENOBUFS &&
			     tries < 300; tries++)
				zc_drain(fd, 100);
			if (w <= 0)
				die("sendmsg MSG_ZEROCOPY");
			/* a short send: go on from where it stopped */
			while (w > 0 && i < np) {
				if ((size_t)w >= pc[i].len) {
					w -= pc[i].len;
					i++;
				} else {
					pc[i].p += w;
					pc[i].len -= w;
					w = 0;
				}
			}
			zc_drain(fd, 0);
		}
	} else if (!strcmp(mode, "msgmore")) {
		uint8_t buf[1400];

		for (i = 0; pos < total; i++) {
			size_t len = 1 + (size_t)(i * 331) % 1400;
			ssize_t w;
			int j;

			if (len > total - pos)
				len = total - pos;
			for (j = 0; j < (int)len; j++)
				buf[j] = pattern(pos + j);
			w = send(fd, buf, len, pos + len < total && i % 50 != 49 ? MSG_MORE : 0);
			if (w <= 0)
				die("send");
			pos += w;
		}
	} else {
		fprintf(stderr, "xdp_frags_attack: unknown mode %s\n", mode);
		return 2;
	}
	stream_end(fd, !strcmp(mode, "zerocopy"), 500);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(c, "reflect") && argc == 12) {
		int r = reflect(argv);

		return r ? r : tap_done();
	}
	if (!strcmp(c, "tcp") && argc == 7)
		return tcp_send(atoi(argv[2]) == 6 ? AF_INET6 : AF_INET, argv[3], atoi(argv[4]),
				argv[5], strtoul(argv[6], NULL, 10));
	fprintf(stderr, "usage: see the comment at the top of %s\n", __FILE__);
	return 2;
}
