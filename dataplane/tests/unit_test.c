/* Unit tests of the pure-C parts: frames and checksums, the tag, ARP/ND, sequence analysis and the
 * latency histogram. Built with AddressSanitizer and UBSan (make unit). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frame.h"
#include "hist.h"
#include "seqwin.h"

static int failures;
#define CHECK(cond, ...)                                                                                   \
	do {                                                                                               \
		if (!(cond)) {                                                                             \
			failures++;                                                                        \
			fprintf(stderr, "%s:%d: %s: ", __FILE__, __LINE__, #cond);                         \
			fprintf(stderr, __VA_ARGS__);                                                      \
			fprintf(stderr, "\n");                                                             \
		}                                                                                          \
	} while (0)

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }

/* An independent checksum check: the sum over pseudo-header and datagram, checksum included, is 0xffff. */
static uint16_t udp_verify(const uint8_t *pkt, size_t l3_off, int l3)
{
	const uint8_t *ip = pkt + l3_off;
	const uint8_t *udp = ip + (l3 == 6 ? 40 : 20);
	size_t ulen = rd16(udp + 4);
	uint32_t sum = 0;
	size_t alen = l3 == 6 ? 16 : 4;
	const uint8_t *src = l3 == 6 ? ip + 8 : ip + 12;
	for (size_t i = 0; i < 2 * alen; i += 2)
		sum += rd16(src + i);
	sum += 17 + (uint32_t)ulen;
	for (size_t i = 0; i + 1 < ulen; i += 2)
		sum += rd16(udp + i);
	if (ulen & 1)
		sum += (uint32_t)udp[ulen - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}


/* The ICMP error a hop sends for a frame too big for its MTU (IPv4 "fragmentation needed", ICMPv6 "packet
 * too big"), quoting quote bytes of the frame's IP packet as Linux routers do (up to 576 B of IPv4, 1280 B
 * of IPv6, headers included). Returns the error's frame length. */
static size_t too_big_error(uint8_t *out, const uint8_t *frame, size_t l3_off, size_t iplen, int l3, size_t quote,
			    uint32_t mtu)
{
	const uint8_t *ip = frame + l3_off;
	memcpy(out, frame + 6, 6); /* back to the sender */
	memcpy(out + 6, frame, 6);
	size_t q = iplen < quote ? iplen : quote;
	if (l3 == 4) {
		out[12] = 0x08, out[13] = 0x00;
		uint8_t *h = out + 14;
		memset(h, 0, 28);
		h[0] = 0x45, h[8] = 64, h[9] = 1;
		h[2] = (uint8_t)((28 + q) >> 8), h[3] = (uint8_t)(28 + q);
		memcpy(h + 12, ip + 16, 4); /* from the hop: any address will do */
		memcpy(h + 16, ip + 12, 4);
		h[20] = 3, h[21] = 4;
		h[26] = (uint8_t)(mtu >> 8), h[27] = (uint8_t)mtu;
		memcpy(h + 28, ip, q);
		return 14 + 28 + q;
	}
	out[12] = 0x86, out[13] = 0xdd;
	uint8_t *h = out + 14;
	memset(h, 0, 48);
	h[0] = 0x60, h[6] = 58, h[7] = 64;
	h[4] = (uint8_t)((8 + q) >> 8), h[5] = (uint8_t)(8 + q);
	memcpy(h + 8, ip + 24, 16);
	memcpy(h + 24, ip + 8, 16);
	h[40] = 2;
	h[44] = (uint8_t)(mtu >> 24), h[45] = (uint8_t)(mtu >> 16), h[46] = (uint8_t)(mtu >> 8), h[47] = (uint8_t)mtu;
	memcpy(h + 48, ip, q);
	return 14 + 48 + q;
}

/* A hop's refusal of one of our frames is told apart from anyone's by the tag in its quote: counted with the
 * MTU it names and the stream it quotes; a quote too short for the tag (RFC 792's IP header and 8 bytes)
 * stays foreign, as does the same error for a frame that is not ours. */
static void check_too_big(const uint8_t *frame, size_t len, size_t l3_off, int l3, unsigned size)
{
	static uint8_t err[LR_MAX_FRAME + 128];
	struct lr_parsed ps;
	size_t iplen = len - l3_off, hdr = l3 == 4 ? 20 : 40;
	uint32_t mtu = l3 == 4 ? 1400 : 1280;
	size_t n = too_big_error(err, frame, l3_off, iplen, l3, l3 == 4 ? 548 : 1232, mtu);
	CHECK(lr_parse(err, n, &ps) == LR_KIND_TOO_BIG && ps.too_big_mtu == mtu && ps.too_big_stream == 9,
	      "too big l3=%d size=%u: kind %d mtu %u stream %u", l3, size, ps.kind, ps.too_big_mtu, ps.too_big_stream);
	n = too_big_error(err, frame, l3_off, iplen, l3, hdr + 8, mtu);
	CHECK(lr_parse(err, n, &ps) == LR_KIND_FOREIGN, "too big l3=%d size=%u quoting 8 bytes of UDP is foreign", l3, size);
	n = too_big_error(err, frame, l3_off, iplen, l3, l3 == 4 ? 548 : 1232, mtu);
	err[14 + hdr + 8 + hdr + 8] ^= 0xff; /* the tag's magic */
	CHECK(lr_parse(err, n, &ps) == LR_KIND_FOREIGN, "too big l3=%d size=%u quoting a frame not ours is foreign", l3, size);
}

/* A frame built with DF clear carries its own IP ID and a right header checksum; cut as a router cuts it at
 * MTU 1400 (RFC 791: every fragment but the last holds a multiple of 8 bytes), its first fragment parses as
 * the frame (tag, whole size) and the rest as fragments of the same datagram that end where it ends. */
static void check_fragments(const uint8_t *frame, const struct lr_tmpl *t, const struct lr_tag *tag, unsigned size)
{
	static uint8_t frag[LR_MAX_FRAME];
	const uint8_t *ip = frame + t->l3_off;
	CHECK(rd16(ip + 6) == 0 && rd16(ip + 4) == lr_ip_id(tag->seq, tag->stream, tag->flags), "DF clear, IP ID %04x of seq %llx (size %u)",
	      rd16(ip + 4), (unsigned long long)tag->seq, size);
	/* the warm-up frame of a number, and the next trial's, carry another ID than this frame */
	CHECK(lr_ip_id(tag->seq, tag->stream, tag->flags) != lr_ip_id(tag->seq, tag->stream, tag->flags ^ LR_FLAG_WARMUP) &&
		      lr_ip_id(tag->seq, tag->stream, tag->flags) !=
			  lr_ip_id(tag->seq, tag->stream, (uint8_t)(LR_TRIAL_BITS(78) | (tag->flags & LR_FLAG_WARMUP))),
	      "IP ID of seq %llx apart from warm-up's and the next trial's", (unsigned long long)tag->seq);
	uint32_t s = 0;
	for (int i = 0; i < 20; i += 2)
		s += rd16(ip + i);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	CHECK(s == 0xffff, "IPv4 header checksum with the IP ID, size=%u", size);
	size_t datagram = rd16(ip + 2) - 20u, per = (size_t)(1400 - 20) / 8 * 8, off = 0;
	if (datagram <= per)
		return; /* it fits: a router sends it whole */
	unsigned n = 0;
	uint32_t bytes = 0, end = 0;
	while (off < datagram) {
		size_t len = datagram - off < per ? datagram - off : per;
		bool more = off + len < datagram;
		memcpy(frag, frame, t->l3_off + 20u);
		memcpy(frag + t->l3_off + 20, ip + 20 + off, len);
		frag[t->l3_off + 2] = (uint8_t)((20 + len) >> 8);
		frag[t->l3_off + 3] = (uint8_t)(20 + len);
		uint16_t fo = (uint16_t)((more ? 0x2000 : 0) | off / 8);
		frag[t->l3_off + 6] = (uint8_t)(fo >> 8);
		frag[t->l3_off + 7] = (uint8_t)fo;
		struct lr_parsed ps;
		enum lr_kind k = lr_parse(frag, t->l3_off + 20 + len, &ps);
		if (off == 0) {
			CHECK(k == LR_KIND_FRAG_FIRST && ps.tag.seq == tag->seq && ps.tag.stream == 9 && ps.frame_size == size,
			      "first fragment of %u B: kind %d seq %llx size %u", size, k, (unsigned long long)ps.tag.seq,
			      ps.frame_size);
		} else {
			CHECK(k == LR_KIND_FRAG_REST, "fragment %u of %u B: kind %d", n, size, k);
		}
		CHECK(ps.frag_id == lr_ip_id(tag->seq, tag->stream, tag->flags) && memcmp(&ps.frag_src, ip + 12, 4) == 0 && memcmp(&ps.frag_dst, ip + 16, 4) == 0,
		      "fragment %u of %u B: the datagram's source, destination and ID", n, size);
		bytes += ps.frag_len;
		if (ps.frag_end)
			end = ps.frag_end;
		off += len;
		n++;
		/* a first fragment too short to hold the tag is not ours */
		if (off == len && len >= 8 + LR_TAG_LEN) {
			frag[t->l3_off + 3] = (uint8_t)(20 + 8 + LR_TAG_LEN - 1);
			frag[t->l3_off + 2] = 0;
			CHECK(lr_parse(frag, t->l3_off + 20 + 8 + LR_TAG_LEN - 1, &ps) == LR_KIND_FOREIGN,
			      "a first fragment cut inside the tag is foreign");
		}
	}
	CHECK(n == (datagram + per - 1) / per && bytes == datagram && end == datagram,
	      "%u B in %u fragments: %u bytes, end %u, of %zu", size, n, bytes, end, datagram);
}

static void test_frames(void)
{
	static uint8_t mem[LR_MAX_FRAME], pkt[LR_MAX_FRAME];
	uint8_t rnd[256];
	for (int i = 0; i < 256; i++)
		rnd[i] = (uint8_t)(i * 37 + 11);
	struct lr_hdr_cfg c = {.src_mac = {2, 0, 0, 0, 0, 1}, .dst_mac = {2, 0, 0, 0, 0, 2}, .sport = 1024, .dport = 1024};
	int l3s[] = {4, 6};
	unsigned sizes[] = {64, 65, 84, 128, 570, 1417, 1518, 9216};
	for (int li = 0; li < 2; li++)
		for (int vlan = 0; vlan < 2; vlan++)
			for (unsigned si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
				unsigned size = sizes[si];
				c.l3 = l3s[li];
				c.vlan = vlan ? 100 : 0;
				c.dscp = 46;
				if (size < lr_min_frame(c.l3, vlan))
					continue;
				memset(&c.src, 0, sizeof(c.src));
				memset(&c.dst, 0, sizeof(c.dst));
				if (c.l3 == 4) {
					memcpy(c.src.b, (uint8_t[]){198, 18, 1, 2}, 4);
					memcpy(c.dst.b, (uint8_t[]){198, 19, 1, 2}, 4);
				} else {
					c.src.b[0] = 0x20, c.src.b[1] = 0x01, c.src.b[15] = 2;
					c.dst.b[0] = 0x20, c.dst.b[1] = 0x01, c.dst.b[14] = 1, c.dst.b[15] = 2;
				}
				struct lr_tmpl t = {.data = mem};
				lr_tmpl_build(&t, &c, size, si % 3, rnd, sizeof(rnd));
				CHECK(t.len == size - 4, "len %u for %u", t.len, size);
				for (uint32_t f = 0; f < 70000; f += 6999) {
					struct lr_flow_fields ff;
					lr_flow_fields(&c, LR_VARY_SPORT | LR_VARY_DST | LR_VARY_SRC, f, &ff);
					struct lr_tag tag = {.flags = LR_TRIAL_BITS(77), .stream = 9, .seq = 0x123456789abull + f,
							     .ts_ns = 0xdeadbeef, .flow = (uint16_t)f};
					lr_frame_write(pkt, &t, &ff, &tag, t.len);
					CHECK(udp_verify(pkt, t.l3_off, c.l3) == 0xffff, "UDP checksum l3=%d size=%u flow=%u",
					      c.l3, size, f);
					/* a frame sent later than built is re-stamped: the checksum must still verify, for
					 * stamps whose words wrap either way, and the frame equal one built with that stamp */
					static const uint32_t later[] = {0xdeadbef0u, 0xffffffffu, 0x00000000u, 0x0001ffffu, 0xdeadbeefu};
					for (size_t k = 0; k < sizeof(later) / sizeof(later[0]); k++) {
						static uint8_t again[LR_MAX_FRAME];
						lr_frame_restamp(pkt, t.l4_off, t.tag_off, later[k]);
						CHECK(udp_verify(pkt, t.l3_off, c.l3) == 0xffff, "UDP checksum after re-stamp %08x l3=%d size=%u",
						      later[k], c.l3, size);
						struct lr_tag t2 = tag;
						t2.ts_ns = later[k];
						lr_frame_write(again, &t, &ff, &t2, t.len);
						CHECK(memcmp(again, pkt, t.len) == 0, "re-stamped frame (%08x, l3=%d size=%u) differs from one built with the stamp",
						      later[k], c.l3, size);
						CHECK(lr_get32(pkt + t.tag_off + 12) == later[k], "stamp %08x not written", later[k]);
						/* the fast path builds with stamp 0 and stamps the built frame just before sending:
						 * the same bytes as a frame built with the stamp */
						static uint8_t unstamped[LR_MAX_FRAME];
						struct lr_tag t0 = tag;
						t0.ts_ns = 0;
						lr_frame_write(unstamped, &t, &ff, &t0, t.len);
						lr_frame_stamp_sum(unstamped, t.l4_off, t.tag_off, lr_stamp_of(later[k]),
								   (uint16_t)~rd16(unstamped + t.l4_off + 6));
						CHECK(memcmp(again, unstamped, t.len) == 0, "stamped frame (%08x, l3=%d size=%u) differs from one built with the stamp",
						      later[k], c.l3, size);
					}
					if (c.l3 == 4) {
						uint32_t s = 0;
						for (int i = 0; i < 20; i += 2)
							s += rd16(pkt + t.l3_off + i);
						while (s >> 16)
							s = (s & 0xffff) + (s >> 16);
						CHECK(s == 0xffff, "IPv4 header checksum size=%u", size);
						CHECK(pkt[t.l3_off + 1] == 46 << 2, "DSCP");
					}
					struct lr_parsed ps;
					CHECK(lr_parse(pkt, t.len, &ps) == LR_KIND_TAGGED, "parse l3=%d vlan=%d size=%u", c.l3,
					      vlan, size);
					CHECK(ps.tag.seq == tag.seq && ps.tag.stream == 9 && ps.tag.ts_ns == 0xdeadbeef &&
						      ps.tag.flow == (uint16_t)f && ps.tag.flags == LR_TRIAL_BITS(77),
					      "tag round trip");
					CHECK(ps.frame_size == size, "frame size %u != %u", ps.frame_size, size);
					CHECK(ps.vlan == (vlan ? 100 : 0), "vlan");
					if (!vlan)
						check_too_big(pkt, t.len, t.l3_off, c.l3, size);
					if (c.l3 == 4) {
						static uint8_t fmem[LR_MAX_FRAME], fpkt[LR_MAX_FRAME];
						struct lr_hdr_cfg fc = c;
						fc.fragmentable = true;
						struct lr_tmpl ft = {.data = fmem};
						lr_tmpl_build(&ft, &fc, size, si % 3, rnd, sizeof(rnd));
						/* one flow: the engine completes the template (its header checksum too) first */
						struct lr_flow_fields ff0;
						lr_flow_fields(&fc, 0, 0, &ff0);
						lr_tmpl_fix_flow(&ft, &ff0);
						lr_frame_write(fpkt, &ft, &ff0, &tag, ft.len);
						CHECK(udp_verify(fpkt, ft.l3_off, 4) == 0xffff, "UDP checksum DF clear size=%u", size);
						check_fragments(fpkt, &ft, &tag, size);
					}
					CHECK(rd16(pkt + t.l4_off) == (uint16_t)(1024 + f), "sport varies with the flow");
				}
				/* the fast path of fixed headers writes the same bytes as the general one */
				{
					static uint8_t fixed[LR_MAX_FRAME], fixed_mem[LR_MAX_FRAME];
					struct lr_tmpl ft = {.data = fixed_mem};
					lr_tmpl_build(&ft, &c, size, si % 3, rnd, sizeof(rnd));
					struct lr_flow_fields ff0;
					lr_flow_fields(&c, 0, 0, &ff0);
					lr_tmpl_fix_flow(&ft, &ff0);
					static const uint64_t seqs[] = {0, 1, 0xffff, 0xfffffffffffeull, 0x1234567890abcdefull, UINT64_MAX};
					struct lr_tag tag = {.flags = 3, .stream = 200, .ts_ns = 0xffff0001, .flow = 0};
					for (unsigned q = 0; q < sizeof(seqs) / sizeof(seqs[0]); q++) {
						tag.seq = seqs[q];
						/* a template stamped for another burst (other flags, stream, time) is restamped */
						tag.flags = (uint8_t)(q % 2 ? LR_TRIAL_BITS(q) : LR_TRIAL_BITS(q) | LR_FLAG_WARMUP);
						tag.stream = (uint8_t)(200 + q);
						tag.ts_ns = 0xffff0001u * (uint32_t)(q + 1);
						lr_frame_write(pkt, &t, &ff0, &tag, t.len);
						lr_frame_write_seq(fixed, &ft, lr_tmpl_stamp(&ft, &tag), tag.seq, ft.len);
						CHECK(memcmp(pkt, fixed, t.len) == 0, "fixed path differs l3=%d vlan=%d size=%u seq=%llx",
						      c.l3, vlan, size, (unsigned long long)tag.seq);
						/* as the worker does it: built with stamp 0 and no checksum, stamped and
						 * checksummed after from the sum the build returned */
						struct lr_tag t0 = tag;
						t0.ts_ns = 0;
						memset(fixed + ft.l4_off + 6, 0x5a, 2);
						uint32_t fsum = lr_frame_write_seq_sum(fixed, &ft, lr_tmpl_stamp(&ft, &t0), tag.seq, ft.len);
						lr_frame_stamp_sum(fixed, ft.l4_off, ft.tag_off, lr_stamp_of(tag.ts_ns), fsum);
						CHECK(memcmp(pkt, fixed, t.len) == 0 && udp_verify(fixed, ft.l3_off, c.l3) == 0xffff,
						      "fixed path stamped after differs l3=%d vlan=%d size=%u seq=%llx", c.l3, vlan, size,
						      (unsigned long long)tag.seq);
					}
					/* a zero-payload stream copies only the head, as one constant-size copy into a
					 * buffer whose payload is already zero (the TX pool's mbufs) */
					if (si % 3 == LR_PAYLOAD_ZEROS) {
						static uint8_t head[LR_MAX_FRAME];
						memset(head, 0, sizeof(head));
						lr_frame_write_seq(head, &ft, lr_tmpl_stamp(&ft, &tag), tag.seq, LR_MAX_HDR_TAG);
						CHECK(memcmp(pkt, head, t.len) == 0, "head copy differs l3=%d vlan=%d size=%u", c.l3, vlan, size);
						/* a frame of one cache line copies that line only, over whatever an 84-byte head copy
						 * of another frame left there: the frame is right, and nothing past the head was
						 * written (the zeros of a later, larger frame's payload stay) */
						if (ft.len <= LR_COPY_LINE) {
							memset(head, 0, sizeof(head));
							memset(head, 0xa5, LR_MAX_HDR_TAG);
							lr_frame_write_seq(head, &ft, lr_tmpl_stamp(&ft, &tag), tag.seq, LR_COPY_LINE);
							CHECK(memcmp(pkt, head, t.len) == 0, "line copy differs l3=%d vlan=%d size=%u", c.l3, vlan, size);
							for (unsigned b = LR_MAX_HDR_TAG; b < sizeof(head); b++)
								CHECK(head[b] == 0, "line copy wrote byte %u", b);
						}
					}
				}
				/* a truncated frame is foreign, never a tag read beyond the end */
				struct lr_parsed ps;
				CHECK(lr_parse(pkt, t.tag_off + 5, &ps) == LR_KIND_FOREIGN, "truncated frame");
			}
	CHECK(lr_min_frame(4, false) == 64 && lr_min_frame(4, true) == 68 && lr_min_frame(6, false) == 84,
	      "minimum frames %u %u %u", lr_min_frame(4, false), lr_min_frame(4, true), lr_min_frame(6, false));
}

/* lr_frame_stamp_sum (with the sum read back from a frame built with stamp 0, as the worker stamps frames of
 * varying headers) against the frame built with the stamp, byte for byte, for every carry of its one's-complement
 * update: stamps that make the checksum 0 (sent as 0xffff), and a frame whose zero-stamp checksum was sent as
 * 0xffff. */
static void test_stamp_edges(void)
{
	static uint8_t mem[LR_MAX_FRAME], a[LR_MAX_FRAME], b[LR_MAX_FRAME];
	struct lr_hdr_cfg c = {.src_mac = {2, 0, 0, 0, 0, 1}, .dst_mac = {2, 0, 0, 0, 0, 2}, .sport = 1024, .dport = 1024, .l3 = 4};
	memcpy(c.src.b, (uint8_t[]){198, 18, 1, 2}, 4);
	memcpy(c.dst.b, (uint8_t[]){198, 19, 1, 2}, 4);
	struct lr_tmpl t = {.data = mem};
	lr_tmpl_build(&t, &c, 64, LR_PAYLOAD_ZEROS, NULL, 0);
	struct lr_flow_fields ff;
	lr_flow_fields(&c, 0, 0, &ff);
	struct lr_tag tag = {.flags = 2, .stream = 1, .seq = 0, .ts_ns = 0, .flow = 0};
	lr_frame_write(a, &t, &ff, &tag, t.len);
	uint32_t s0 = (uint16_t)~rd16(a + t.l4_off + 6); /* the sum of all but the checksum, seq 0, stamp 0 */
	CHECK(s0 != 0 && s0 != 0xffff, "pick another frame: sum %04x", s0);
	/* every low word of the stamp under a few high ones (every carry the update can make), on this frame and
	 * on one whose zero-stamp checksum was 0 (sent as 0xffff: the sequence number makes it so); among them the
	 * stamps that make the stamped frame's checksum 0 (sent as 0xffff) */
	static const uint32_t highs[] = {0, 1, 0x8000, 0xfffe, 0xffff};
	unsigned sent_ffff = 0;
	for (int zero = 0; zero < 2; zero++) {
		tag.seq = zero ? 0xffffu - s0 : 0;
		tag.ts_ns = 0;
		lr_frame_write(a, &t, &ff, &tag, t.len);
		CHECK(!zero || rd16(a + t.l4_off + 6) == 0xffff, "zero-stamp checksum %04x", rd16(a + t.l4_off + 6));
		static uint8_t base[LR_MAX_FRAME];
		memcpy(base, a, t.len);
		for (size_t h = 0; h < sizeof(highs) / sizeof(highs[0]); h++)
			for (uint32_t lo = 0; lo <= 0xffff; lo++) {
				uint32_t ts = highs[h] << 16 | lo;
				memcpy(a, base, t.len);
				lr_frame_stamp_sum(a, t.l4_off, t.tag_off, lr_stamp_of(ts), (uint16_t)~rd16(a + t.l4_off + 6));
				tag.ts_ns = ts;
				lr_frame_write(b, &t, &ff, &tag, t.len);
				if (memcmp(a, b, t.len) != 0 || udp_verify(a, t.l3_off, 4) != 0xffff) {
					CHECK(0, "stamp %08x on a frame of zero-stamp checksum %04x", ts, rd16(base + t.l4_off + 6));
					return;
				}
				sent_ffff += rd16(a + t.l4_off + 6) == 0xffff;
			}
	}
	CHECK(sent_ffff > 0, "no stamp made the checksum 0");
}

static void test_arp_nd(void)
{
	uint8_t buf[128], mac[6] = {2, 1, 2, 3, 4, 5}, ip[4] = {198, 18, 1, 2}, gw[4] = {198, 18, 1, 1};
	size_t n = lr_build_arp(buf, 0, 1, mac, ip, NULL, gw, NULL);
	struct lr_parsed ps;
	CHECK(n == 60 && lr_parse(buf, n, &ps) == LR_KIND_ARP && ps.arp_op == 1 && !memcmp(ps.arp_tpa, gw, 4) &&
		      !memcmp(ps.arp_sha, mac, 6),
	      "ARP request round trip");
	n = lr_build_arp(buf, 7, 2, mac, ip, mac, gw, mac);
	CHECK(lr_parse(buf, n, &ps) == LR_KIND_ARP && ps.vlan == 7 && ps.arp_op == 2, "tagged ARP reply");
	struct lr_ip me = {{0x20, 0x01, [15] = 2}}, target = {{0x20, 0x01, [15] = 1}};
	n = lr_build_ns(buf, 0, mac, &me, &target);
	CHECK(lr_parse(buf, n, &ps) == LR_KIND_NS && !memcmp(ps.nd_target.b, target.b, 16) && ps.nd_lladdr &&
		      !memcmp(ps.nd_lladdr, mac, 6) && buf[0] == 0x33 && buf[5] == 1,
	      "NS round trip to the solicited-node group");
	/* ICMPv6 checksum over pseudo-header + message must verify */
	uint32_t sum = 0;
	for (int i = 0; i < 32; i += 2)
		sum += rd16(buf + 14 + 8 + i);
	sum += 32 + 58;
	for (int i = 0; i < 32; i += 2)
		sum += rd16(buf + 54 + i);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	CHECK(sum == 0xffff, "ICMPv6 checksum");
	n = lr_build_na(buf, 0, mac, mac, &target, &me);
	CHECK(lr_parse(buf, n, &ps) == LR_KIND_NA && ps.nd_lladdr && !memcmp(ps.nd_lladdr, mac, 6), "NA round trip");
}

static void test_seqwin(void)
{
	static uint64_t bits[1024 / 64];
	struct lr_seqwin w;
	lr_seqwin_init(&w, bits, 1024);
	uint64_t order[] = {0, 1, 2, 5, 3, 4, 4, 6, 9, 7, 8};
	for (unsigned i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		lr_seqwin_add(&w, order[i]);
	CHECK(w.rx == 11 && w.dup == 1 && w.reordered == 4 && w.max_late == 2, "rx %lu dup %lu reord %lu late %lu",
	      (unsigned long)w.rx, (unsigned long)w.dup, (unsigned long)w.reordered, (unsigned long)w.max_late);
	/* 5 came with 3 and 4 missing, 9 with 7 and 8 missing */
	CHECK(w.early == 2 && w.max_early == 2, "early %lu max %lu", (unsigned long)w.early, (unsigned long)w.max_early);
	/* the window slides: a sequence number 1024 later reuses the bit and is not a duplicate */
	lr_seqwin_reset(&w);
	for (uint64_t s = 0; s < 5000; s++)
		lr_seqwin_add(&w, s);
	CHECK(w.dup == 0 && w.reordered == 0, "long in-order run: dup %lu", (unsigned long)w.dup);
	CHECK(lr_seqwin_add(&w, 4999) == LR_SEQ_DUPLICATE, "recent duplicate");
	CHECK(lr_seqwin_add(&w, 10) == LR_SEQ_BEYOND && w.beyond == 1, "older than the window");
	/* a gap larger than the window clears it */
	CHECK(lr_seqwin_add(&w, 100000) == LR_SEQ_IN_ORDER && w.early == 1 && w.max_early == 100000 - 5000, "jump");
	CHECK(lr_seqwin_add(&w, 99990) == LR_SEQ_REORDERED, "inside the window after a jump");
	lr_seqwin_reset(&w);
	for (uint64_t s = 0; s < 3000; s += 2)
		lr_seqwin_add(&w, s);
	for (uint64_t s = 2001; s < 2998; s += 2)
		CHECK(lr_seqwin_add(&w, s) == LR_SEQ_REORDERED, "odd %lu late", (unsigned long)s);
}

/* The window against a model that remembers every number it saw: in-order/early, reordered, duplicate
 * and beyond-the-window must come out the same for random traffic with gaps shorter and longer than the
 * window, across resets. */
static void test_seqwin_model(void)
{
	enum { MAXSEQ = 1 << 21 };
	static uint8_t seen[MAXSEQ];
	static const uint64_t sizes[] = {64, 256, 4096};
	uint64_t x = 88172645463325252ull;
	for (unsigned z = 0; z < 3; z++) {
		uint64_t nbits = sizes[z];
		uint64_t *bits = lr_seqwin_alloc(nbits);
		CHECK(bits != NULL, "window of %lu bits", (unsigned long)nbits);
		struct lr_seqwin w;
		lr_seqwin_init(&w, bits, nbits);
		for (unsigned trial = 0; trial < 20; trial++) {
			lr_seqwin_reset(&w);
			memset(seen, 0, sizeof(seen));
			uint64_t next = 0, early = 0, dup = 0, reord = 0, beyond = 0;
			for (unsigned k = 0; k < 50000; k++) {
				x ^= x << 13, x ^= x >> 7, x ^= x << 17;
				uint64_t r = x % 1000, seq;
				if (r < 5)
					seq = next + 1 + (x >> 20) % (3 * nbits); /* a gap, sometimes longer than the window */
				else if (r < 60 && next)
					seq = next - 1 - (x >> 20) % (next < 2 * nbits ? next : 2 * nbits);
				else
					seq = next;
				if (seq >= MAXSEQ)
					break;
				enum lr_seq_class want;
				if (seq >= next) {
					want = LR_SEQ_IN_ORDER;
					early += seq > next;
					next = seq + 1;
				} else if (next - seq > nbits) {
					want = LR_SEQ_BEYOND;
					beyond++;
				} else if (seen[seq]) {
					want = LR_SEQ_DUPLICATE;
					dup++;
				} else {
					want = LR_SEQ_REORDERED;
					reord++;
				}
				if (want != LR_SEQ_BEYOND)
					seen[seq] = 1;
				enum lr_seq_class got = lr_seqwin_add(&w, seq);
				if (got != want) {
					CHECK(0, "window %lu trial %u frame %u seq %lu: class %d, want %d", (unsigned long)nbits,
					      trial, k, (unsigned long)seq, got, want);
					break;
				}
			}
			CHECK(w.early == early && w.dup == dup && w.reordered == reord && w.beyond == beyond,
			      "window %lu counts", (unsigned long)nbits);
		}
		lr_seqwin_free(bits, nbits);
	}
}

/* A range set a word at a time is the same as its numbers set one by one, as lr_seqwin_add sets an
 * in-order number: from any bit pattern, at any place in the window, across its end, for any length. */
static void test_seqwin_set_range(void)
{
	enum { NBITS = 1024 };
	static uint64_t got[NBITS / 64], want[NBITS / 64];
	uint64_t x = 0x9e3779b97f4a7c15ull;
	for (unsigned k = 0; k < 20000; k++) {
		for (unsigned i = 0; i < NBITS / 64; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			got[i] = want[i] = k % 3 ? x : 0;
		}
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		/* lengths 0..200 mostly, and now and then longer than the whole window */
		uint64_t from = (x >> 8) % (1ull << 40), len = k % 97 ? x % 201 : x % (3ull * NBITS);
		if (k % 5 == 0)
			from = from / NBITS * NBITS + NBITS - x % 70; /* ending across the window's end */
		for (uint64_t s = from; s < from + len; s++)
			want[(s & (NBITS - 1)) >> 6] |= 1ull << (s & 63);
		lr_seqwin_set_range(got, NBITS - 1, from, from + len);
		if (memcmp(got, want, sizeof(got)) != 0) {
			CHECK(0, "set range %lu + %lu", (unsigned long)from, (unsigned long)len);
			return;
		}
	}
}

static long resident_kib(void)
{
	char line[128] = "";
	FILE *f = fopen("/proc/self/statm", "r"); /* "SIZE RESIDENT ..." in pages */
	if (f) {
		if (fgets(line, sizeof(line), f) == NULL)
			line[0] = 0;
		fclose(f);
	}
	char *end;
	strtol(line, &end, 10);
	long rss = strtol(end, NULL, 10);
	return rss * (sysconf(_SC_PAGESIZE) / 1024);
}

/* A window sized for a long trial at line rate (here 2^33 numbers, 1 GiB) costs memory only for what
 * arrived: a few frames, a gap of half the window and a reset leave it almost all unmapped. */
static void test_seqwin_large(void)
{
	uint64_t nbits = 1ull << 33;
	uint64_t *bits = lr_seqwin_alloc(nbits);
	CHECK(bits != NULL, "1 GiB window");
	if (!bits)
		return;
	long before = resident_kib();
	struct lr_seqwin w;
	lr_seqwin_init(&w, bits, nbits);
	for (int t = 0; t < 3; t++) {
		for (uint64_t s = 0; s < 100000; s++)
			lr_seqwin_add(&w, s);
		CHECK(lr_seqwin_add(&w, nbits / 2) == LR_SEQ_IN_ORDER && lr_seqwin_add(&w, 5) == LR_SEQ_DUPLICATE, "gap");
		CHECK(lr_seqwin_add(&w, nbits + 1000) == LR_SEQ_IN_ORDER && w.early == 2, "wrapped");
		CHECK(lr_seqwin_add(&w, nbits / 2) == LR_SEQ_DUPLICATE, "seen before the wrap, still in the window");
		CHECK(lr_seqwin_add(&w, nbits + 500) == LR_SEQ_REORDERED, "position 500 reused: seq 500's bit was cleared");
		lr_seqwin_reset(&w);
	}
	long grown = resident_kib() - before;
	CHECK(grown < 16L * 1024, "a 1 GiB window made %ld KiB resident", grown);
	lr_seqwin_free(bits, nbits);
}

static void test_hist(void)
{
	static struct lr_hist h;
	lr_hist_reset(&h);
	CHECK(lr_hist_quantile(&h, 0.5) == 0, "empty");
	for (uint64_t v = 1; v <= 100000; v++)
		lr_hist_add(&h, v * 10); /* 10 ns .. 1 ms, uniform */
	CHECK(h.min == 10 && h.max == 1000000 && h.sum / h.count == 500005, "min/max/mean");
	double qs[] = {0.5, 0.9, 0.99, 0.999, 0.9999};
	for (unsigned i = 0; i < 5; i++) {
		/* the nearest-rank sample is exactly q * 1 ms (10 ns steps): within 0.05 % */
		double want = qs[i] * 1e6, got = (double)lr_hist_quantile(&h, qs[i]);
		CHECK(got >= want * (1 - 0.0005) && got <= want * (1 + 0.0005), "q%.4f: %.0f for %.0f", qs[i], got, want);
		CHECK((double)lr_hist_resolution(&h, qs[i]) <= want / (2.0 * LR_HIST_SUB) + 1, "q%.4f: resolution %lu", qs[i],
		      (unsigned long)lr_hist_resolution(&h, qs[i]));
	}
	for (uint64_t v = 0; v < LR_HIST_SUB; v++)
		CHECK(lr_hist_lower(lr_hist_index(v)) == v && lr_hist_upper(lr_hist_index(v)) == v, "exact below %u ns", LR_HIST_SUB);
	/* every value in the bucket its index names, buckets contiguous and of widths that keep a value within
	 * 1/LR_HIST_SUB of its bucket's bounds */
	for (uint64_t v = LR_HIST_SUB; v < (1ull << 32); v = v * 3 / 2 + 1) {
		unsigned i = lr_hist_index(v);
		CHECK(i < LR_HIST_BUCKETS && lr_hist_lower(i) <= v && v <= lr_hist_upper(i) && lr_hist_upper(i - 1) + 1 == lr_hist_lower(i) &&
			      (double)lr_hist_width(i) <= (double)v / LR_HIST_SUB + 1,
		      "bucket of %lu", (unsigned long)v);
	}
	CHECK(lr_hist_index(UINT32_MAX) == LR_HIST_BUCKETS - 1 && lr_hist_upper(LR_HIST_BUCKETS - 1) == UINT32_MAX, "the last bucket");
	/* jitter of a constant delay is 0; of an alternating one converges to the step */
	lr_hist_reset(&h);
	for (int i = 0; i < 1000; i++)
		lr_hist_add(&h, i % 2 ? 1000 : 2000);
	CHECK(h.j16 / 16 >= 990 && h.j16 / 16 <= 1000, "jitter %lu", (unsigned long)(h.j16 / 16));

	/* lr_hist_count(v, n) is n frames that are no jitter samples: the same counts as n lr_hist_add(v)
	 * (whose differences after the first are 0), the jitter left as it was */
	static struct lr_hist a, b;
	lr_hist_reset(&a);
	lr_hist_reset(&b);
	uint64_t x = 12345;
	for (int r = 0; r < 20000; r++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		uint64_t v = (x >> 40) % (r % 3 ? 5000 : 70), n = (x >> 20) % 40;
		uint64_t j16 = a.j16;
		lr_hist_count(&a, v, n);
		CHECK(a.j16 == j16, "lr_hist_count changed the jitter");
		for (uint64_t k = 0; k < n; k++)
			lr_hist_add(&b, v);
		a.j16 = b.j16;
	}
	CHECK(memcmp(&a, &b, sizeof(a)) == 0 && a.count > 100000,
	      "lr_hist_count = n x lr_hist_add but the jitter (%lu frames)", (unsigned long)a.count);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The per-trial latency figures against a hand computation from the recorded samples: min, max and mean
 * exact; each percentile (rank ceil(q n), as the nearest-rank definition) the upper bound of the bucket that
 * holds the exact order statistic, so exact <= reported <= exact + the bucket's width (< 1/32 of it); PDV
 * (p99.9 - min) likewise. The figures are derived as control_report.c's put_latency derives them, from a
 * trial's histogram: two RX queues' histograms merged, bursts of one latency recorded by lr_hist_count.
 * The samples are chosen so that a percentile one bucket off, or taken one step too low (p99 as p98, p99.9
 * as p99.8), is another number: the test checks that about its own data too. */
static void test_hist_trial_figures(void)
{
	enum { NMAX = 1237 };
	static uint64_t v[NMAX], sorted[NMAX];
	static struct lr_hist q0, q1, h;
	static const unsigned ns[] = {1000, 1237};
	/* the quantiles reported, in thousandths (the nearest-rank is computed in integers from these) and the
	 * step below each that the data must tell apart from it */
	static const struct {
		double q;
		uint64_t per10k, below10k;
	} qs[] = {{0.5, 5000, 4900}, {0.9, 9000, 8900}, {0.99, 9900, 9800}, {0.999, 9990, 9980}, {0.9999, 9999, 9990}};
	for (unsigned ni = 0; ni < sizeof(ns) / sizeof(ns[0]); ni++) {
		unsigned n = ns[ni];
		/* a body spread log-uniformly over 1 .. 64 us (a percentile step of 1 % is a few buckets), and
		 * outliers: one below everything (in the exact range, < LR_HIST_SUB ns), and 0.9 ms, 7 ms, 300 ms
		 * and 4 s at the top */
		uint64_t x = 0x9e3779b97f4a7c15ull + n;
		for (unsigned i = 0; i < n; i++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			uint64_t octave = (x >> 33) % 6, mant = 1024 + (x >> 40) % 1024;
			v[i] = (mant * 1000 >> 10) << octave;
		}
		static const uint64_t outliers[] = {17, 900000, 7000000, 300000000, 4000000000};
		for (unsigned k = 0; k < 5; k++)
			v[(k * 397 + 11) % n] = outliers[k];
		memcpy(sorted, v, n * sizeof(v[0]));
		qsort(sorted, n, sizeof(sorted[0]), cmp_u64);
		uint64_t sum = 0;
		for (unsigned i = 0; i < n; i++)
			sum += v[i];

		/* two RX queues, merged into the trial's histogram; runs of equal latency (a TX burst) as one
		 * lr_hist_count, the first of each a jitter sample (lr_add_latency) */
		lr_hist_reset(&q0);
		lr_hist_reset(&q1);
		for (unsigned i = 0; i < n;) {
			struct lr_hist *q = (i / 7) % 2 ? &q1 : &q0;
			unsigned run = 1 + i % 3;
			if (i + run > n)
				run = n - i;
			lr_hist_add(q, v[i]);
			for (unsigned j = 1; j < run; j++)
				lr_hist_count(q, v[i + j], 1);
			i += run;
		}
		lr_hist_reset(&h);
		lr_hist_merge(&h, &q0);
		lr_hist_merge(&h, &q1);

		CHECK(h.count == n, "count %lu of %u", (unsigned long)h.count, n);
		CHECK(h.min == sorted[0] && h.max == sorted[n - 1], "min %lu max %lu, exact %lu %lu", (unsigned long)h.min,
		      (unsigned long)h.max, (unsigned long)sorted[0], (unsigned long)sorted[n - 1]);
		CHECK(h.sum / h.count == sum / n, "mean %lu, exact %lu", (unsigned long)(h.sum / h.count), (unsigned long)(sum / n));
		uint64_t p999 = 0, exact999 = 0;
		for (unsigned k = 0; k < sizeof(qs) / sizeof(qs[0]); k++) {
			uint64_t rank = (qs[k].per10k * n + 9999) / 10000, below = (qs[k].below10k * n + 9999) / 10000;
			uint64_t exact = sorted[rank - 1], lower = sorted[below - 1];
			uint64_t got = lr_hist_quantile(&h, qs[k].q);
			/* the bucket of the exact value: its middle, never outside the samples */
			unsigned bi = lr_hist_index(exact);
			uint64_t want = lr_hist_lower(bi) + (lr_hist_width(bi) - 1) / 2;
			if (want > h.max)
				want = h.max;
			if (want < h.min)
				want = h.min;
			CHECK(got == want, "n=%u q%.4f: %lu, exact %lu (rank %lu), its bucket %lu", n, qs[k].q, (unsigned long)got,
			      (unsigned long)exact, (unsigned long)rank, (unsigned long)want);
			uint64_t off = got > exact ? got - exact : exact - got;
			CHECK(off <= lr_hist_width(bi) / 2 && (double)off <= (double)exact / (2.0 * LR_HIST_SUB),
			      "n=%u q%.4f: %lu not within half a bucket (0.05 %%) of the exact %lu", n, qs[k].q, (unsigned long)got,
			      (unsigned long)exact);
			/* the data tells this percentile from the step below it and from the neighbouring buckets */
			CHECK(lr_hist_index(lower) < lr_hist_index(exact), "n=%u q%.4f: the test's data is in one bucket at %lu and %lu",
			      n, qs[k].q, (unsigned long)lower, (unsigned long)exact);
			CHECK(got > lr_hist_upper(bi - 1) && got < lr_hist_lower(bi + 1), "n=%u q%.4f: a neighbouring bucket", n, qs[k].q);
			if (qs[k].per10k == 9990)
				p999 = got, exact999 = exact;
		}
		/* PDV as RESULT reports it: p99.9 - min, within half of p99.9's bucket of the exact one */
		int64_t pdv = (int64_t)(p999 - h.min), exact_pdv = (int64_t)(exact999 - sorted[0]);
		CHECK(pdv - exact_pdv == (int64_t)p999 - (int64_t)exact999 &&
			      (double)llabs(pdv - exact_pdv) <= (double)exact999 / (2.0 * LR_HIST_SUB),
		      "n=%u PDV %ld, exact %ld", n, (long)pdv, (long)exact_pdv);
	}
}

int main(void)
{
	test_frames();
	test_stamp_edges();
	test_arp_nd();
	test_seqwin();
	test_seqwin_model();
	test_seqwin_set_range();
	test_seqwin_large();
	test_hist();
	test_hist_trial_figures();
	if (failures) {
		fprintf(stderr, "%d failures\n", failures);
		return 1;
	}
	printf("unit tests: all passed\n");
	return 0;
}
