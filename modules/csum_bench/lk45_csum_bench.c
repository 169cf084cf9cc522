// SPDX-License-Identifier: GPL-2.0
/*
 * Same-boot cost ratios for the checksum offload helpers, printed at load:
 *
 *  - per packet, skb_csum_offload_chk_help() with the spec of a device that
 *    checksums TCP/UDP over IPv4 and IPv6, against skb_csum_hwoffload_help()
 *    with the features such a device advertises today (IP_CSUM|IPV6_CSUM,
 *    none for an encapsulated packet, as netif_skb_features() masks them),
 *    on TCP/IPv4, TCP/IPv6 with two extension headers and TCP in VXLAN; and
 *    on TCP/IPv4 with the spec of a device that computes the checksum its
 *    own way (8139cp's: own pseudo-header, sum to tot_len, IPv4 header
 *    checksum rewritten), whose extra checks are the price of offloading
 *    only what it computes exactly;
 *  - the software fallback (the helper with help minus the helper
 *    without) against a bare csum_partial() over the same bytes, and
 *    6.12's skb_checksum_help() for reference.
 *
 * Each measurement restores the packet and is repeated in alternating
 * rounds; the cost of the restore alone is measured and subtracted. Under
 * TCG the absolute numbers mean nothing, the ratios do.
 */
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/sort.h>
#include <linux/unaligned.h>
#include <net/checksum.h>
#include <net/ipv6.h>

static unsigned int iters = 20000;
module_param(iters, uint, 0444);
MODULE_PARM_DESC(iters, "packets per round");

#define ROUNDS	11
#define PAYLOAD	1000

enum kind { TCP4, TCP6_EXT, VXLAN, TCP4_OWN, NR_KINDS };
static const char *const kind_name[] = {
	"TCP/IPv4", "TCP/IPv6+2 ext hdrs", "TCP/IPv4 in VXLAN", "TCP/IPv4, IP_CSUM-style spec",
};

struct bench_pkt {
	struct sk_buff *skb;
	unsigned int start;	/* csum_start offset from data */
	u16 field;		/* original checksum field */
};

static void put_ipv4(u8 *h, u8 proto, unsigned int rest)
{
	h[0] = 0x45;
	put_unaligned_be16(20 + rest, h + 2);
	h[8] = 64;
	h[9] = proto;
	h[12] = 198; h[13] = 18; h[15] = 1;
	h[16] = 198; h[17] = 18; h[19] = 2;
	put_unaligned((__force u16)ip_fast_csum(h, 5), (u16 *)(h + 10));
}

static int build(struct bench_pkt *b, enum kind k)
{
	unsigned int off = 14, l4len = 20 + PAYLOAD, len, i;
	struct sk_buff *skb;
	u8 *p;

	len = 14 + (k == TCP6_EXT ? 40 + 16 : 20) +
	      (k == VXLAN ? 8 + 8 + 14 + 20 : 0) + l4len;
	skb = alloc_skb(len + 64, GFP_KERNEL);
	if (!skb)
		return -ENOMEM;
	skb_reserve(skb, 64);
	p = skb_put_zero(skb, len);
	skb_reset_mac_header(skb);
	put_unaligned_be16(k == TCP6_EXT ? ETH_P_IPV6 : ETH_P_IP, p + 12);
	skb->protocol = k == TCP6_EXT ? htons(ETH_P_IPV6) : htons(ETH_P_IP);
	skb_set_network_header(skb, off);
	if (k == TCP6_EXT) {
		p[off] = 0x60;
		put_unaligned_be16(16 + l4len, p + off + 4);
		p[off + 6] = NEXTHDR_HOP;
		p[off + 7] = 64;
		off += 40;
		p[off] = NEXTHDR_DEST;		/* hop-by-hop, PadN */
		p[off + 2] = 1;
		p[off + 3] = 4;
		p[off + 8] = IPPROTO_TCP;	/* destination options, PadN */
		p[off + 10] = 1;
		p[off + 11] = 4;
		off += 16;
	} else if (k == VXLAN) {
		put_ipv4(p + off, IPPROTO_UDP, 8 + 8 + 14 + 20 + l4len);
		off += 20;
		skb_set_transport_header(skb, off);
		p[off + 2] = 0x12;		/* port 4789 */
		p[off + 3] = 0xb5;
		off += 16;
		skb->encapsulation = 1;
		skb_set_inner_mac_header(skb, off);
		skb_set_inner_protocol(skb, htons(ETH_P_TEB));
		p[off + 12] = 0x08;
		off += 14;
		skb_set_inner_network_header(skb, off);
		put_ipv4(p + off, IPPROTO_TCP, l4len);
		off += 20;
		skb_set_inner_transport_header(skb, off);
	} else {
		put_ipv4(p + off, IPPROTO_TCP, l4len);
		off += 20;
	}
	if (k != VXLAN)
		skb_set_transport_header(skb, off);
	p[off + 12] = 5 << 4;
	for (i = 20; i < l4len; i++)
		p[off + i] = i * 13;
	b->skb = skb;
	b->start = off;
	/* the stack's seed; a device with its own pseudo-header wants it */
	b->field = k == TCP4_OWN ?
		(__force u16)~csum_tcpudp_magic(htonl(0xc6120001), htonl(0xc6120002),
						 l4len, IPPROTO_TCP, 0) : 0x1234;
	return 0;
}

static inline void restore(struct bench_pkt *b)
{
	struct sk_buff *skb = b->skb;

	skb->ip_summed = CHECKSUM_PARTIAL;
	skb->csum_start = skb_headroom(skb) + b->start;
	skb->csum_offset = offsetof(struct tcphdr, check);
	*(u16 *)(skb->data + b->start + 16) = b->field;
}

static const struct skb_csum_offl_spec spec_v4v6 = {
	.flags = SKB_CSUM_OFFL_IPV4 | SKB_CSUM_OFFL_IPV6 | SKB_CSUM_OFFL_IP_OPTIONS |
		 SKB_CSUM_OFFL_TCP | SKB_CSUM_OFFL_UDP | SKB_CSUM_OFFL_VLAN,
};

static const struct skb_csum_offl_spec spec_own = {
	.flags = SKB_CSUM_OFFL_IPV4 | SKB_CSUM_OFFL_IP_OPTIONS | SKB_CSUM_OFFL_TCP |
		 SKB_CSUM_OFFL_UDP | SKB_CSUM_OFFL_OWN_PSEUDO_HDR |
		 SKB_CSUM_OFFL_SUMS_TO_IP_LEN | SKB_CSUM_OFFL_REWRITES_IPV4_CSUM,
};

enum op { OP_RESTORE, OP_HELPER, OP_HWOFFLOAD, NR_OPS };

static u64 run(struct bench_pkt *b, enum kind k, enum op op)
{
	netdev_features_t f = k == VXLAN ? 0 : NETIF_F_IP_CSUM | NETIF_F_IPV6_CSUM;
	volatile int sink = 0;
	unsigned int i;
	u64 t0 = ktime_get_ns();

	for (i = 0; i < iters; i++) {
		restore(b);
		if (op == OP_HELPER)
			sink += skb_csum_offload_chk_help(b->skb, k == TCP4_OWN ?
							  &spec_own : &spec_v4v6);
		else if (op == OP_HWOFFLOAD &&
			 b->skb->ip_summed == CHECKSUM_PARTIAL)
			/* validate_xmit_skb() tests this before the call, as
			 * skb_csum_offload_chk() does inside
			 */
			sink += skb_csum_hwoffload_help(b->skb, f);
	}
	return ktime_get_ns() - t0;
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

static u64 median(u64 *v)
{
	sort(v, ROUNDS, sizeof(*v), cmp_u64, NULL);
	return v[ROUNDS / 2];
}

/* ratio * 1000, printed as x.yyy */
static void print_ratio(const char *what, u64 a, u64 b)
{
	u64 r = b ? div64_u64(a * 1000, b) : 0;

	pr_info("lk45_csum_bench: %-52s %llu.%03llu (%llu ns vs %llu ns per %u)\n",
		what, r / 1000, r % 1000, a, b, iters);
}

/* A device that checksums UDP only: the TCP packet is refused cheaply. */
static const struct skb_csum_offl_spec spec_udp_only = {
	.flags = SKB_CSUM_OFFL_IPV4 | SKB_CSUM_OFFL_UDP,
};

static u64 time_fallback(struct bench_pkt *b, int what)
{
	volatile __wsum sink = 0;
	unsigned int i;
	bool enc;
	u64 t0 = ktime_get_ns();

	for (i = 0; i < iters; i++) {
		restore(b);
		switch (what) {
		case 0:		/* the helper's decision and software checksum */
			sink += __skb_csum_offload_chk(b->skb, &spec_udp_only, &enc, true);
			break;
		case 1:		/* the decision alone */
			sink += __skb_csum_offload_chk(b->skb, &spec_udp_only, &enc, false);
			break;
		case 2:		/* 6.12's fallback */
			sink += skb_checksum_help(b->skb);
			break;
		case 3:		/* the bare sum */
			sink += csum_partial(b->skb->data + b->start,
					     b->skb->len - b->start, 0);
			break;
		}
	}
	return ktime_get_ns() - t0;
}

/*
 * Software fallback throughput: the helper's resolve step, i.e. its cost
 * with help minus its cost without, against a bare csum_partial() over the
 * same bytes; 6.12's skb_checksum_help() is printed for reference.
 */
static int fallback_ratio(void)
{
	u64 t[4][ROUNDS], t_rest[ROUNDS], m[4], rest;
	struct bench_pkt b;
	unsigned int r, w;
	char name[96];

	if (build(&b, TCP4))
		return -ENOMEM;
	for (r = 0; r < ROUNDS; r++) {
		for (w = 0; w < 4; w++)
			t[w][r] = time_fallback(&b, w);
		t_rest[r] = run(&b, TCP4, OP_RESTORE);
	}
	rest = median(t_rest);
	for (w = 0; w < 4; w++)
		m[w] = median(t[w]);
	/* throughput ratio = bare time / fallback time (>= 0.9 is the goal) */
	snprintf(name, sizeof(name), "fallback: bare csum_partial / helper's resolve (%u B)",
		 b.skb->len - b.start);
	print_ratio(name, m[3] - rest, m[0] - m[1]);
	snprintf(name, sizeof(name), "reference: bare csum_partial / skb_checksum_help (%u B)",
		 b.skb->len - b.start);
	print_ratio(name, m[3] - rest, m[2] - rest);
	kfree_skb(b.skb);
	return 0;
}

static int __init lk45_csum_bench_init(void)
{
	u64 t[NR_OPS][ROUNDS];
	struct bench_pkt b;
	unsigned int r;
	enum kind k;
	char name[96];

	pr_info("lk45_csum_bench: %u packets x %d rounds, medians; ratio < 1 means the helper is cheaper\n",
		iters, ROUNDS);
	for (k = 0; k < NR_KINDS; k++) {
		u64 rest, h, hw;

		if (build(&b, k))
			return -ENOMEM;
		for (r = 0; r < ROUNDS; r++) {
			t[OP_RESTORE][r] = run(&b, k, OP_RESTORE);
			t[OP_HELPER][r] = run(&b, k, OP_HELPER);
			t[OP_HWOFFLOAD][r] = run(&b, k, OP_HWOFFLOAD);
		}
		rest = median(t[OP_RESTORE]);
		h = median(t[OP_HELPER]);
		hw = median(t[OP_HWOFFLOAD]);
		h = h > rest ? h - rest : 0;
		hw = hw > rest ? hw - rest : 0;
		snprintf(name, sizeof(name), "%s: helper / skb_csum_hwoffload_help",
			 kind_name[k]);
		print_ratio(name, h, hw);
		kfree_skb(b.skb);
	}
	return fallback_ratio();
}

static void __exit lk45_csum_bench_exit(void)
{
}

module_init(lk45_csum_bench_init);
module_exit(lk45_csum_bench_exit);
MODULE_DESCRIPTION("lk45: cost ratios of the checksum offload helpers");
MODULE_LICENSE("GPL");
