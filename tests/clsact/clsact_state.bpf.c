// SPDX-License-Identifier: GPL-2.0
/*
 * The seed's example objects for "tc filter add dev X ingress|egress bpf da
 * obj clsact_state.bpf.o sec ingress|egress": two programs sharing one map,
 * pinned by name, so that what ingress sees steers egress.
 *
 *  ingress: counts; a UDP datagram to port 7777 sets the egress priority
 *           from its first payload byte; returns the ingress verdict slot
 *  egress:  counts; sets skb->priority (the root qdisc's band follows);
 *           returns the egress verdict slot
 *
 * A verdict slot holds 0 for TC_ACT_OK or a tc action code + 1, so tests
 * can make either program shoot, steal, queue or redirect.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

enum {
	ST_IN_PKTS,
	ST_EG_PKTS,
	ST_EG_PRIO,
	ST_IN_VERDICT,
	ST_EG_VERDICT,
	ST_REDIRECT_IFINDEX,	/* for a verdict of TC_ACT_REDIRECT */
	ST_MAX,
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, ST_MAX);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} lk45_state SEC(".maps");

static __always_inline __u64 *slot(__u32 key)
{
	return bpf_map_lookup_elem(&lk45_state, &key);
}

static __always_inline int verdict(__u32 key)
{
	__u64 *v = slot(key), *ifindex;

	if (!v || !*v)
		return TC_ACT_OK;
	if (*v - 1 == TC_ACT_REDIRECT) {
		ifindex = slot(ST_REDIRECT_IFINDEX);
		return ifindex ? bpf_redirect(*ifindex, 0) : TC_ACT_SHOT;
	}
	return *v - 1;
}

SEC("ingress")
int lk45_ingress(struct __sk_buff *skb)
{
	__u64 *n = slot(ST_IN_PKTS), *prio;
	__u8 ihl, proto, byte;
	__be16 port;

	if (n)
		__sync_fetch_and_add(n, 1);
	if (skb->protocol != bpf_htons(ETH_P_IP) ||
	    bpf_skb_load_bytes(skb, ETH_HLEN + 9, &proto, 1) || proto != IPPROTO_UDP ||
	    bpf_skb_load_bytes(skb, ETH_HLEN, &ihl, 1))
		return verdict(ST_IN_VERDICT);
	ihl = (ihl & 0xf) * 4;
	if (!bpf_skb_load_bytes(skb, ETH_HLEN + ihl + 2, &port, 2) &&
	    port == bpf_htons(7777) &&
	    !bpf_skb_load_bytes(skb, ETH_HLEN + ihl + 8, &byte, 1)) {
		prio = slot(ST_EG_PRIO);
		if (prio)
			*prio = byte;
	}
	return verdict(ST_IN_VERDICT);
}

SEC("egress")
int lk45_egress(struct __sk_buff *skb)
{
	__u64 *n = slot(ST_EG_PKTS), *prio = slot(ST_EG_PRIO);

	if (n)
		__sync_fetch_and_add(n, 1);
	if (prio && *prio)
		skb->priority = *prio;
	return verdict(ST_EG_VERDICT);
}

/* For the root qdisc (not da): the class is the tc_index a clsact egress
 * filter set from its classid, so a prio qdisc's band shows that value.
 */
SEC("classify")
int lk45_tc_index_class(struct __sk_buff *skb)
{
	return skb->tc_index ? (1 << 16) | skb->tc_index : 0;
}

/* The benchmark's no-op filter. */
SEC("nop")
int lk45_nop(struct __sk_buff *skb)
{
	return TC_ACT_OK;
}

char _license[] SEC("license") = "GPL";
