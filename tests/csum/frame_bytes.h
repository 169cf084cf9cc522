/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Byte-level helpers of the raw-frame tests: big-endian fields and the
 * Internet checksum, written from RFC 1071 rather than taken from the
 * kernel, so that the tests check the kernel against an independent sum.
 */
#ifndef CSUM_FRAME_BYTES_H
#define CSUM_FRAME_BYTES_H

#include <stdint.h>

static uint32_t sum16(const uint8_t *p, int len, uint32_t s)
{
	int i;

	for (i = 0; i + 1 < len; i += 2)
		s += (p[i] << 8) | p[i + 1];
	if (len & 1)
		s += p[len - 1] << 8;
	return s;
}

static uint16_t fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return s;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static uint16_t get16(const uint8_t *p)
{
	return (p[0] << 8) | p[1];
}

/* the pseudo-header sum of the L3 header at @l3 for @len bytes of @proto */
static uint16_t pseudo(const uint8_t *f, int l3, int v, uint8_t proto, int len)
{
	uint32_t s = v == 4 ? sum16(f + l3 + 12, 8, 0) : sum16(f + l3 + 8, 32, 0);

	return fold(s + proto + len);
}

static void ipv4_csum(uint8_t *h)
{
	put16(h + 10, 0);
	put16(h + 10, ~fold(sum16(h, (h[0] & 15) * 4, 0)));
}

#endif
