/* Frames on the wire: building the test frames, the 18-byte tag, ARP/ND, and parsing whatever arrives.
 *
 * Nothing here depends on DPDK: the parser is fuzzed and unit-tested as plain C, and the fast path
 * calls the same functions on mbuf data. Multi-byte fields on the wire are big-endian.
 */
#ifndef LR_FRAME_H
#define LR_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

static inline uint16_t lr_get16(const uint8_t *p) { return (uint16_t)((p[0] << 8) | p[1]); }

static inline uint32_t lr_get32(const uint8_t *p) { return ((uint32_t)lr_get16(p) << 16) | lr_get16(p + 2); }

#define LR_TAG_MAGIC 0x4C52u /* "LR" */
#define LR_TAG_LEN 18u
#define LR_FCS_LEN 4u
#define LR_MIN_FRAME 64u
#define LR_MAX_FRAME 9216u

/* flags: bit 0 marks warm-up frames; bits 1-7 carry the trial number modulo 128 so that frames of an
 * earlier trial that arrive late are never counted as frames of the current one. */
#define LR_FLAG_WARMUP 0x01u
#define LR_TRIAL_BITS(trial) ((uint8_t)(((trial) & 0x7fu) << 1))

struct lr_tag {
	uint8_t flags;
	uint8_t stream;
	uint64_t seq;
	uint32_t ts_ns; /* TX time in ns modulo 2^32 */
	uint16_t flow;
};

/* Addresses are kept in network byte order; IPv4 uses the first 4 bytes. */
struct lr_ip {
	uint8_t b[16];
};

struct lr_hdr_cfg {
	uint8_t src_mac[6];
	uint8_t dst_mac[6];
	uint16_t vlan; /* 0: untagged */
	int l3;        /* 4 or 6 */
	struct lr_ip src, dst;
	uint16_t sport, dport;
	uint8_t dscp;
	/* IPv4 with DF clear: a hop may fragment the frame (STREAM df=0), and each frame carries an IP ID of
	 * its own (lr_ip_id), which a hop copies into every fragment and the receiver matches them by */
	bool fragmentable;
};

/* Which header fields change with the flow index. */
#define LR_VARY_SPORT 0x1u
#define LR_VARY_DPORT 0x2u
#define LR_VARY_SRC 0x4u
#define LR_VARY_DST 0x8u

enum lr_payload { LR_PAYLOAD_ZEROS, LR_PAYLOAD_INCREMENTING, LR_PAYLOAD_RANDOM };

/* A prebuilt frame of one size: the fast path copies it and patches flow fields, tag and checksums. */
struct lr_tmpl {
	uint16_t frame_size; /* with FCS */
	uint16_t len;        /* bytes handed to the NIC: frame_size - FCS */
	uint16_t l3_off, l4_off, tag_off;
	int l3;
	/* One's-complement sum of the UDP pseudo-header and datagram with addresses, ports, tag and
	 * checksum left out; the per-frame fields are added to it. */
	uint32_t base_sum;
	/* With lr_tmpl_fix_flow: the sum with the fixed addresses and ports included too. */
	uint32_t fixed_sum;
	uint8_t *data;
	bool fragmentable; /* lr_hdr_cfg's: lr_frame_write gives each frame its IP ID */
};

/* The IP ID of frame seq (its lane's number, engine.h) of a stream, tag flags flags: the count's low 16
 * bits, the lane (seq's bit 44 on, in bits 12-14), the stream (bits 8-15) and the flags (the trial's number
 * and warm-up, times an odd constant) mixed in, so that the frames that are on their way at once (the same moment's, of
 * other lanes and streams, a warm-up frame and the measured frame of its number, two trials') rarely share
 * an ID between one source and destination (RFC 6864: unique within the datagrams' lifetime, which at a
 * tester's rates is milliseconds; a lane's IDs repeat after 65,536 frames). Rarely, not never: 16 bits. */
static inline uint16_t lr_ip_id(uint64_t seq, uint8_t stream, uint8_t flags)
{
	return (uint16_t)(seq ^ (seq >> 32) ^ ((uint64_t)stream << 8) ^ ((uint64_t)flags * 0x9Du));
}

size_t lr_hdr_len(int l3, bool vlan);
/* The smallest frame (with FCS) that holds the headers and the tag. */
unsigned lr_min_frame(int l3, bool vlan);

/* Builds the template for one frame size into t->data (caller provides len bytes). */
void lr_tmpl_build(struct lr_tmpl *t, const struct lr_hdr_cfg *c, unsigned frame_size, enum lr_payload payload,
		   const uint8_t *random_bytes, size_t random_len);

/* Per-frame fields. */
struct lr_flow_fields {
	struct lr_ip src, dst;
	uint16_t sport, dport;
};

/* Derives the header fields of flow index f. */
void lr_flow_fields(const struct lr_hdr_cfg *c, unsigned vary, uint32_t f, struct lr_flow_fields *out);

/* Writes the template patched for one frame into pkt: the first copy_len bytes are copied from the
 * template (t->len for a full frame), the rest of pkt must already hold the template's bytes. */
void lr_frame_write(uint8_t *pkt, const struct lr_tmpl *t, const struct lr_flow_fields *ff,
		    const struct lr_tag *tag, size_t copy_len);

/* The longest header + tag of any frame (VLAN, IPv6, UDP, tag): a zero payload beyond it never needs
 * rewriting. */
#define LR_MAX_HDR_TAG (18u + 40u + 8u + LR_TAG_LEN)

/* Writes the flow fields into the template itself (for streams whose headers do not vary), so each frame
 * needs only the tag and the UDP checksum: lr_tmpl_stamp and lr_frame_write_seq. */
void lr_tmpl_fix_flow(struct lr_tmpl *t, const struct lr_flow_fields *ff);

static inline uint16_t lr_bswap16(uint16_t v) { return (uint16_t)((v << 8) | (v >> 8)); }

/* A zero-payload frame of at most this many bytes (a 64 B IPv4 frame: 60 in the mbuf) is copied as one cache
 * line: the 84 bytes of LR_MAX_HDR_TAG would write a second line of every mbuf, which nothing on the wire
 * reads, and its write miss was the dearest store of the 64 B TX path. */
#define LR_COPY_LINE 64u

/* Copies the first copy_len bytes of the template (at most its length). copy_len == LR_MAX_HDR_TAG or
 * LR_COPY_LINE (a zero-payload stream) copies exactly that many bytes even past a shorter frame's end, as
 * one constant-size inlined copy instead of a library call: pkt and t->data must have that room (an mbuf
 * and a template buffer always do), and every frame written there later overwrites the same bytes or fewer
 * (none past LR_MAX_HDR_TAG, so the zeros behind stay). */
static inline void lr_copy_head(uint8_t *pkt, const struct lr_tmpl *t, size_t copy_len)
{
	if (copy_len == LR_COPY_LINE)
		__builtin_memcpy(pkt, t->data, LR_COPY_LINE);
	else if (copy_len == LR_MAX_HDR_TAG)
		__builtin_memcpy(pkt, t->data, LR_MAX_HDR_TAG);
	else
		__builtin_memcpy(pkt, t->data, copy_len < t->len ? copy_len : t->len);
}

/* The fast path of a fixed-header stream. Within one burst its frames differ only in the sequence
 * number: lr_tmpl_stamp writes the other tag fields into the template once per burst and returns their
 * checksum sum; lr_frame_write_seq then copies copy_len template bytes, writes the sequence number and
 * patches the UDP checksum (the worker: lr_frame_write_seq_sum, and the checksum comes with the TX stamp,
 * lr_frame_stamp_sum). The template's tag bytes are not part of its sums, so stamping them is free
 * to repeat. */
/* The tag's fields but the sequence number, written at p (a tag's first byte). */
static inline void lr_tag_put_fixed(uint8_t *p, const struct lr_tag *tag)
{
	uint16_t w0 = lr_bswap16(LR_TAG_MAGIC), w1 = (uint16_t)(tag->flags | (tag->stream << 8));
	uint32_t ts = __builtin_bswap32(tag->ts_ns);
	uint16_t flow = lr_bswap16(tag->flow);
	__builtin_memcpy(p, &w0, 2);
	__builtin_memcpy(p + 2, &w1, 2);
	__builtin_memcpy(p + 12, &ts, 4);
	__builtin_memcpy(p + 16, &flow, 2);
}

/* The checksum sum of template t with the tag's fields but the sequence number (lr_tmpl_stamp's). */
static inline uint64_t lr_tmpl_tag_sum(const struct lr_tmpl *t, const struct lr_tag *tag)
{
	uint64_t sum = (uint64_t)t->fixed_sum + LR_TAG_MAGIC + (uint32_t)((tag->flags << 8) | tag->stream) +
		       (tag->ts_ns >> 16) + (tag->ts_ns & 0xffff) + tag->flow;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum;
}

static inline uint64_t lr_tmpl_stamp(struct lr_tmpl *t, const struct lr_tag *tag)
{
	lr_tag_put_fixed(t->data + t->tag_off, tag);
	return lr_tmpl_tag_sum(t, tag);
}

/* The frame of sequence number seq but its UDP checksum: returns its sum but the checksum (folded, 1 ..
 * 0xffff), which lr_frame_write_seq or lr_frame_stamp_sum writes. */
static inline uint32_t lr_frame_write_seq_sum(uint8_t *pkt, const struct lr_tmpl *t, uint64_t stamp_sum, uint64_t seq,
					      size_t copy_len)
{
	lr_copy_head(pkt, t, copy_len);
	uint64_t be = __builtin_bswap64(seq);
	__builtin_memcpy(pkt + t->tag_off + 4, &be, 8);
	uint64_t sum = stamp_sum + (seq >> 48) + ((seq >> 32) & 0xffff) + ((seq >> 16) & 0xffff) + (seq & 0xffff);
	/* stamp_sum is folded, so sum < 5 * 2^16: two folds always suffice */
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint32_t)sum;
}

static inline void lr_frame_write_seq(uint8_t *pkt, const struct lr_tmpl *t, uint64_t stamp_sum, uint64_t seq,
				      size_t copy_len)
{
	uint16_t c = (uint16_t)~lr_frame_write_seq_sum(pkt, t, stamp_sum, seq, copy_len);
	c = lr_bswap16(c ? c : 0xffff);
	__builtin_memcpy(pkt + t->l4_off + 6, &c, 2);
}

/* Re-stamps a built frame with a later TX time (ns modulo 2^32) and updates its UDP checksum incrementally
 * (RFC 1624): a frame the PMD handed back is sent later, and its stamp must say when. */
static inline void lr_frame_restamp(uint8_t *pkt, uint16_t l4_off, uint16_t tag_off, uint32_t ts_ns)
{
	uint8_t *p = pkt + tag_off + 12, *c = pkt + l4_off + 6;
	uint32_t old = lr_get32(p);
	uint32_t sum = (uint16_t)~lr_get16(c);
	sum += (uint16_t)~(old >> 16);
	sum += (uint16_t)~(old & 0xffff);
	sum += (ts_ns >> 16) + (ts_ns & 0xffff);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	uint16_t csum = (uint16_t)~sum;
	uint32_t be = __builtin_bswap32(ts_ns);
	__builtin_memcpy(p, &be, 4);
	csum = lr_bswap16(csum ? csum : 0xffff);
	__builtin_memcpy(c, &csum, 2);
}

/* The TX stamp of a burst as the fast path writes it: its wire bytes and the sum of its two 16-bit words,
 * computed once per burst by lr_stamp_of. */
struct lr_stamp {
	uint32_t be;  /* ts_ns big-endian, as stored */
	uint32_t sum; /* ts_ns's two words added: < 2^17 */
};

static inline struct lr_stamp lr_stamp_of(uint32_t ts_ns)
{
	return (struct lr_stamp){.be = __builtin_bswap32(ts_ns), .sum = (ts_ns >> 16) + (ts_ns & 0xffff)};
}

/* Stamps a frame that was built with ts_ns = 0: writes the stamp, and the UDP checksum with it. sum: the
 * frame's sum but its checksum with the zero stamp, as lr_frame_write_seq_sum returns it (or ~checksum of a
 * complete frame: 0 for a checksum sent as 0xffff is the same in one's complement); the stamp's words were
 * zero, nothing to take out (RFC 1624). The result is byte for byte the frame built with the stamp. No load
 * from the frame: two stores and a few adds, what the fast path pays per frame to stamp a built burst at
 * the last moment before handing it to the PMD. */
static inline void lr_frame_stamp_sum(uint8_t *pkt, uint16_t l4_off, uint16_t tag_off, struct lr_stamp st,
				      uint32_t sum)
{
	/* sum <= 0xffff, with the stamp's words < 2^16 + 2^17: two folds suffice */
	sum += st.sum;
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	uint16_t csum = (uint16_t)~sum;
	csum = lr_bswap16(csum ? csum : 0xffff);
	__builtin_memcpy(pkt + tag_off + 12, &st.be, 4);
	__builtin_memcpy(pkt + l4_off + 6, &csum, 2);
}

void lr_tag_put(uint8_t *p, const struct lr_tag *t);
static inline bool lr_tag_get(const uint8_t *p, struct lr_tag *t)
{
	if (lr_get16(p) != LR_TAG_MAGIC)
		return false;
	t->flags = p[2];
	t->stream = p[3];
	t->seq = ((uint64_t)lr_get32(p + 4) << 32) | lr_get32(p + 8);
	t->ts_ns = lr_get32(p + 12);
	t->flow = lr_get16(p + 16);
	return true;
}

/* Internet checksum helpers. */
uint32_t lr_sum16(const void *data, size_t len, uint32_t sum);
uint16_t lr_fold(uint32_t sum);

enum lr_kind {
	LR_KIND_FOREIGN = 0,
	LR_KIND_TAGGED,
	LR_KIND_ARP,
	LR_KIND_NS, /* IPv6 neighbour solicitation */
	LR_KIND_NA, /* IPv6 neighbour advertisement */
	/* ICMP "fragmentation needed" (IPv4, type 3 code 4) or ICMPv6 "packet too big" (type 2) that quotes one
	 * of our tagged frames: a hop refused it for its MTU and said so */
	LR_KIND_TOO_BIG,
	/* IPv4 fragments of a UDP datagram (a frame sent with DF clear that a hop fragmented): the first
	 * carries the UDP header and the tag, the others only the IP header's source, destination and ID,
	 * by which they are matched to the first (rx.c) */
	LR_KIND_FRAG_FIRST,
	LR_KIND_FRAG_REST,
};

struct lr_parsed {
	enum lr_kind kind;
	uint16_t vlan; /* 0: untagged */
	const uint8_t *eth_src;
	/* TAGGED */
	int l3;
	struct lr_tag tag;
	uint32_t frame_size; /* bytes received + FCS */
	/* ARP */
	uint16_t arp_op;
	const uint8_t *arp_sha;
	uint8_t arp_spa[4], arp_tpa[4];
	/* NS/NA */
	struct lr_ip nd_src;     /* IPv6 source of the packet */
	struct lr_ip nd_target;  /* target address */
	const uint8_t *nd_lladdr; /* source (NS) or target (NA) link-layer address option, may be NULL */
	/* TOO_BIG: the MTU the hop names (0: it named none, as pre-RFC 1191 routers do), and the stream of the
	 * frame it quotes */
	uint32_t too_big_mtu;
	uint8_t too_big_stream, too_big_flags; /* the quoted frame's stream and tag flags (its trial's bits) */
	/* FRAG_FIRST and FRAG_REST: what the fragments of one datagram share (RFC 791), as read (network
	 * order); FRAG_FIRST has the tag too, and frame_size the whole frame's, from the UDP length */
	uint32_t frag_src, frag_dst;
	uint16_t frag_id;
	/* where in the datagram this fragment starts (bytes), the bytes it carries, and where the datagram
	 * ends if it is the last (MF clear; else 0) */
	uint16_t frag_off, frag_len, frag_end;
};

/* The rarer kinds, out of line: the bodies of ARP (after the Ethernet header) and ICMPv6 ND. */
enum lr_kind lr_parse_arp(const uint8_t *l3, size_t avail, struct lr_parsed *out);
enum lr_kind lr_parse_icmp6(const uint8_t *ip, const uint8_t *icmp, size_t avail, struct lr_parsed *out);
enum lr_kind lr_parse_icmp4(const uint8_t *icmp, size_t avail, struct lr_parsed *out);
/* An IPv4 fragment of UDP (ip: its header of ihl bytes, tot its total length; l2: the bytes before it). */
enum lr_kind lr_parse_fragment(const uint8_t *ip, size_t ihl, size_t tot, size_t l2, struct lr_parsed *out);

/* A UDP datagram (avail bytes of IP payload) that carries a tag. */
static inline bool lr_udp_tag(const uint8_t *udp, size_t avail, struct lr_tag *tag)
{
	if (avail < 8)
		return false;
	uint16_t ulen = lr_get16(udp + 4);
	if (ulen < 8 + LR_TAG_LEN || ulen > avail)
		return false;
	return lr_tag_get(udp + 8, tag);
}

static inline enum lr_kind lr_parse_udp(const uint8_t *udp, size_t avail, struct lr_parsed *out)
{
	return lr_udp_tag(udp, avail, &out->tag) ? LR_KIND_TAGGED : LR_KIND_FOREIGN;
}

/* The receiver's common case first: an untagged IPv4 (no options) or IPv6 UDP test frame. True: the tag
 * is read, as lr_parse would have read it. False: not that case, lr_parse decides (the fuzz target checks
 * that they agree). Fills nothing but the tag, which can stay in registers. */
static inline bool lr_parse_tag(const uint8_t *p, size_t len, struct lr_tag *tag)
{
	if (len < 14 + 20 + 8 + LR_TAG_LEN)
		return false;
	uint16_t type = lr_get16(p + 12);
	const uint8_t *ip = p + 14;
	if (type == 0x0800) {
		size_t tot = lr_get16(ip + 2);
		if (ip[0] != 0x45 || ip[9] != 17 || (lr_get16(ip + 6) & 0x3fff) != 0 || tot < 20 || tot > len - 14)
			return false;
		return lr_udp_tag(ip + 20, tot - 20, tag);
	}
	if (type == 0x86dd) {
		if (len < 14 + 40 + 8 + LR_TAG_LEN || (ip[0] >> 4) != 6 || ip[6] != 17)
			return false;
		size_t plen = lr_get16(ip + 4);
		if (plen > len - 14 - 40)
			return false;
		return lr_udp_tag(ip + 40, plen, tag);
	}
	return false;
}

static inline uint64_t lr_load64(const uint8_t *p)
{
	uint64_t v;
	__builtin_memcpy(&v, p, 8);
	return v;
}

static inline uint32_t lr_load32(const uint8_t *p)
{
	uint32_t v;
	__builtin_memcpy(&v, p, 4);
	return v;
}

static inline uint16_t lr_load16(const uint8_t *p)
{
	uint16_t v;
	__builtin_memcpy(&v, p, 2);
	return v;
}

/* A tag's first 4 bytes (magic, flags, stream) as they are in memory, read by lr_load32. */
static inline uint32_t lr_tag_head(uint8_t flags, uint8_t stream)
{
	return (uint32_t)lr_bswap16(LR_TAG_MAGIC) | (uint32_t)flags << 16 | (uint32_t)stream << 24;
}

/* The tag at t (inside the frame) is the one the receiver expects: its head (lr_tag_head), sequence
 * number seq and flow index flow; *ts_ns is then its timestamp. */
static inline bool lr_tag_is(const uint8_t *t, uint32_t head, uint64_t seq, uint16_t flow, uint32_t *ts_ns)
{
	if (lr_load32(t) != head || __builtin_bswap64(lr_load64(t + 4)) != seq || lr_load16(t + 16) != lr_bswap16(flow))
		return false;
	*ts_ns = __builtin_bswap32(lr_load32(t + 12));
	return true;
}

/* The receiver's most common case, checked against the tag it expects rather than decoded: true when p is
 * an untagged IPv4 (no options) UDP test frame that lr_parse would read as TAGGED with the expected tag (see
 * lr_tag_is). False: anything else, lr_parse_tag or lr_parse decide (the fuzz target checks that this never
 * accepts a frame they would read otherwise). A few wide loads and compares, no decoding of what is known. */
static inline bool lr_is_next_ip4(const uint8_t *p, size_t len, uint32_t head, uint64_t seq, uint16_t flow,
				  uint32_t *ts_ns)
{
	if (len < 14 + 20 + 8 + LR_TAG_LEN)
		return false;
	/* EtherType 0x0800 and version 4 with a 20-byte header; not a fragment (offset and MF zero), UDP */
	uint64_t eth_ip = lr_load64(p + 12);
	if ((eth_ip & 0xffffff) != 0x450008 || (lr_load32(p + 20) & 0xff00ff3fu) != 0x11000000u)
		return false;
	size_t tot = lr_bswap16((uint16_t)(eth_ip >> 32)), ulen = lr_bswap16(lr_load16(p + 38));
	/* the IP packet within the frame, the UDP datagram within the packet and long enough for a tag */
	if (tot > len - 14 || ulen < 8 + LR_TAG_LEN || ulen + 20 > tot)
		return false;
	return lr_tag_is(p + 14 + 20 + 8, head, seq, flow, ts_ns);
}

/* The same for an untagged IPv6 UDP test frame (UDP the first next header). */
static inline bool lr_is_next_ip6(const uint8_t *p, size_t len, uint32_t head, uint64_t seq, uint16_t flow,
				  uint32_t *ts_ns)
{
	if (len < 14 + 40 + 8 + LR_TAG_LEN)
		return false;
	/* EtherType 0x86dd and version 6; next header UDP */
	if ((lr_load32(p + 12) & 0xf0ffffu) != 0x60dd86u || p[20] != 17)
		return false;
	size_t plen = lr_bswap16(lr_load16(p + 18)), ulen = lr_bswap16(lr_load16(p + 14 + 40 + 4));
	if (plen > len - 14 - 40 || ulen < 8 + LR_TAG_LEN || ulen > plen)
		return false;
	return lr_tag_is(p + 14 + 40 + 8, head, seq, flow, ts_ns);
}

/* Either, untagged or behind one 802.1Q tag (as lr_parse, which reads one tag and counts the frame whatever
 * its VLAN id): a tagged frame is an untagged one 4 bytes further on. */
static inline bool lr_is_next(const uint8_t *p, size_t len, uint32_t head, uint64_t seq, uint16_t flow,
			      uint32_t *ts_ns)
{
	if (lr_is_next_ip4(p, len, head, seq, flow, ts_ns) || lr_is_next_ip6(p, len, head, seq, flow, ts_ns))
		return true;
	if (len < 18 || lr_load16(p + 12) != 0x0081) /* 0x8100 */
		return false;
	return lr_is_next_ip4(p + 4, len - 4, head, seq, flow, ts_ns) ||
	       lr_is_next_ip6(p + 4, len - 4, head, seq, flow, ts_ns);
}

/* Classifies a received frame. Never reads outside [p, p+len). Frames too short or inconsistent in
 * any layer are FOREIGN. Inline: it runs on every received frame, and the tag it parses can stay in
 * registers. */
static inline enum lr_kind lr_parse(const uint8_t *p, size_t len, struct lr_parsed *out)
{
	out->kind = LR_KIND_FOREIGN;
	out->vlan = 0;
	out->frame_size = (uint32_t)len + LR_FCS_LEN;
	if (len < 14)
		return LR_KIND_FOREIGN;
	out->eth_src = p + 6;
	uint16_t type = lr_get16(p + 12);
	size_t off = 14;
	if (type == 0x8100) {
		if (len < 18)
			return LR_KIND_FOREIGN;
		out->vlan = lr_get16(p + 14) & 0x0fff;
		type = lr_get16(p + 16);
		off = 18;
	}
	const uint8_t *l3 = p + off;
	size_t avail = len - off;
	switch (type) {
	case 0x0806:
		return out->kind = lr_parse_arp(l3, avail, out);
	case 0x0800: {
		if (avail < 20 || (l3[0] >> 4) != 4)
			return LR_KIND_FOREIGN;
		size_t ihl = (size_t)(l3[0] & 0x0f) * 4;
		size_t tot = lr_get16(l3 + 2);
		if (ihl < 20 || tot < ihl || tot > avail)
			return LR_KIND_FOREIGN;
		out->l3 = 4;
		if ((lr_get16(l3 + 6) & 0x3fff) != 0) /* a fragment: ours only if UDP */
			return out->kind = l3[9] == 17 ? lr_parse_fragment(l3, ihl, tot, off, out) : LR_KIND_FOREIGN;
		if (l3[9] == 17)
			return out->kind = lr_parse_udp(l3 + ihl, tot - ihl, out);
		if (l3[9] == 1)
			return out->kind = lr_parse_icmp4(l3 + ihl, tot - ihl, out);
		return LR_KIND_FOREIGN;
	}
	case 0x86dd: {
		if (avail < 40 || (l3[0] >> 4) != 6)
			return LR_KIND_FOREIGN;
		size_t plen = lr_get16(l3 + 4);
		if (plen > avail - 40)
			return LR_KIND_FOREIGN;
		out->l3 = 6;
		if (l3[6] == 17)
			return out->kind = lr_parse_udp(l3 + 40, plen, out);
		if (l3[6] == 58)
			return out->kind = lr_parse_icmp6(l3, l3 + 40, plen, out);
		return LR_KIND_FOREIGN;
	}
	default:
		return LR_KIND_FOREIGN;
	}
}

/* Control frames; each returns the length written (padded to 60 B), buf must hold 128 bytes. */
size_t lr_build_arp(uint8_t *buf, uint16_t vlan, uint16_t op, const uint8_t *sha, const uint8_t *spa,
		    const uint8_t *tha, const uint8_t *tpa, const uint8_t *dst_mac);
size_t lr_build_ns(uint8_t *buf, uint16_t vlan, const uint8_t *src_mac, const struct lr_ip *src,
		   const struct lr_ip *target);
size_t lr_build_na(uint8_t *buf, uint16_t vlan, const uint8_t *src_mac, const uint8_t *dst_mac,
		   const struct lr_ip *target, const struct lr_ip *dst);

#endif
