// SPDX-License-Identifier: GPL-2.0
/*
 * tc egress programs for test_attack_frames: bpf_skb_adjust_room() with
 * BPF_ADJ_ROOM_MAC removes bytes right behind the Ethernet header of a
 * CHECKSUM_PARTIAL frame, which leaves csum_start at its address: 8 bytes
 * put it inside the IPv4 header, 40 before the frame. Only frames with the
 * test's source MAC 02:5e:00:00:xx:xx are touched; one whose room cannot
 * be adjusted is dropped, so that the test sees it.
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

static __always_inline int shrink(struct __sk_buff *skb, int len)
{
	__u8 mac[4];

	if (bpf_skb_load_bytes(skb, 6, mac, sizeof(mac)) ||
	    mac[0] != 0x02 || mac[1] != 0x5e || mac[2] || mac[3])
		return TC_ACT_OK;
	if (bpf_skb_adjust_room(skb, -len, BPF_ADJ_ROOM_MAC, 0))
		return TC_ACT_SHOT;
	return TC_ACT_OK;
}

SEC("shrink8")
int attack_shrink8(struct __sk_buff *skb)
{
	return shrink(skb, 8);
}

SEC("shrink40")
int attack_shrink40(struct __sk_buff *skb)
{
	return shrink(skb, 40);
}

char _license[] SEC("license") = "GPL";
