/* See frame.h. */
#include "frame.h"

#include <string.h>

static inline void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}


uint32_t lr_sum16(const void *data, size_t len, uint32_t sum)
{
	const uint8_t *p = data;
	while (len >= 2) {
		sum += lr_get16(p);
		p += 2;
		len -= 2;
	}
	if (len)
		sum += (uint32_t)p[0] << 8;
	return sum;
}

uint16_t lr_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

size_t lr_hdr_len(int l3, bool vlan)
{
	return 14u + (vlan ? 4u : 0u) + (l3 == 6 ? 40u : 20u) + 8u;
}

unsigned lr_min_frame(int l3, bool vlan)
{
	unsigned n = (unsigned)lr_hdr_len(l3, vlan) + LR_TAG_LEN + LR_FCS_LEN;
	return n < LR_MIN_FRAME ? LR_MIN_FRAME : n;
}

void lr_tag_put(uint8_t *p, const struct lr_tag *t)
{
	put16(p, LR_TAG_MAGIC);
	p[2] = t->flags;
	p[3] = t->stream;
	put32(p + 4, (uint32_t)(t->seq >> 32));
	put32(p + 8, (uint32_t)t->seq);
	put32(p + 12, t->ts_ns);
	put16(p + 16, t->flow);
}

static size_t put_eth(uint8_t *p, const uint8_t *dst, const uint8_t *src, uint16_t vlan, uint16_t type)
{
	memcpy(p, dst, 6);
	memcpy(p + 6, src, 6);
	if (vlan) {
		put16(p + 12, 0x8100);
		put16(p + 14, vlan & 0x0fff);
		put16(p + 16, type);
		return 18;
	}
	put16(p + 12, type);
	return 14;
}

void lr_tmpl_build(struct lr_tmpl *t, const struct lr_hdr_cfg *c, unsigned frame_size, enum lr_payload payload,
		   const uint8_t *random_bytes, size_t random_len)
{
	uint8_t *p = t->data;
	t->frame_size = (uint16_t)frame_size;
	t->len = (uint16_t)(frame_size - LR_FCS_LEN);
	t->l3 = c->l3;
	t->fragmentable = c->l3 == 4 && c->fragmentable;
	memset(p, 0, t->len);
	t->l3_off = (uint16_t)put_eth(p, c->dst_mac, c->src_mac, c->vlan, c->l3 == 6 ? 0x86dd : 0x0800);
	uint8_t *ip = p + t->l3_off;
	if (c->l3 == 6) {
		t->l4_off = (uint16_t)(t->l3_off + 40);
		put32(ip, (6u << 28) | ((uint32_t)(c->dscp << 2) << 20));
		put16(ip + 4, (uint16_t)(t->len - t->l4_off));
		ip[6] = 17;
		ip[7] = 64;
	} else {
		t->l4_off = (uint16_t)(t->l3_off + 20);
		ip[0] = 0x45;
		ip[1] = (uint8_t)(c->dscp << 2);
		put16(ip + 2, (uint16_t)(t->len - t->l3_off));
		/* DF unless asked: a tester must see a DUT's MTU problem, not hide it */
		put16(ip + 6, c->fragmentable ? 0 : 0x4000);
		ip[8] = 64;
		ip[9] = 17;
	}
	t->tag_off = (uint16_t)(t->l4_off + 8);
	uint16_t udp_len = (uint16_t)(t->len - t->l4_off);
	put16(p + t->l4_off + 4, udp_len);
	uint8_t *body = p + t->tag_off + LR_TAG_LEN;
	size_t body_len = t->len - t->tag_off - LR_TAG_LEN;
	for (size_t i = 0; i < body_len; i++) {
		if (payload == LR_PAYLOAD_INCREMENTING)
			body[i] = (uint8_t)i;
		else if (payload == LR_PAYLOAD_RANDOM && random_len)
			body[i] = random_bytes[i % random_len];
	}
	/* pseudo-header protocol and length, UDP length field, body */
	t->base_sum = lr_sum16(body, body_len, 17u + 2u * udp_len);
}

static void add32(uint8_t *last4, uint32_t f)
{
	put32(last4, lr_get32(last4) + f);
}

void lr_flow_fields(const struct lr_hdr_cfg *c, unsigned vary, uint32_t f, struct lr_flow_fields *out)
{
	size_t last = c->l3 == 6 ? 12 : 0;
	out->src = c->src;
	out->dst = c->dst;
	out->sport = c->sport;
	out->dport = c->dport;
	if (vary & LR_VARY_SPORT)
		out->sport = (uint16_t)(c->sport + f);
	if (vary & LR_VARY_DPORT)
		out->dport = (uint16_t)(c->dport + f);
	if (vary & LR_VARY_SRC)
		add32(out->src.b + last, f);
	if (vary & LR_VARY_DST)
		add32(out->dst.b + last, f);
}

void lr_frame_write(uint8_t *pkt, const struct lr_tmpl *t, const struct lr_flow_fields *ff,
		    const struct lr_tag *tag, size_t copy_len)
{
	size_t alen = t->l3 == 6 ? 16 : 4;
	uint8_t *ip = pkt + t->l3_off;
	uint8_t *udp = pkt + t->l4_off;
	lr_copy_head(pkt, t, copy_len);
	if (t->l3 == 6) {
		memcpy(ip + 8, ff->src.b, 16);
		memcpy(ip + 24, ff->dst.b, 16);
	} else {
		memcpy(ip + 12, ff->src.b, 4);
		memcpy(ip + 16, ff->dst.b, 4);
		if (t->fragmentable)
			put16(ip + 4, lr_ip_id(tag->seq, tag->stream, tag->flags));
		put16(ip + 10, 0); /* a template lr_tmpl_fix_flow completed carries its own */
		put16(ip + 10, (uint16_t)~lr_fold(lr_sum16(ip, 20, 0)));
	}
	put16(udp, ff->sport);
	put16(udp + 2, ff->dport);
	lr_tag_put(pkt + t->tag_off, tag);
	uint32_t sum = t->base_sum;
	sum = lr_sum16(ff->src.b, alen, sum);
	sum = lr_sum16(ff->dst.b, alen, sum);
	sum += ff->sport;
	sum += ff->dport;
	sum = lr_sum16(pkt + t->tag_off, LR_TAG_LEN, sum);
	uint16_t csum = (uint16_t)~lr_fold(sum);
	put16(udp + 6, csum ? csum : 0xffff);
}

void lr_tmpl_fix_flow(struct lr_tmpl *t, const struct lr_flow_fields *ff)
{
	size_t alen = t->l3 == 6 ? 16 : 4;
	uint8_t *ip = t->data + t->l3_off;
	if (t->l3 == 6) {
		memcpy(ip + 8, ff->src.b, 16);
		memcpy(ip + 24, ff->dst.b, 16);
	} else {
		memcpy(ip + 12, ff->src.b, 4);
		memcpy(ip + 16, ff->dst.b, 4);
		put16(ip + 10, 0);
		put16(ip + 10, (uint16_t)~lr_fold(lr_sum16(ip, 20, 0)));
	}
	put16(t->data + t->l4_off, ff->sport);
	put16(t->data + t->l4_off + 2, ff->dport);
	uint32_t sum = t->base_sum;
	sum = lr_sum16(ff->src.b, alen, sum);
	sum = lr_sum16(ff->dst.b, alen, sum);
	t->fixed_sum = sum + ff->sport + ff->dport;
}

enum lr_kind lr_parse_arp(const uint8_t *l3, size_t avail, struct lr_parsed *out)
{
	if (avail < 28 || lr_get16(l3) != 1 || lr_get16(l3 + 2) != 0x0800 || l3[4] != 6 || l3[5] != 4)
		return LR_KIND_FOREIGN;
	out->arp_op = lr_get16(l3 + 6);
	out->arp_sha = l3 + 8;
	memcpy(out->arp_spa, l3 + 14, 4);
	memcpy(out->arp_tpa, l3 + 24, 4);
	return LR_KIND_ARP;
}

/* The frame an ICMP error quotes (from its IP header, avail bytes) is ours when it is UDP and the quote
 * reaches through our tag: a hop quotes at least the IP header and 8 bytes (RFC 792), Linux and RFC 1812
 * routers up to 576 (IPv4) or 1280 (IPv6) bytes of the packet. A quote too short to hold the tag cannot be
 * told from anyone's and stays foreign. */
static enum lr_kind quoted_ours(const uint8_t *ip, size_t avail, uint32_t mtu, struct lr_parsed *out)
{
	size_t hl;
	if (avail >= 20 && (ip[0] >> 4) == 4 && ip[9] == 17)
		hl = (size_t)(ip[0] & 0x0f) * 4;
	else if (avail >= 40 && (ip[0] >> 4) == 6 && ip[6] == 17)
		hl = 40;
	else
		return LR_KIND_FOREIGN;
	struct lr_tag tag;
	if (hl < 20 || avail < hl + 8 + LR_TAG_LEN || !lr_tag_get(ip + hl + 8, &tag))
		return LR_KIND_FOREIGN;
	out->too_big_mtu = mtu;
	out->too_big_stream = tag.stream;
	out->too_big_flags = tag.flags;
	return LR_KIND_TOO_BIG;
}

enum lr_kind lr_parse_fragment(const uint8_t *ip, size_t ihl, size_t tot, size_t l2, struct lr_parsed *out)
{
	memcpy(&out->frag_src, ip + 12, 4);
	memcpy(&out->frag_dst, ip + 16, 4);
	out->frag_id = lr_get16(ip + 4);
	uint16_t fo = lr_get16(ip + 6);
	out->frag_off = (uint16_t)((fo & 0x1fff) * 8u);
	out->frag_len = (uint16_t)(tot - ihl);
	out->frag_end = (fo & 0x2000) ? 0 : (uint16_t)(out->frag_off + out->frag_len);
	if ((fo & 0x1fff) != 0)
		return LR_KIND_FRAG_REST;
	/* the first: the datagram's UDP header and our tag, its length the whole datagram's (longer than this
	 * fragment carries, else it was no fragment) */
	const uint8_t *udp = ip + ihl;
	if (tot < ihl + 8 + LR_TAG_LEN || !lr_tag_get(udp + 8, &out->tag))
		return LR_KIND_FOREIGN;
	size_t ulen = lr_get16(udp + 4);
	if (ulen < 8 + LR_TAG_LEN || ulen <= tot - ihl)
		return LR_KIND_FOREIGN;
	out->frame_size = (uint32_t)(l2 + ihl + ulen + LR_FCS_LEN);
	return LR_KIND_FRAG_FIRST;
}

enum lr_kind lr_parse_icmp4(const uint8_t *icmp, size_t avail, struct lr_parsed *out)
{
	if (avail < 8 || icmp[0] != 3 || icmp[1] != 4) /* destination unreachable: fragmentation needed */
		return LR_KIND_FOREIGN;
	return quoted_ours(icmp + 8, avail - 8, lr_get16(icmp + 6), out);
}

enum lr_kind lr_parse_icmp6(const uint8_t *ip, const uint8_t *icmp, size_t avail, struct lr_parsed *out)
{
	if (avail >= 8 && icmp[0] == 2 && icmp[1] == 0) /* packet too big */
		return quoted_ours(icmp + 8, avail - 8, lr_get32(icmp + 4), out);
	if (avail < 24)
		return LR_KIND_FOREIGN;
	uint8_t type = icmp[0];
	if ((type != 135 && type != 136) || icmp[1] != 0)
		return LR_KIND_FOREIGN;
	memcpy(out->nd_src.b, ip + 8, 16);
	memcpy(out->nd_target.b, icmp + 8, 16);
	out->nd_lladdr = NULL;
	uint8_t want = type == 135 ? 1 : 2;
	size_t off = 24;
	while (off + 2 <= avail) {
		size_t olen = (size_t)icmp[off + 1] * 8;
		if (olen == 0 || off + olen > avail)
			break;
		if (icmp[off] == want && olen >= 8)
			out->nd_lladdr = icmp + off + 2;
		off += olen;
	}
	return type == 135 ? LR_KIND_NS : LR_KIND_NA;
}

static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

static size_t pad60(uint8_t *buf, size_t n)
{
	if (n < 60) {
		memset(buf + n, 0, 60 - n);
		n = 60;
	}
	return n;
}

size_t lr_build_arp(uint8_t *buf, uint16_t vlan, uint16_t op, const uint8_t *sha, const uint8_t *spa,
		    const uint8_t *tha, const uint8_t *tpa, const uint8_t *dst_mac)
{
	static const uint8_t zero[6];
	size_t n = put_eth(buf, dst_mac ? dst_mac : bcast, sha, vlan, 0x0806);
	uint8_t *a = buf + n;
	put16(a, 1);
	put16(a + 2, 0x0800);
	a[4] = 6;
	a[5] = 4;
	put16(a + 6, op);
	memcpy(a + 8, sha, 6);
	memcpy(a + 14, spa, 4);
	memcpy(a + 18, tha ? tha : zero, 6);
	memcpy(a + 24, tpa, 4);
	return pad60(buf, n + 28);
}

static size_t put_icmp6(uint8_t *buf, size_t n, const struct lr_ip *src, const struct lr_ip *dst, uint8_t type,
			uint32_t flags, const struct lr_ip *target, uint8_t opt, const uint8_t *mac)
{
	uint8_t *ip = buf + n;
	uint8_t *icmp = ip + 40;
	memset(ip, 0, 40 + 32);
	put32(ip, 6u << 28);
	put16(ip + 4, 32);
	ip[6] = 58;
	ip[7] = 255; /* RFC 4861: ND packets must arrive with hop limit 255 */
	memcpy(ip + 8, src->b, 16);
	memcpy(ip + 24, dst->b, 16);
	icmp[0] = type;
	put32(icmp + 4, flags);
	memcpy(icmp + 8, target->b, 16);
	icmp[24] = opt;
	icmp[25] = 1;
	memcpy(icmp + 26, mac, 6);
	uint32_t sum = lr_sum16(ip + 8, 32, 32u + 58u);
	sum = lr_sum16(icmp, 32, sum);
	put16(icmp + 2, (uint16_t)~lr_fold(sum));
	return pad60(buf, n + 72);
}

size_t lr_build_ns(uint8_t *buf, uint16_t vlan, const uint8_t *src_mac, const struct lr_ip *src,
		   const struct lr_ip *target)
{
	/* to the target's solicited-node multicast address */
	struct lr_ip dst = {{0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0xff, 0, 0, 0}};
	memcpy(dst.b + 13, target->b + 13, 3);
	uint8_t dmac[6] = {0x33, 0x33, 0xff, target->b[13], target->b[14], target->b[15]};
	size_t n = put_eth(buf, dmac, src_mac, vlan, 0x86dd);
	return put_icmp6(buf, n, src, &dst, 135, 0, target, 1, src_mac);
}

size_t lr_build_na(uint8_t *buf, uint16_t vlan, const uint8_t *src_mac, const uint8_t *dst_mac,
		   const struct lr_ip *target, const struct lr_ip *dst)
{
	size_t n = put_eth(buf, dst_mac, src_mac, vlan, 0x86dd);
	/* solicited + override */
	return put_icmp6(buf, n, target, dst, 136, 0x60000000u, target, 2, src_mac);
}
