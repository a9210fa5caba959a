/* libFuzzer target: the RX path must handle any byte string without reading outside it, and its shortcuts
 * for test frames (lr_parse_tag, and lr_is_next against an expected tag) must agree with the full
 * parser. Besides the
 * classification it touches every pointer the parser hands out and builds the ARP/ND answers the worker
 * would send from them, so the data-dependent part of the RX path runs under AddressSanitizer. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint8_t sink;

static void touch(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sink ^= p[i];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t mac[6] = {2, 0, 0, 0, 0, 1};
	static const struct lr_ip me = {.b = {0x20, 0x01, 0x0d, 0xb8, [15] = 2}};
	struct lr_parsed ps;
	uint8_t buf[128];
	memset(&ps, 0, sizeof(ps));
	enum lr_kind kind = lr_parse(data, size, &ps);
	/* the receiver's shortcut reads a tag only where the full parser does, and the same tag */
	struct lr_tag tag;
	if (lr_parse_tag(data, size, &tag) &&
	    (kind != LR_KIND_TAGGED || tag.seq != ps.tag.seq || tag.ts_ns != ps.tag.ts_ns || tag.flow != ps.tag.flow ||
	     tag.stream != ps.tag.stream || tag.flags != ps.tag.flags))
		__builtin_trap();
	/* the receiver's check against an expected tag accepts only what the full parser reads as that tag:
	 * expected as the parser read it, and as the bytes at a tag's place say */
	uint32_t ts;
	if (kind == LR_KIND_TAGGED &&
	    lr_is_next(data, size, lr_tag_head(ps.tag.flags, ps.tag.stream), ps.tag.seq, ps.tag.flow, &ts) &&
	    ts != ps.tag.ts_ns)
		__builtin_trap();
	/* any input, however short: read only inside it (AddressSanitizer) */
	sink ^= (uint8_t)lr_is_next(data, size, 0, 0, 0, &ts);
	/* read where an IPv4 or IPv6 frame, untagged or behind a VLAN tag, has its tag: whether it is accepted
	 * then depends on the headers alone, which is what the fuzzer varies */
	for (int k = 0; k < 4; k++) {
		bool v6 = k & 1, vlan = k & 2;
		size_t tag_off = 14 + (vlan ? 4 : 0) + (v6 ? 40 : 20) + 8;
		if (size < tag_off + LR_TAG_LEN)
			continue;
		const uint8_t *e = data + tag_off + 2;
		uint64_t seq = ((uint64_t)lr_get32(e + 2) << 32) | lr_get32(e + 6);
		uint16_t flow = lr_get16(e + 14);
		uint32_t head = lr_tag_head(e[0], e[1]);
		bool next = vlan ? lr_is_next(data, size, head, seq, flow, &ts)
			    : v6 ? lr_is_next_ip6(data, size, head, seq, flow, &ts)
				 : lr_is_next_ip4(data, size, head, seq, flow, &ts);
		if (next &&
		    (kind != LR_KIND_TAGGED || ps.tag.flags != e[0] || ps.tag.stream != e[1] || ps.tag.seq != seq ||
		     ps.tag.flow != flow || ps.tag.ts_ns != ts))
			__builtin_trap();
	}
	switch (kind) {
	case LR_KIND_TAGGED:
		touch(ps.eth_src, 6);
		sink ^= (uint8_t)(ps.tag.seq ^ ps.tag.flow ^ ps.tag.stream);
		break;
	case LR_KIND_ARP:
		touch(ps.eth_src, 6);
		touch(ps.arp_sha, 6);
		touch(lr_build_arp(buf, ps.vlan, 2, mac, ps.arp_tpa, ps.arp_sha, ps.arp_spa, ps.arp_sha) <= sizeof(buf)
			      ? buf
			      : NULL,
		      60);
		break;
	case LR_KIND_NS:
	case LR_KIND_NA:
		touch(ps.eth_src, 6);
		if (ps.nd_lladdr)
			touch(ps.nd_lladdr, 6);
		touch(lr_build_na(buf, ps.vlan, mac, ps.nd_lladdr ? ps.nd_lladdr : ps.eth_src, &ps.nd_target, &me) <=
			      sizeof(buf)
			      ? buf
			      : NULL,
		      60);
		break;
	case LR_KIND_TOO_BIG:
		touch(ps.eth_src, 6);
		sink ^= (uint8_t)(ps.too_big_mtu ^ ps.too_big_stream);
		break;
	case LR_KIND_FRAG_FIRST:
	case LR_KIND_FRAG_REST:
		sink ^= (uint8_t)(ps.frag_src ^ ps.frag_dst ^ ps.frag_id ^ ps.frag_len ^ ps.frag_end ^ ps.frame_size);
		break;
	default:
		break;
	}
	return 0;
}
