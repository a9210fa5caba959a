/* STREAM: a stream's definition (ports, addresses, flows, payload and its cycle of frame sizes), checked
 * whole before any of it replaces the stream's previous one. A stream's memory is allocated at its first
 * definition and kept for the life of the engine. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control_streams.h"
#include "engine.h"
#include "rxq.h"
#include "trial.h"

static int parse_sizes(const char *s, struct lr_stream *st, struct out *o, unsigned min, unsigned max)
{
	char tmp[LR_MAX_CYCLE * 6 + 1];
	if (strlen(s) >= sizeof(tmp))
		return fail(o, "bad-value", "sizes: longer than %u entries", LR_MAX_CYCLE);
	memcpy(tmp, s, strlen(s) + 1);
	st->cycle_len = 0;
	st->nclasses = 0;
	double total = 0;
	char *save = NULL;
	for (char *tok = strtok_r(tmp, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		long v = strtol(tok, &end, 10);
		if (*end || end == tok)
			return fail(o, "bad-value", "sizes: '%s' is not a number", tok);
		if (v < (long)min || v > (long)max)
			return fail(o, "bad-value", "sizes: %ld B is outside %u..%u B for this stream's headers and ports",
				    v, min, max);
		if (st->cycle_len == LR_MAX_CYCLE)
			return fail(o, "bad-value", "sizes: longer than %u entries", LR_MAX_CYCLE);
		unsigned c;
		for (c = 0; c < st->nclasses && st->class_size[c] != v; c++)
			;
		if (c == st->nclasses) {
			if (c == LR_MAX_CLASSES)
				return fail(o, "bad-value", "sizes: more than %u distinct sizes", LR_MAX_CLASSES);
			st->class_size[st->nclasses++] = (uint16_t)v;
		}
		st->cycle[st->cycle_len] = (uint16_t)v;
		st->cycle_class[st->cycle_len] = (uint8_t)c;
		st->cycle_len++;
		total += (double)v;
	}
	if (st->cycle_len == 0)
		return fail(o, "bad-value", "sizes: empty");
	st->mean_frame = total / st->cycle_len;
	return 0;
}

int do_stream(struct args *a, struct out *o)
{
	uint64_t id, sport, dport, flows, dscp, lanes, df;
	int tx = -1, rx = -1;
	if (get_u64(a, o, "id", 0, LR_MAX_STREAMS - 1, UINT64_MAX, &id))
		return -1;
	if (id == UINT64_MAX)
		return fail(o, "bad-request", "STREAM: missing id=");
	if (lr_trial_active())
		return fail(o, "busy", "STREAM: a trial is running");
	if (port_arg(a, o, "tx", &tx, true) || port_arg(a, o, "rx", &rx, true))
		return -1;
	if (tx < 0 && rx < 0)
		return fail(o, "bad-value", "STREAM: tx and rx cannot both be none");
	const char *l3s = arg(a, "l3"), *src = arg(a, "src"), *dst = arg(a, "dst"), *vary = arg(a, "vary");
	const char *payload = arg(a, "payload"), *sizes = arg(a, "sizes");
	if (get_u64(a, o, "sport", 0, 65535, 1024, &sport) || get_u64(a, o, "dport", 0, 65535, 1024, &dport) ||
	    get_u64(a, o, "flows", 1, 65536, 1, &flows) || get_u64(a, o, "dscp", 0, 63, 0, &dscp) ||
	    get_u64(a, o, "lanes", 1, LR_MAX_QUEUES, 0, &lanes) || get_u64(a, o, "df", 0, 1, 1, &df) ||
	    check_unused(a, o, "STREAM"))
		return -1;
	/* a stream this engine sends has its TX port's queues as lanes; one another engine sends has the
	 * lanes that engine gives it, which only the runner of both knows */
	if (lanes && tx >= 0)
		return fail(o, "bad-value", "lanes=%llu: only for a stream another engine sends (tx=none); this engine "
					    "sends it on a lane per queue pair of port %d (%u)", (unsigned long long)lanes, tx, lr.ports[tx].nq);
	if (lanes == 0)
		lanes = tx >= 0 ? lr.ports[tx].nq : 1;
	int l3 = 4;
	if (l3s && strcmp(l3s, "ipv6") == 0)
		l3 = 6;
	else if (l3s && strcmp(l3s, "ipv4") != 0)
		return fail(o, "bad-value", "l3=%s: want ipv4 or ipv6", l3s);
	if (df == 0 && l3 == 6)
		return fail(o, "bad-value", "df=0: IPv6 has no DF bit (a hop never fragments an IPv6 packet; it answers "
					    "packet too big)");
	if (!src || !dst || !sizes)
		return fail(o, "bad-request", "STREAM: src=, dst= and sizes= are required");
	struct lr_stream *s = lr.streams[id];
	if (s == NULL) {
		/* its TX and RX state each on cache lines of their own (engine.h): aligned as the type asks */
		s = aligned_alloc(_Alignof(struct lr_stream), sizeof(*s));
		if (s)
			memset(s, 0, sizeof(*s));
		if (s)
			s->tmpl_mem = calloc(LR_MAX_CLASSES, LR_MAX_FRAME);
		if (!s || !s->tmpl_mem) {
			free(s);
			return fail(o, "no-memory", "STREAM: cannot allocate stream %llu", (unsigned long long)id);
		}
		lr.streams[id] = s;
	}
	/* RX state for every queue of its RX port (queue 0's at least) and every lane of its sender (a window
	 * per possible lane instead of lanes= would multiply every receive-only stream's address space by
	 * LR_MAX_QUEUES); now and not in a trial, and kept for the life of the engine, as the stream is */
	if (lr_rxq_alloc(s, rx >= 0 ? lr.ports[rx].nq : 1, (unsigned)lanes) != 0)
		return fail(o, "no-memory", "STREAM: cannot allocate stream %llu's receive state", (unsigned long long)id);
	struct lr_stream n;
	memset(&n, 0, sizeof(n));
	int len;
	if (parse_ip(src, l3, n.src.b, &len) || len >= 0)
		return fail(o, "bad-value", "src=%s: not an %s address", src, l3 == 6 ? "IPv6" : "IPv4");
	if (parse_ip(dst, l3, n.dst.b, &len) || len >= 0)
		return fail(o, "bad-value", "dst=%s: not an %s address", dst, l3 == 6 ? "IPv6" : "IPv4");
	n.vary = 0;
	if (vary && *vary) {
		char tmp[64];
		snprintf(tmp, sizeof(tmp), "%s", vary);
		char *save = NULL;
		for (char *t = strtok_r(tmp, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
			if (!strcmp(t, "sport"))
				n.vary |= LR_VARY_SPORT;
			else if (!strcmp(t, "dport"))
				n.vary |= LR_VARY_DPORT;
			else if (!strcmp(t, "src"))
				n.vary |= LR_VARY_SRC;
			else if (!strcmp(t, "dst"))
				n.vary |= LR_VARY_DST;
			else
				return fail(o, "bad-value", "vary: '%s' is not sport, dport, src or dst", t);
		}
	}
	if (flows > 1 && n.vary == 0)
		n.vary = LR_VARY_SPORT;
	n.payload = LR_PAYLOAD_ZEROS;
	if (payload && !strcmp(payload, "incrementing"))
		n.payload = LR_PAYLOAD_INCREMENTING;
	else if (payload && !strcmp(payload, "random"))
		n.payload = LR_PAYLOAD_RANDOM;
	else if (payload && strcmp(payload, "zeros") != 0)
		return fail(o, "bad-value", "payload=%s: want zeros, incrementing or random", payload);
	bool vlan = (tx >= 0 && lr.ports[tx].vlan) || (rx >= 0 && lr.ports[rx].vlan);
	unsigned max = LR_MAX_FRAME;
	if (tx >= 0 && lr.ports[tx].max_frame < max)
		max = lr.ports[tx].max_frame;
	if (rx >= 0 && lr.ports[rx].max_frame < max)
		max = lr.ports[rx].max_frame;
	if (parse_sizes(sizes, &n, o, lr_min_frame(l3, vlan), max))
		return -1;
	/* commit */
	s->defined = true;
	s->id = (int)id;
	s->tx_port = tx;
	s->rx_port = rx;
	s->l3 = l3;
	s->src = n.src;
	s->dst = n.dst;
	s->sport = (uint16_t)sport;
	s->dport = (uint16_t)dport;
	s->flows = (uint32_t)flows;
	s->vary = n.vary;
	s->fragmentable = df == 0;
	s->dscp = (uint8_t)dscp;
	s->payload = n.payload;
	s->cycle_len = n.cycle_len;
	s->flows_div = rte_reciprocal_value_u64(s->flows);
	s->cycle_div = rte_reciprocal_value_u64(s->cycle_len);
	memcpy(s->cycle, n.cycle, sizeof(n.cycle));
	memcpy(s->cycle_class, n.cycle_class, sizeof(n.cycle_class));
	s->nclasses = n.nclasses;
	memcpy(s->class_size, n.class_size, sizeof(n.class_size));
	s->mean_frame = n.mean_frame;
	unsigned mn = 65535, mx = 0;
	for (unsigned c = 0; c < s->nclasses; c++) {
		mn = s->class_size[c] < mn ? s->class_size[c] : mn;
		mx = s->class_size[c] > mx ? s->class_size[c] : mx;
	}
	/* the lanes it sends on, or, received only, the lanes it has state for (a redefinition keeps more
	 * than it asks): what the runner compares with the sender's */
	unsigned kept = 0;
	while (kept < LR_MAX_QUEUES && s->rxq[0][kept])
		kept++;
	put(o, "{\"ok\":true,\"id\":%d,\"cycle_len\":%u,\"mean_frame\":%.3f,\"min_frame\":%u,\"max_frame\":%u,\"lanes\":%u}",
	    s->id, s->cycle_len, s->mean_frame, mn, mx, tx >= 0 ? lr.ports[tx].nq : kept);
	return 0;
}
