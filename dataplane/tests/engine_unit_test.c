/* Unit tests of the engine's DPDK-linked parts that need no EAL and no ports: the reciprocal modulo RX
 * uses to find a frame's flow and IMIX cycle position from its sequence number, and the receiver's faster
 * analysis paths (by bursts, and straight from a frame's bytes) against the frame-by-frame one. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "engine.h"
#include "rxq.h"

struct lr_engine lr; /* the analysis reads the streams and the trial number from it */

static uint64_t xorshift(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static int test_mod(void)
{
	/* 1 (no division), small and prime divisors, a power of two, the largest flow count and cycle length */
	static const uint64_t divisors[] = {1, 2, 3, 7, 10, 12, 1000, 1024, 4093, 65535, 65536, LR_MAX_CYCLE};
	uint64_t x = 0x9e3779b97f4a7c15ull, checked = 0, bad = 0;
	for (unsigned i = 0; i < sizeof(divisors) / sizeof(divisors[0]); i++) {
		uint64_t d = divisors[i];
		struct rte_reciprocal_u64 r = rte_reciprocal_value_u64(d);
		for (unsigned k = 0; k < 200000; k++) {
			/* every small number, numbers near 2^64, and random ones of every magnitude */
			uint64_t a = k < 1000 ? k : k < 2000 ? UINT64_MAX - (k - 1000) : xorshift(&x) >> (k % 64);
			checked++;
			if (lr_mod(a, d, &r) != a % d) {
				if (bad++ < 5)
					fprintf(stderr, "lr_mod(%" PRIu64 ", %" PRIu64 ") = %" PRIu64 ", want %" PRIu64 "\n", a, d,
						lr_mod(a, d, &r), a % d);
			}
		}
	}
	if (bad) {
		fprintf(stderr, "engine unit tests: %" PRIu64 " of %" PRIu64 " wrong\n", bad, checked);
		return 1;
	}
	printf("engine unit tests: %" PRIu64 " reciprocal modulos right\n", checked);
	return 0;
}

/* Four streams: receive-only with one flow and size; sent here with 7 flows and a 5-long cycle of 3 sizes;
 * one with a window of 64 numbers; one defined but not in the trial. Ids 4.. are unknown. */
#define NSTREAMS 4
static const uint32_t test_flows[NSTREAMS] = {1, 7, 1, 1};
static const uint32_t test_cycle[NSTREAMS] = {1, 5, 1, 2};
static const uint64_t test_nbits[NSTREAMS] = {256, 256, 64, 256};

/* RX state for queue q of s (lane 0), its window nbits long */
static void add_rxq(struct lr_stream *s, unsigned q, uint64_t nbits)
{
	struct lr_rxq *r = aligned_alloc(_Alignof(struct lr_rxq), sizeof(*r));
	memset(r, 0, sizeof(*r));
	lr_seqwin_init(&r->win, calloc(nbits / 64, sizeof(uint64_t)), nbits);
	lr_hist_reset(&r->lat);
	s->rxq[q][0] = r;
}

static void free_stream(struct lr_stream *s)
{
	for (unsigned i = 0; i < LR_MAX_QUEUES * LR_MAX_QUEUES; i++) {
		struct lr_rxq *r = s->rxq[i / LR_MAX_QUEUES][i % LR_MAX_QUEUES];
		if (r) {
			free(r->win.bits);
			free(r);
		}
	}
	free(s);
}

static struct lr_stream *new_stream(int id)
{
	struct lr_stream *s = aligned_alloc(_Alignof(struct lr_stream), sizeof(*s));
	memset(s, 0, sizeof(*s));
	s->defined = true;
	s->in_trial = id != 3;
	s->id = id;
	s->tx_port = id == 0 ? -1 : 0;
	s->rx_port = 0;
	s->flows = test_flows[id];
	s->flows_div = rte_reciprocal_value_u64(s->flows);
	s->cycle_len = test_cycle[id];
	s->cycle_div = rte_reciprocal_value_u64(s->cycle_len);
	static const uint8_t classes[5] = {0, 1, 0, 2, 1};
	for (uint32_t i = 0; i < s->cycle_len; i++)
		s->cycle_class[i] = s->cycle_len == 5 ? classes[i] : 0;
	s->nclasses = s->cycle_len == 5 ? 3 : 1;
	add_rxq(s, 0, test_nbits[id]);
	return s;
}

static int same_stream(const struct lr_stream *sa, const struct lr_stream *sb, unsigned burst)
{
	const struct lr_rxq *a = sa->rxq[0][0], *b = sb->rxq[0][0];
	const struct lr_seqwin *x = &a->win, *y = &b->win;
	const char *what = x->next != y->next		     ? "next"
			   : x->rx != y->rx		     ? "rx"
			   : x->dup != y->dup		     ? "duplicates"
			   : x->reordered != y->reordered    ? "reordered"
			   : x->beyond != y->beyond	     ? "beyond_window"
			   : x->max_late != y->max_late	     ? "max_late"
			   : x->early != y->early	     ? "early"
			   : x->max_early != y->max_early    ? "max_early"
			   : memcmp(x->bits, y->bits, x->nbits / 8) ? "window bits"
			   : a->rx_bytes != b->rx_bytes	     ? "rx_bytes"
			   : a->late != b->late		     ? "late"
			   : a->bad_flow != b->bad_flow	     ? "bad_flow"
			   : a->last_rx_tsc != b->last_rx_tsc ? "last_rx_tsc"
			   : memcmp(a->class_rx, b->class_rx, sizeof(a->class_rx)) ? "class_rx"
			   : memcmp(&a->lat, &b->lat, sizeof(a->lat))		   ? "latency histogram"
			   : a->lat_ts != b->lat_ts					   ? "lat_ts"
										   : NULL;
	if (what)
		fprintf(stderr, "burst analysis: stream %d differs in %s after burst %u (rx %" PRIu64 " vs %" PRIu64 ")\n",
			sa->id, what, burst, y->rx, x->rx);
	return what != NULL;
}

static void put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* The frame that carries f's tag, as it could arrive: mostly untagged IPv4, also IPv6, VLAN-tagged, padded
 * after the IP packet (all the receiver's fast path), or with one header or tag bit changed (which may make it
 * foreign, or another frame). Returns its length; f's frame size is fixed up to it. */
static uint32_t build_frame(uint8_t *buf, struct lr_rx_frame *f, uint64_t *x)
{
	uint64_t kind = xorshift(x) % 100;
	bool ip6 = kind < 6, vlan = kind >= 6 && kind < 9;
	uint32_t pad = kind >= 9 && kind < 12 ? 1 + (uint32_t)(xorshift(x) % 20) : 0;
	uint32_t len = f->frame_size - LR_FCS_LEN;
	if (ip6 && len < 14 + 40 + 8 + LR_TAG_LEN)
		len = 14 + 40 + 8 + LR_TAG_LEN;
	len += vlan ? 4 : 0;
	memset(buf, 0, len);
	for (int i = 0; i < 12; i++)
		buf[i] = (uint8_t)xorshift(x);
	uint32_t off = 12;
	if (vlan) {
		put16(buf + 12, 0x8100);
		put16(buf + 14, 100);
		off = 16;
	}
	uint8_t *ip = buf + off + 2, *udp;
	uint32_t l3 = len - off - 2 - pad;
	if (ip6) {
		put16(buf + off, 0x86dd);
		ip[0] = 0x60;
		put16(ip + 4, l3 - 40);
		ip[6] = 17;
		ip[7] = 64;
		udp = ip + 40;
		put16(udp + 4, l3 - 40);
	} else {
		put16(buf + off, 0x0800);
		ip[0] = 0x45;
		put16(ip + 2, l3);
		ip[6] = 0x40; /* don't fragment: not a fragment */
		ip[8] = 64;
		ip[9] = 17;
		udp = ip + 20;
		put16(udp + 4, l3 - 20);
	}
	struct lr_tag tag = {.flags = f->flags, .stream = f->stream, .seq = f->seq, .ts_ns = f->ts_ns, .flow = f->flow};
	lr_tag_put(udp + 8, &tag);
	if (xorshift(x) % 100 < 6) {
		/* one bit of the headers or the tag changed, but not in the stream id or the sequence number:
		 * a number far ahead would leave every later frame of its stream beyond the window, and the rest
		 * of the test without its common case */
		uint32_t tag_off = (uint32_t)(udp + 8 - buf), at = 12 + (uint32_t)(xorshift(x) % (tag_off + 3 + 6 - 12));
		buf[at < tag_off + 3 ? at : at + 9] ^= (uint8_t)(1u << (xorshift(x) % 8));
	}
	f->frame_size = len + LR_FCS_LEN;
	return len;
}

static void use_streams(struct lr_stream **set)
{
	for (int i = 0; i < NSTREAMS; i++)
		lr.streams[i] = set[i];
}

/* Random traffic with every case the analysis tells apart, as frames received in random bursts, counted
 * three ways: the reference (each frame through the full parser, then lr_analyse_one); lr_analyse_burst
 * on the burst's parsed frames; and the worker's path (the open run extended straight from the frame's
 * bytes where it can, lr_parse_tag and lr_analyse_next otherwise, as rx_port does). The counters must be
 * the same after each burst. */
static int test_burst_analysis(void)
{
	struct lr_stream *one[NSTREAMS], *burst[NSTREAMS], *raw[NSTREAMS];
	struct lr_port p_one = {.id = 0}, p_burst = {.id = 0}, p_raw = {.id = 0};
	for (int i = 0; i < NSTREAMS; i++) {
		one[i] = new_stream(i);
		burst[i] = new_stream(i);
		raw[i] = new_stream(i);
	}
	lr.trial.id = 9;
	uint64_t x = 0x2545f4914f6cdd1dull, next[NSTREAMS] = {0}, now = 1000000, frames = 0, fast = 0, foreign = 0;
	uint32_t ts = 5000;
	int cur = 0, bad = 0;
	static uint8_t bytes[LR_BURST][600];
	for (unsigned b = 0; b < 40000 && !bad; b++) {
		struct lr_rx_frame f[LR_BURST], parsed[LR_BURST];
		uint32_t len[LR_BURST];
		unsigned n = 1 + (unsigned)(xorshift(&x) % LR_BURST), np = 0;
		uint64_t r = xorshift(&x) % 100;
		int st = r < 5 ? LR_WARMUP : r < 90 ? LR_RUNNING : r < 97 ? LR_DRAINING : LR_IDLE;
		now += 1000 + xorshift(&x) % 5000;
		uint32_t now_ns32 = (uint32_t)(now / 3);
		for (unsigned i = 0; i < n; i++) {
			if (xorshift(&x) % 16 == 0) /* the next stream, or an unknown one */
				cur = (int)(xorshift(&x) % (NSTREAMS + 1));
			if (xorshift(&x) % 8 == 0) /* a new TX burst: a new timestamp */
				ts = now_ns32 - 100 - (uint32_t)(xorshift(&x) % 3000);
			int id = cur < NSTREAMS ? cur : 4 + (int)(xorshift(&x) % 250);
			uint64_t *nx = &next[cur < NSTREAMS ? cur : 0];
			uint64_t seq, e = xorshift(&x) % 1000;
			if (e < 20) /* lost frames */
				*nx += 1 + xorshift(&x) % (e < 2 ? 600 : 40);
			if (e >= 20 && e < 40 && *nx > 0) /* a duplicate or a late frame, sometimes beyond the window */
				seq = *nx - 1 - xorshift(&x) % (e < 25 ? 400 : 70);
			else
				seq = (*nx)++;
			if (seq > *nx)
				seq = 0;
			uint8_t flags = LR_TRIAL_BITS(lr.trial.id);
			if (e >= 40 && e < 50)
				flags |= LR_FLAG_WARMUP;
			else if (e >= 50 && e < 55)
				flags = LR_TRIAL_BITS(lr.trial.id - 1);
			uint32_t flows = cur < NSTREAMS ? test_flows[cur] : 1;
			uint16_t flow = (uint16_t)(seq % flows + (e >= 55 && e < 60));
			f[i] = (struct lr_rx_frame){
				.seq = seq, .ts_ns = ts, .frame_size = 64 + (uint32_t)(seq % 3) * 100, .flow = flow,
				.stream = (uint8_t)id, .flags = flags};
			len[i] = build_frame(bytes[i], &f[i], &x);
		}
		frames += n;
		/* the reference, and the parsed frames for lr_analyse_burst */
		use_streams(one);
		for (unsigned i = 0; i < n; i++) {
			struct lr_parsed ps;
			if (lr_parse(bytes[i], len[i], &ps) != LR_KIND_TAGGED) {
				foreign++;
				continue;
			}
			parsed[np] = (struct lr_rx_frame){.seq = ps.tag.seq, .ts_ns = ps.tag.ts_ns,
							  .frame_size = ps.frame_size, .flow = ps.tag.flow,
							  .stream = ps.tag.stream, .flags = ps.tag.flags};
			lr_analyse_one(&p_one, 0, &parsed[np++], st, now_ns32, now);
		}
		use_streams(burst);
		lr_analyse_burst(&p_burst, 0, parsed, np, st, NULL, now_ns32, now);
		/* the worker's path */
		use_streams(raw);
		struct lr_run run = {.s = NULL};
		for (unsigned i = 0; i < n; i++) {
			struct lr_tag tag;
			struct lr_parsed ps;
			if (lr_run_extend(&run, bytes[i], len[i], len[i] + LR_FCS_LEN, now_ns32, false, lr_run_plain(&run))) {
				fast++;
				continue;
			}
			if (!lr_parse_tag(bytes[i], len[i], &tag)) {
				if (lr_parse(bytes[i], len[i], &ps) != LR_KIND_TAGGED)
					continue;
				tag = ps.tag;
			}
			struct lr_rx_frame fr = {.seq = tag.seq, .ts_ns = tag.ts_ns, .frame_size = len[i] + LR_FCS_LEN,
						 .flow = tag.flow, .stream = tag.stream, .flags = tag.flags};
			lr_analyse_next(&run, &p_raw, 0, &fr, st, now_ns32, now);
		}
		lr_run_close(&run, now);
		for (int i = 0; i < NSTREAMS && !bad; i++)
			bad = same_stream(burst[i], one[i], b) || same_stream(raw[i], one[i], b);
		if (!bad && (p_one.q[0].rx_warmup != p_burst.q[0].rx_warmup || p_one.q[0].rx_stale != p_burst.q[0].rx_stale ||
			     p_one.q[0].rx_warmup != p_raw.q[0].rx_warmup || p_one.q[0].rx_stale != p_raw.q[0].rx_stale)) {
			fprintf(stderr, "burst analysis: port counters differ after burst %u\n", b);
			bad = 1;
		}
	}
	uint64_t dup = 0, reord = 0, beyond = 0, bad_flow = 0, late = 0, counted = 0;
	for (int i = 0; i < NSTREAMS; i++) {
		counted += one[i]->rxq[0][0]->win.rx;
		dup += one[i]->rxq[0][0]->win.dup;
		reord += one[i]->rxq[0][0]->win.reordered;
		beyond += one[i]->rxq[0][0]->win.beyond;
		bad_flow += one[i]->rxq[0][0]->bad_flow;
		late += one[i]->rxq[0][0]->late;
	}
	/* the cases must all have happened, and most counted frames taken the fast path, or the comparison
	 * proves little */
	if (!bad && (!dup || !reord || !beyond || !bad_flow || !late || !p_one.q[0].rx_warmup || !p_one.q[0].rx_stale ||
		     !foreign || fast < counted / 2)) {
		fprintf(stderr, "burst analysis: a case never happened (dup %" PRIu64 " reordered %" PRIu64
				" beyond %" PRIu64 " bad_flow %" PRIu64 " late %" PRIu64 " foreign %" PRIu64
				" fast %" PRIu64 " of %" PRIu64 ")\n",
			dup, reord, beyond, bad_flow, late, foreign, fast, frames);
		bad = 1;
	}
	if (!bad)
		printf("engine unit tests: burst analysis and the receiver's one-pass path = frame-by-frame analysis on "
		       "%" PRIu64 " frames (%" PRIu64 " counted, %" PRIu64 " straight from the bytes, %" PRIu64
		       " duplicates, %" PRIu64 " reordered, %" PRIu64 " beyond the window, %" PRIu64 " wrong flow, %" PRIu64
		       " late, %" PRIu64 " warm-up, %" PRIu64 " stale, %" PRIu64 " foreign)\n",
		       frames, counted, fast, dup, reord, beyond, bad_flow, late,
		       p_one.q[0].rx_warmup, p_one.q[0].rx_stale, foreign);
	for (int i = 0; i < NSTREAMS; i++) {
		struct lr_stream *all[3] = {one[i], burst[i], raw[i]};
		for (int k = 0; k < 3; k++)
			free_stream(all[k]);
	}
	return bad;
}

/* The frames of one TX burst share a timestamp: their zero differences are no jitter samples. Bursts of
 * 32 frames whose latency alternates between 1000 and 2000 ns have a jitter of 1000 ns, however the
 * receiver's bursts cut them. */
static int test_jitter_per_tx_burst(void)
{
	struct lr_stream *s = new_stream(0);
	lr.streams[0] = s;
	lr.trial.id = 9;
	struct lr_port p = {.id = 0};
	uint64_t seq = 0;
	for (unsigned tx = 0; tx < 400; tx++) {
		uint32_t ts = 1000000 + tx * 10000, lat = tx % 2 ? 2000 : 1000;
		struct lr_rx_frame f[32];
		for (unsigned i = 0; i < 32; i++)
			f[i] = (struct lr_rx_frame){.seq = seq++, .ts_ns = ts, .frame_size = 64, .stream = 0,
						    .flags = LR_TRIAL_BITS(9)};
		/* received in two bursts, cut at a different place every time */
		unsigned cut = 1 + tx % 31;
		lr_analyse_burst(&p, 0, f, cut, LR_RUNNING, NULL, ts + lat, 1);
		lr_analyse_burst(&p, 0, f + cut, 32 - cut, LR_RUNNING, NULL, ts + lat, 2);
	}
	const struct lr_hist *h = &s->rxq[0][0]->lat;
	uint64_t j = h->j16 / 16;
	int bad = j < 950 || j > 1000 || h->count != seq;
	if (bad)
		fprintf(stderr, "jitter per TX burst: %" PRIu64 " ns for alternating 1000/2000 ns (count %" PRIu64 ")\n",
			j, h->count);
	else
		printf("engine unit tests: jitter of TX bursts of alternating latency %" PRIu64 " ns (step 1000)\n", j);
	free_stream(s);
	lr.streams[0] = NULL;
	return bad;
}

/* One stream of 8 flows over two RX queues, each flow on one queue as RSS puts it (by a hash of its headers),
 * with losses, duplicates (which carry their original's headers: its queue), frames held back behind later
 * ones of their own flow, and late ones: the queues' counts merged (lr_rxq_merge) are the counts of one queue
 * that received everything. */
static int test_queue_merge(void)
{
	struct lr_stream *one = new_stream(1), *two = new_stream(1);
	add_rxq(two, 1, test_nbits[1]);
	struct lr_port p1 = {.id = 0}, p2 = {.id = 0};
	lr.trial.id = 9;
	uint64_t x = 0x8badf00dull, seq = 0;
	uint64_t held[4], sent[16] = {0};
	unsigned nheld = 0, nsent = 0;
	for (unsigned b = 0; b < 2000; b++) {
		struct lr_rx_frame f[LR_BURST];
		unsigned n = 0;
		int st = b < 1900 ? LR_RUNNING : LR_DRAINING;
		uint32_t now_ns32 = 100000 + b * 1000;
		while (n < LR_BURST) {
			uint64_t e = xorshift(&x) % 100, s_ = seq;
			if (e < 3) { /* lost */
				seq++;
				continue;
			}
			if (e < 6 && seq > 0) {
				s_ = sent[xorshift(&x) % 16]; /* a duplicate of a recent one */
			} else if (e < 9 && nheld < 4) {
				held[nheld++] = seq++; /* held back: it arrives after the next frame of its own flow */
				continue;
			} else {
				seq++;
			}
			sent[nsent++ % 16] = s_;
			f[n++] = (struct lr_rx_frame){.seq = s_, .ts_ns = now_ns32 - 500 - (uint32_t)(s_ % 5), .frame_size = 64 + (uint32_t)(s_ % 3),
						      .flow = (uint16_t)(s_ % test_flows[1]), .stream = 1, .flags = LR_TRIAL_BITS(9)};
			/* a held frame follows the first later frame of its flow */
			for (unsigned h = 0; h < nheld && n < LR_BURST; h++)
				if (s_ > held[h] && s_ % test_flows[1] == held[h] % test_flows[1]) {
					f[n++] = (struct lr_rx_frame){.seq = held[h], .ts_ns = now_ns32 - 700, .frame_size = 64,
								      .flow = (uint16_t)(held[h] % test_flows[1]), .stream = 1,
								      .flags = LR_TRIAL_BITS(9)};
					held[h--] = held[--nheld];
				}
		}
		lr.streams[1] = one;
		lr_analyse_burst(&p1, 0, f, n, st, NULL, now_ns32, 1000 + b);
		/* queue of a flow: a fixed function of it, as a hash of its headers is */
		struct lr_rx_frame q[2][LR_BURST];
		unsigned nq[2] = {0, 0};
		for (unsigned i = 0; i < n; i++) {
			unsigned k = (f[i].flow * 5u + 1u) % 3u == 0;
			q[k][nq[k]++] = f[i];
		}
		lr.streams[1] = two;
		lr_analyse_burst(&p2, 0, q[0], nq[0], st, NULL, now_ns32, 1000 + b);
		lr_analyse_burst(&p2, 1, q[1], nq[1], st, NULL, now_ns32, 1000 + b);
	}
	lr.streams[1] = NULL;
	static struct lr_rxq m;
	unsigned seen;
	lr_rxq_merge(two, &m, &seen);
	const struct lr_rxq *r = one->rxq[0][0];
	const char *what = seen != 2				     ? "queues seen"
			   : m.win.rx != r->win.rx		     ? "rx"
			   : m.win.dup != r->win.dup		     ? "duplicates"
			   : m.win.reordered != r->win.reordered     ? "reordered"
			   : m.win.beyond != r->win.beyond	     ? "beyond"
			   : m.rx_bytes != r->rx_bytes		     ? "rx_bytes"
			   : m.late != r->late			     ? "late"
			   : m.last_rx_tsc != r->last_rx_tsc	     ? "last_rx_tsc"
			   : memcmp(m.class_rx, r->class_rx, sizeof(m.class_rx)) ? "class_rx"
			   : memcmp(m.lat.b, r->lat.b, sizeof(m.lat.b))	   ? "latency histogram"
			   : m.lat.count != r->lat.count || m.lat.sum != r->lat.sum ? "latency count"
			   : !r->win.dup || !r->win.reordered || !r->late ? "a case that never happened"
									   : NULL;
	if (what)
		fprintf(stderr, "queue merge: two queues merged differ from one in %s (rx %" PRIu64 " vs %" PRIu64 ")\n", what,
			m.win.rx, r->win.rx);
	else
		printf("engine unit tests: a stream over two RX queues merged = one queue (%" PRIu64 " frames, %" PRIu64
		       " duplicates, %" PRIu64 " reordered, %" PRIu64 " late; queue 1 had %" PRIu64 ")\n",
		       r->win.rx, r->win.dup, r->win.reordered, r->late, two->rxq[1][0]->win.rx);
	free_stream(one);
	free_stream(two);
	return what != NULL;
}

/* Two senders (lanes) of one stream, each in order, their frames interleaved as two TX queues' are on the
 * wire: no reordering, whatever the interleaving; duplicates and losses in either lane counted exactly, on
 * the fast path as frame by frame. And the lanes' shares of a schedule add up to it. */
static int test_lanes(void)
{
	int bad = 0;
	for (uint64_t n = 0; n < 200 && !bad; n++)
		for (unsigned L = 1; L <= LR_MAX_QUEUES && !bad; L++) {
			uint64_t sum = 0;
			for (unsigned k = 0; k < L; k++)
				sum += lr_lane_share(n, k, L);
			if (sum != n) {
				fprintf(stderr, "lanes: shares of %" PRIu64 " over %u lanes add up to %" PRIu64 "\n", n, L, sum);
				bad = 1;
			}
		}
	struct lr_stream *s = new_stream(1);
	s->rxq[0][1] = NULL;
	struct lr_rxq *r1 = aligned_alloc(_Alignof(struct lr_rxq), sizeof(*r1));
	memset(r1, 0, sizeof(*r1));
	lr_seqwin_init(&r1->win, calloc(256 / 64, sizeof(uint64_t)), 256);
	lr_hist_reset(&r1->lat);
	s->rxq[0][1] = r1;
	lr.streams[1] = s;
	lr.trial.id = 9;
	struct lr_port p = {.id = 0};
	uint64_t x = 0x1234567ull, next[2] = {0, 0}, lost = 0, frames = 0;
	static uint8_t bytes[LR_BURST][600];
	for (unsigned b = 0; b < 3000; b++) {
		struct lr_rx_frame f[LR_BURST];
		for (unsigned i = 0; i < LR_BURST; i++) {
			unsigned k = (unsigned)(xorshift(&x) % 2); /* either sender's next frame */
			uint64_t e = xorshift(&x) % 100;
			if (e < 2) {
				next[k]++;
				lost++;
			}
			uint64_t j = e >= 2 && e < 4 && next[k] ? next[k] - 1 : next[k]++;
			uint64_t seq = (uint64_t)k << LR_LANE_SHIFT | j;
			f[i] = (struct lr_rx_frame){.seq = seq, .ts_ns = 1000, .frame_size = 64,
						    .flow = (uint16_t)(seq % test_flows[1]), .stream = 1, .flags = LR_TRIAL_BITS(9)};
		}
		/* the worker's path: the open run extended straight from the bytes where it can */
		struct lr_run run = {.s = NULL};
		for (unsigned i = 0; i < LR_BURST; i++) {
			uint32_t len = build_frame(bytes[i], &f[i], &x);
			struct lr_tag tag;
			struct lr_parsed ps;
			frames++;
			if (lr_run_extend(&run, bytes[i], len, len + LR_FCS_LEN, 2000, false, lr_run_plain(&run)))
				continue;
			if (!lr_parse_tag(bytes[i], len, &tag)) {
				if (lr_parse(bytes[i], len, &ps) != LR_KIND_TAGGED)
					continue;
				tag = ps.tag;
			}
			struct lr_rx_frame fr = {.seq = tag.seq, .ts_ns = tag.ts_ns, .frame_size = len + LR_FCS_LEN,
						 .flow = tag.flow, .stream = tag.stream, .flags = tag.flags};
			lr_analyse_next(&run, &p, 0, &fr, LR_RUNNING, 2000, 1);
		}
		lr_run_close(&run, 1);
	}
	static struct lr_rxq m;
	unsigned seen;
	lr_rxq_merge(s, &m, &seen);
	/* build_frame changes a bit of a few frames (never the number): they are lost, foreign or of a bad
	 * flow, which adds no reordering */
	if (m.win.reordered || m.win.early < 1 || m.win.dup == 0 || m.win.rx < frames * 9 / 10 || seen != 1) {
		fprintf(stderr, "lanes: two in-order senders interleaved: %" PRIu64 " reordered, %" PRIu64
				" duplicates, %" PRIu64 " bad flow of %" PRIu64 " frames\n",
			m.win.reordered, m.win.dup, m.bad_flow, m.win.rx);
		bad = 1;
	} else {
		printf("engine unit tests: two senders' lanes interleaved, each in order: %" PRIu64 " frames, 0 reordered, %" PRIu64
		       " duplicates, %" PRIu64 " early (lost %" PRIu64 ")\n",
		       m.win.rx, m.win.dup, m.win.early, lost);
	}
	free_stream(s);
	lr.streams[1] = NULL;
	return bad;
}

int main(void)
{
	int bad = test_mod();
	bad |= test_lanes();
	bad |= test_queue_merge();
	bad |= test_jitter_per_tx_burst();
	bad |= test_burst_analysis();
	if (!bad)
		printf("engine unit tests: all passed\n");
	return bad;
}
