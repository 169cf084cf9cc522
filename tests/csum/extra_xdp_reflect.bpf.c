// SPDX-License-Identifier: GPL-2.0
/*
 * Generic (skb mode) XDP reflector for extra_xdp_frags_attack.sh: TCP/IPv4
 * frames from 198.51.100.1 to 198.51.100.2 (the attack's own flow, sent by
 * the e1000 peer to the 8139cp port) go back out of the port with XDP_TX,
 * MACs, addresses and ports swapped (no checksum changes: every swapped
 * field stays in the same sums). Generic XDP runs after GRO, so a packet
 * GRO built reaches cp_start_xmit() as a GSO packet without
 * ndo_features_check(). Everything else passes.
 *
 *   xdp_reflect        linear: the core copies a GRO packet into one
 *                      buffer (one descriptor)
 *   xdp_reflect_frags  xdp.frags: the core copies it into page-pool
 *                      pages (head plus page frags, several descriptors)
 *
 * The stats map counts what was reflected; the log map holds one entry per
 * reflected frame, (TCP sequence << 32) | payload bytes, so the test knows
 * which frames GRO built. Slot ST_SEG is set by the test: the payload of
 * one segment the peer sent; a frame carrying more is a GRO packet.
 * Generic XDP of one device runs from its NAPI poll only, one CPU at a
 * time, so plain increments are enough.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

enum {
	ST_FRAMES,	/* frames reflected */
	ST_GRO,		/* of them carrying more than one segment */
	ST_BYTES,	/* TCP payload reflected */
	ST_GRO_BYTES,	/* of it in GRO packets */
	ST_PAGED,	/* frames whose data went past the linear part */
	ST_GRO_CWR,	/* GRO packets whose header carries CWR */
	ST_MAXLEN,	/* largest IPv4 total length */
	ST_SEG,		/* set by the test: payload of one segment */
	ST_MAX,
};

#define LOG_SIZE	1024

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, ST_MAX);
	__type(key, __u32);
	__type(value, __u64);
} xdp_reflect_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LOG_SIZE);
	__type(key, __u32);
	__type(value, __u64);
} xdp_reflect_log SEC(".maps");

static __always_inline __u64 *stat(__u32 key)
{
	return bpf_map_lookup_elem(&xdp_reflect_stats, &key);
}

static __always_inline void add(__u32 key, __u64 v)
{
	__u64 *p = stat(key);

	if (p)
		*p += v;
}

static __always_inline int reflect(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	__u8 *p = data, mac[6];
	__u32 a, seq, tot, thl, payload, idx;
	__u16 port;
	__u64 *n, *seg, *max, *log;

	/* Ethernet, a 20-byte IPv4 header, a TCP header */
	if (data + 14 + 20 + 20 > end)
		return XDP_PASS;
	if (p[12] != 0x08 || p[13] != 0x00 || p[14] != 0x45 || p[23] != IPPROTO_TCP)
		return XDP_PASS;
	if (p[26] != 198 || p[27] != 51 || p[28] != 100 || p[29] != 1 ||
	    p[30] != 198 || p[31] != 51 || p[32] != 100 || p[33] != 2)
		return XDP_PASS;

	tot = (__u32)p[16] << 8 | p[17];
	thl = (p[34 + 12] >> 4) * 4;
	if (tot < 20 + thl)
		return XDP_PASS;
	payload = tot - 20 - thl;
	seq = (__u32)p[38] << 24 | (__u32)p[39] << 16 | (__u32)p[40] << 8 | p[41];

	n = stat(ST_FRAMES);
	seg = stat(ST_SEG);
	max = stat(ST_MAXLEN);
	if (!n || !seg || !max)
		return XDP_PASS;
	idx = *n;
	*n = idx + 1;
	add(ST_BYTES, payload);
	if (*seg && payload > *seg) {
		add(ST_GRO, 1);
		add(ST_GRO_BYTES, payload);
		if (p[34 + 13] & 0x80)
			add(ST_GRO_CWR, 1);
	}
	if (data + 14 + tot > end)
		add(ST_PAGED, 1);
	if (tot > *max)
		*max = tot;
	if (idx < LOG_SIZE) {
		log = bpf_map_lookup_elem(&xdp_reflect_log, &idx);
		if (log)
			*log = (__u64)seq << 32 | payload;
	}

	/* swap MACs, addresses, ports */
	__builtin_memcpy(mac, p, 6);
	__builtin_memcpy(p, p + 6, 6);
	__builtin_memcpy(p + 6, mac, 6);
	__builtin_memcpy(&a, p + 26, 4);
	__builtin_memcpy(p + 26, p + 30, 4);
	__builtin_memcpy(p + 30, &a, 4);
	__builtin_memcpy(&port, p + 34, 2);
	__builtin_memcpy(p + 34, p + 36, 2);
	__builtin_memcpy(p + 36, &port, 2);
	return XDP_TX;
}

SEC("xdp")
int xdp_reflect(struct xdp_md *ctx)
{
	return reflect(ctx);
}

SEC("xdp.frags")
int xdp_reflect_frags(struct xdp_md *ctx)
{
	return reflect(ctx);
}

char _license[] SEC("license") = "GPL";
