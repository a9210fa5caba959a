/* The control socket (PROTOCOL.md): one request line in, one JSON line out, one client at a time.
 * Runs on the main lcore; never touches the fast path except through the hand-offs described in
 * engine.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "engine.h"

/* ---- a growable JSON response ---- */
struct out {
	char *buf;
	size_t len, cap;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct out *o, const char *fmt, ...)
{
	for (;;) {
		va_list ap;
		va_start(ap, fmt);
		int n = vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
		va_end(ap);
		if (n < 0)
			return;
		if ((size_t)n < o->cap - o->len) {
			o->len += (size_t)n;
			return;
		}
		o->cap = o->cap * 2 + (size_t)n;
		o->buf = realloc(o->buf, o->cap);
		if (o->buf == NULL)
			abort();
	}
}

static int fail(struct out *o, const char *code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(struct out *o, const char *code, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	for (char *c = msg; *c; c++)
		if (*c == '"' || *c == '\\')
			*c = '\'';
	o->len = 0;
	put(o, "{\"ok\":false,\"error\":\"%s\",\"message\":\"%s\"}", code, msg);
	return -1;
}

/* ---- request arguments ---- */
#define MAX_ARGS 24
struct args {
	int n;
	char *k[MAX_ARGS], *v[MAX_ARGS];
	bool used[MAX_ARGS];
};

static int split_args(char *line, char **verb, struct args *a, struct out *o)
{
	char *save = NULL;
	*verb = strtok_r(line, " \t\r", &save);
	a->n = 0;
	for (char *tok; (tok = strtok_r(NULL, " \t\r", &save));) {
		char *eq = strchr(tok, '=');
		if (eq == NULL)
			return fail(o, "bad-request", "argument '%s' is not key=value", tok);
		if (a->n == MAX_ARGS)
			return fail(o, "bad-request", "too many arguments");
		*eq = 0;
		a->k[a->n] = tok;
		a->v[a->n] = eq + 1;
		a->used[a->n] = false;
		a->n++;
	}
	return 0;
}

static const char *arg(struct args *a, const char *key)
{
	for (int i = 0; i < a->n; i++)
		if (strcmp(a->k[i], key) == 0) {
			a->used[i] = true;
			return a->v[i];
		}
	return NULL;
}

static int check_unused(struct args *a, struct out *o, const char *verb)
{
	for (int i = 0; i < a->n; i++)
		if (!a->used[i])
			return fail(o, "bad-request", "%s: unknown key '%s'", verb, a->k[i]);
	return 0;
}

static int get_u64(struct args *a, struct out *o, const char *key, uint64_t min, uint64_t max, uint64_t def,
		   uint64_t *v)
{
	const char *s = arg(a, key);
	*v = def;
	if (s == NULL)
		return 0;
	char *end;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 10);
	if (errno || *end || end == s || x < min || x > max)
		return fail(o, "bad-value", "%s=%s: want an integer from %llu to %llu", key, s,
			    (unsigned long long)min, (unsigned long long)max);
	*v = x;
	return 0;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)(c | 0x20);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Exactly "hh:hh:hh:hh:hh:hh" (hex, either case). */
static int parse_mac(const char *s, uint8_t *mac)
{
	for (int i = 0; i < 6; i++, s += 3) {
		int hi = hex_digit(s[0]), lo = hi < 0 ? -1 : hex_digit(s[1]);
		if (lo < 0 || s[2] != (i < 5 ? ':' : '\0'))
			return -1;
		mac[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

/* "addr" or "addr/len"; len is -1 when absent. */
static int parse_ip(const char *s, int l3, uint8_t *out, int *len)
{
	char tmp[64];
	snprintf(tmp, sizeof(tmp), "%s", s);
	char *slash = strchr(tmp, '/');
	*len = -1;
	if (slash) {
		*slash = 0;
		char *end;
		long l = strtol(slash + 1, &end, 10);
		if (*end || l < 0 || l > (l3 == 6 ? 128 : 32))
			return -1;
		*len = (int)l;
	}
	return inet_pton(l3 == 6 ? AF_INET6 : AF_INET, tmp, out) == 1 ? 0 : -1;
}

static const char *mac_str(const uint8_t *m, char *buf)
{
	sprintf(buf, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
	return buf;
}

static bool trial_active(void)
{
	int st = atomic_load_explicit(&lr.trial.state, memory_order_acquire);
	return st >= LR_WARMUP && st <= LR_DRAINING;
}

static int port_arg(struct args *a, struct out *o, const char *key, int *id, bool allow_none)
{
	const char *s = arg(a, key);
	if (s == NULL)
		return fail(o, "bad-request", "missing %s=", key);
	if (allow_none && strcmp(s, "none") == 0) {
		*id = -1;
		return 0;
	}
	char *end;
	long v = strtol(s, &end, 10);
	if (*end || end == s || v < 0 || v >= (long)lr.nports)
		return fail(o, "bad-value", "%s=%s: no such port (the engine has %u)", key, s, lr.nports);
	*id = (int)v;
	return 0;
}

/* ---- verbs ---- */
static int do_hello(struct args *a, struct out *o)
{
	if (check_unused(a, o, "HELLO"))
		return -1;
	put(o, "{\"ok\":true,\"proto\":3,\"engine\":\"%s\",\"ports\":%u,\"tsc_hz\":%llu,\"lcores\":%u,\"idle_sleep_us\":%u",
	    LR_VERSION, lr.nports, (unsigned long long)lr.tsc_hz, rte_lcore_count(), lr.idle_sleep_us);
	/* where the engine runs and keeps its frames: the runner checks them against the ports' nodes */
	const char *sep = "";
	unsigned lc;
	put(o, ",\"lcore_cpus\":[");
	RTE_LCORE_FOREACH(lc) {
		put(o, "%s%d", sep, rte_lcore_to_cpu_id((int)lc));
		sep = ",";
	}
	put(o, "],\"lcore_numa\":[");
	sep = "";
	RTE_LCORE_FOREACH(lc) {
		put(o, "%s%u", sep, rte_lcore_to_socket_id(lc));
		sep = ",";
	}
	put(o, "],\"memory_numa\":[");
	sep = "";
	for (unsigned i = 0; i < rte_socket_count(); i++) {
		int node = rte_socket_id_by_idx(i);
		struct rte_malloc_socket_stats st;
		if (node >= 0 && rte_malloc_get_socket_stats(node, &st) == 0 && st.heap_totalsz_bytes > 0) {
			put(o, "%s%d", sep, node);
			sep = ",";
		}
	}
	put(o, "]}");
	return 0;
}

/* TIME reads the clock the engine stamps frames with, now: the runner of a two-node testbed asks both
 * engines in turn and bounds their offset from the round trips (the clock is CLOCK_REALTIME-based only
 * with --clock realtime; otherwise it counts from the engine's start and says so). */
static int do_time(struct args *a, struct out *o)
{
	if (check_unused(a, o, "TIME"))
		return -1;
	put(o, "{\"ok\":true,\"clock\":\"%s\",\"ns\":%llu}", lr.realtime ? "realtime" : "local",
	    (unsigned long long)lr_tsc_to_ns(rte_rdtsc()));
	return 0;
}

static int do_port(struct args *a, struct out *o)
{
	int id = -1;
	if (port_arg(a, o, "id", &id, false))
		return -1;
	if (trial_active())
		return fail(o, "busy", "PORT: a trial is running");
	struct lr_port *p = &lr.ports[id];
	const char *ip4 = arg(a, "ip4"), *gw4 = arg(a, "gw4"), *ip6 = arg(a, "ip6"), *gw6 = arg(a, "gw6");
	const char *peer = arg(a, "peer_mac");
	uint64_t vlan;
	if (get_u64(a, o, "vlan", 0, 4094, 0, &vlan) || check_unused(a, o, "PORT"))
		return -1;
	struct lr_port n = *p; /* validate everything before changing anything */
	n.has_ip4 = n.has_gw4 = n.has_ip6 = n.has_gw6 = n.static_peer = false;
	int len;
	if (ip4) {
		if (parse_ip(ip4, 4, n.ip4, &len) || len < 0)
			return fail(o, "bad-value", "ip4=%s: want A.B.C.D/len", ip4);
		n.has_ip4 = true;
		n.ip4_len = (unsigned)len;
	}
	if (gw4) {
		if (parse_ip(gw4, 4, n.gw4, &len) || len >= 0)
			return fail(o, "bad-value", "gw4=%s: want A.B.C.D", gw4);
		n.has_gw4 = true;
	}
	if (ip6) {
		if (parse_ip(ip6, 6, n.ip6.b, &len) || len < 0)
			return fail(o, "bad-value", "ip6=%s: want X::Y/len", ip6);
		n.has_ip6 = true;
		n.ip6_len = (unsigned)len;
	}
	if (gw6) {
		if (parse_ip(gw6, 6, n.gw6.b, &len) || len >= 0)
			return fail(o, "bad-value", "gw6=%s: want X::Y", gw6);
		n.has_gw6 = true;
	}
	if (peer) {
		if (parse_mac(peer, n.peer_mac))
			return fail(o, "bad-value", "peer_mac=%s: want aa:bb:cc:dd:ee:ff", peer);
		n.static_peer = true;
	}
	p->vlan = (uint16_t)vlan;
	p->has_ip4 = n.has_ip4;
	p->has_gw4 = n.has_gw4;
	p->has_ip6 = n.has_ip6;
	p->has_gw6 = n.has_gw6;
	memcpy(p->ip4, n.ip4, 4);
	memcpy(p->gw4, n.gw4, 4);
	p->ip4_len = n.ip4_len;
	p->ip6 = n.ip6;
	p->gw6 = n.gw6;
	p->ip6_len = n.ip6_len;
	p->static_peer = n.static_peer;
	memcpy(p->peer_mac, n.peer_mac, 6);
	atomic_store(&p->peer_known, n.static_peer);
	struct rte_eth_link link;
	memset(&link, 0, sizeof(link));
	rte_eth_link_get_nowait(p->id, &link);
	char m[32];
	bool ck4 = p->rx_cksum & RTE_ETH_RX_OFFLOAD_IPV4_CKSUM, cku = p->rx_cksum & RTE_ETH_RX_OFFLOAD_UDP_CKSUM;
	put(o,
	    "{\"ok\":true,\"id\":%d,\"mac\":\"%s\",\"driver\":\"%s\",\"device\":\"%s\",\"numa\":%d,\"rx_queues\":%u,"
	    "\"tx_queues\":%u,\"link_up\":%s,\"speed_mbps\":%u,\"max_frame\":%u,\"rx_checksums\":\"%s%s%s\"}",
	    id, mac_str(p->mac, m), p->driver, p->device, p->numa, p->rx_queues, p->tx_queues, link.link_status ? "true" : "false",
	    link.link_speed == RTE_ETH_SPEED_NUM_UNKNOWN ? 0u : link.link_speed, p->max_frame, ck4 ? "ipv4" : "", ck4 && cku ? "," : "",
	    cku ? "udp" : "");
	return 0;
}

static void queue_control_frame(struct lr_port *p, const uint8_t *frame, size_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(lr.pool);
	if (m == NULL)
		return;
	memcpy(rte_pktmbuf_mtod(m, uint8_t *), frame, len);
	m->data_len = m->pkt_len = (uint32_t)len;
	if (rte_ring_sp_enqueue(p->ctl_tx, m) != 0)
		rte_pktmbuf_free(m);
}

static int do_resolve(struct args *a, struct out *o)
{
	int id = -1;
	uint64_t timeout;
	if (port_arg(a, o, "id", &id, false) || get_u64(a, o, "timeout_ms", 1, 600000, 3000, &timeout) ||
	    check_unused(a, o, "RESOLVE"))
		return -1;
	struct lr_port *p = &lr.ports[id];
	char m[32];
	if (!p->static_peer) {
		if (!p->has_gw4 && !p->has_gw6)
			return fail(o, "bad-request", "RESOLVE: port %d has neither gw4 nor gw6 nor peer_mac", id);
		atomic_store(&p->peer_known, false);
		uint64_t end = rte_rdtsc() + timeout * lr.tsc_hz / 1000, next = 0;
		while (!atomic_load_explicit(&p->peer_known, memory_order_acquire)) {
			uint64_t now = rte_rdtsc();
			if (now > end) {
				char gw[64];
				if (p->has_gw4)
					inet_ntop(AF_INET, p->gw4, gw, sizeof(gw));
				else
					inet_ntop(AF_INET6, p->gw6.b, gw, sizeof(gw));
				return fail(o, "unresolved", "port %d: gateway %s did not answer %s within %llu ms", id,
					    gw, p->has_gw4 ? "ARP" : "neighbour solicitation",
					    (unsigned long long)timeout);
			}
			if (now >= next) {
				uint8_t buf[128];
				size_t n;
				if (p->has_gw4)
					n = lr_build_arp(buf, p->vlan, 1, p->mac, p->ip4, NULL, p->gw4, NULL);
				else
					n = lr_build_ns(buf, p->vlan, p->mac, &p->ip6, &p->gw6);
				queue_control_frame(p, buf, n);
				next = now + lr.tsc_hz / 4;
			}
			usleep(1000);
		}
	}
	put(o, "{\"ok\":true,\"id\":%d,\"peer_mac\":\"%s\"}", id, mac_str(p->peer_mac, m));
	return 0;
}

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

static int do_stream(struct args *a, struct out *o)
{
	uint64_t id, sport, dport, flows, dscp;
	int tx = -1, rx = -1;
	if (get_u64(a, o, "id", 0, LR_MAX_STREAMS - 1, UINT64_MAX, &id))
		return -1;
	if (id == UINT64_MAX)
		return fail(o, "bad-request", "STREAM: missing id=");
	if (trial_active())
		return fail(o, "busy", "STREAM: a trial is running");
	if (port_arg(a, o, "tx", &tx, true) || port_arg(a, o, "rx", &rx, true))
		return -1;
	if (tx < 0 && rx < 0)
		return fail(o, "bad-value", "STREAM: tx and rx cannot both be none");
	const char *l3s = arg(a, "l3"), *src = arg(a, "src"), *dst = arg(a, "dst"), *vary = arg(a, "vary");
	const char *payload = arg(a, "payload"), *sizes = arg(a, "sizes");
	if (get_u64(a, o, "sport", 0, 65535, 1024, &sport) || get_u64(a, o, "dport", 0, 65535, 1024, &dport) ||
	    get_u64(a, o, "flows", 1, 65536, 1, &flows) || get_u64(a, o, "dscp", 0, 63, 0, &dscp) ||
	    check_unused(a, o, "STREAM"))
		return -1;
	int l3 = 4;
	if (l3s && strcmp(l3s, "ipv6") == 0)
		l3 = 6;
	else if (l3s && strcmp(l3s, "ipv4") != 0)
		return fail(o, "bad-value", "l3=%s: want ipv4 or ipv6", l3s);
	if (!src || !dst || !sizes)
		return fail(o, "bad-request", "STREAM: src=, dst= and sizes= are required");
	struct lr_stream *s = lr.streams[id];
	if (s == NULL) {
		s = calloc(1, sizeof(*s));
		uint64_t nbits = 1ull << lr.window_bits;
		if (s)
			s->win_bits = lr_seqwin_alloc(nbits);
		if (s)
			s->tmpl_mem = calloc(LR_MAX_CLASSES, LR_MAX_FRAME);
		if (!s || !s->win_bits || !s->tmpl_mem) {
			if (s) {
				if (s->win_bits)
					lr_seqwin_free(s->win_bits, nbits);
				free(s->tmpl_mem);
				free(s);
			}
			return fail(o, "no-memory", "STREAM: cannot allocate stream %llu", (unsigned long long)id);
		}
		lr_seqwin_init(&s->win, s->win_bits, nbits);
		lr.streams[id] = s;
	}
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
	put(o, "{\"ok\":true,\"id\":%d,\"cycle_len\":%u,\"mean_frame\":%.3f,\"min_frame\":%u,\"max_frame\":%u}", s->id,
	    s->cycle_len, s->mean_frame, mn, mx);
	return 0;
}

static int parse_list(const char *s, double *out, unsigned max, unsigned *n)
{
	char tmp[512];
	snprintf(tmp, sizeof(tmp), "%s", s);
	*n = 0;
	char *save = NULL;
	for (char *t = strtok_r(tmp, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *end;
		double v = strtod(t, &end);
		if (*end || end == t || *n == max)
			return -1;
		out[(*n)++] = v;
	}
	return *n ? 0 : -1;
}

static void prepare_tx(struct lr_stream *s)
{
	struct lr_port *p = &lr.ports[s->tx_port];
	struct lr_hdr_cfg *h = &s->hdr;
	memcpy(h->src_mac, p->mac, 6);
	memcpy(h->dst_mac, p->peer_mac, 6);
	h->vlan = p->vlan;
	h->l3 = s->l3;
	h->src = s->src;
	h->dst = s->dst;
	h->sport = s->sport;
	h->dport = s->dport;
	h->dscp = s->dscp;
	for (unsigned i = 0; i < sizeof(s->random_bytes); i++)
		s->random_bytes[i] = (uint8_t)((i * 2654435761u + (unsigned)s->id * 40503u) >> 13);
	for (unsigned c = 0; c < s->nclasses; c++) {
		s->tmpl[c].data = s->tmpl_mem + (size_t)c * LR_MAX_FRAME;
		lr_tmpl_build(&s->tmpl[c], h, s->class_size[c], s->payload, s->random_bytes, sizeof(s->random_bytes));
		s->copy_len[c] = s->payload == LR_PAYLOAD_ZEROS && !lr.tx_copy_whole ? LR_MAX_HDR_TAG : s->tmpl[c].len;
		if (s->vary == 0) {
			struct lr_flow_fields ff;
			lr_flow_fields(h, 0, 0, &ff);
			lr_tmpl_fix_flow(&s->tmpl[c], &ff);
		}
	}
}

static void reset_counters(struct lr_stream *s)
{
	s->seq = s->tx_frames = s->tx_bytes = s->warm_sent = s->max_backlog = 0;
	s->pos = s->flow = 0;
	s->n_pending = s->pending_off = 0;
	s->tx_first_tsc = s->tx_last_tsc = 0;
	s->win_start_tsc = s->win_frames = s->peak_win_frames = 0;
	lr_seqwin_reset(&s->win);
	s->rx_bytes = s->late = s->bad_flow = s->corrupted = 0;
	memset(s->class_rx, 0, sizeof(s->class_rx));
	lr_hist_reset(&s->lat);
	s->lat_negative = 0;
}

static int do_trial(struct args *a, struct out *o)
{
	if (trial_active())
		return fail(o, "busy", "TRIAL: a trial is running");
	const char *streams = arg(a, "streams"), *rates = arg(a, "rates"), *unit = arg(a, "unit");
	uint64_t dur, warm, drain, burst, stall, id;
	if (get_u64(a, o, "id", 0, 0x7fffffff, 0, &id) || get_u64(a, o, "duration_ms", 0, 86400000, 0, &dur) || get_u64(a, o, "warmup_ms", 0, 600000, 0, &warm) ||
	    get_u64(a, o, "drain_ms", 0, 600000, 2000, &drain) ||
	    get_u64(a, o, "burst", 0, 1ull << 40, 0, &burst) || get_u64(a, o, "stall_ms", 0, 600000, 0, &stall) ||
	    check_unused(a, o, "TRIAL"))
		return -1;
	double ids[LR_MAX_TRIAL_STREAMS], r[LR_MAX_TRIAL_STREAMS];
	unsigned ns, nr = 0;
	if (!streams || parse_list(streams, ids, LR_MAX_TRIAL_STREAMS, &ns))
		return fail(o, "bad-request", "TRIAL: streams= wants a list of stream ids");
	if (!burst && (!rates || parse_list(rates, r, LR_MAX_TRIAL_STREAMS, &nr) || nr != ns))
		return fail(o, "bad-request", "TRIAL: rates= wants one rate per stream");
	if (!burst && dur == 0)
		return fail(o, "bad-request", "TRIAL: duration_ms= (or burst=) is required");
	int u = 0; /* 0 fps, 1 l2bps, 2 l1bps */
	if (unit && !strcmp(unit, "l2bps"))
		u = 1;
	else if (unit && !strcmp(unit, "l1bps"))
		u = 2;
	else if (unit && strcmp(unit, "fps") != 0)
		return fail(o, "bad-value", "unit=%s: want fps, l2bps or l1bps", unit);
	for (unsigned i = 0; i < ns; i++) {
		int id = (int)ids[i];
		struct lr_stream *s = id >= 0 && id < LR_MAX_STREAMS ? lr.streams[id] : NULL;
		if (s == NULL || !s->defined)
			return fail(o, "bad-value", "streams: stream %d is not defined", id);
		if (s->tx_port >= 0 && !atomic_load(&lr.ports[s->tx_port].peer_known))
			return fail(o, "unresolved", "stream %d: port %d has no next hop yet (RESOLVE it or give peer_mac)",
				    id, s->tx_port);
		if (!burst && r[i] <= 0 && s->tx_port >= 0)
			return fail(o, "bad-value", "rates: stream %d rate must be positive", id);
	}
	for (int i = 0; i < LR_MAX_STREAMS; i++)
		if (lr.streams[i])
			lr.streams[i]->in_trial = false;
	/* tx_pool's payload areas stay zero only while no frame with another payload was built in them */
	bool nonzero = false, zero = false;
	for (unsigned i = 0; i < ns; i++) {
		struct lr_stream *s = lr.streams[(int)ids[i]];
		if (s->tx_port >= 0 && s->payload != LR_PAYLOAD_ZEROS)
			nonzero = true;
		else if (s->tx_port >= 0)
			zero = true;
	}
	if (zero && !nonzero && lr.tx_pool_dirty) {
		lr_zero_tx_pool();
		lr.tx_pool_dirty = false;
	}
	lr.tx_pool_dirty |= nonzero;
	lr.tx_copy_whole = zero && nonzero;
	struct lr_trial *t = &lr.trial;
	t->nstreams = ns;
	for (unsigned i = 0; i < ns; i++) {
		struct lr_stream *s = lr.streams[(int)ids[i]];
		t->streams[i] = s->id;
		reset_counters(s);
		if (s->tx_port >= 0)
			prepare_tx(s);
		double rate = burst ? 0 : r[i];
		s->fps = u == 0 ? rate : u == 1 ? rate / (s->mean_frame * 8) : rate / ((s->mean_frame + 20) * 8);
		s->burst_left = burst;
		s->in_trial = true;
	}
	for (unsigned i = 0; i < lr.nports; i++)
		lr.ports[i].rx_foreign = lr.ports[i].rx_arp = lr.ports[i].tx_arp = lr.ports[i].rx_stale =
			lr.ports[i].rx_warmup = lr.ports[i].rx_total = lr.ports[i].tx_alloc_fail = lr.ports[i].tx_full =
				lr.ports[i].rx_bad_cksum = 0;
	for (unsigned i = 0; i < lr.nports; i++) {
		rte_eth_stats_reset(lr.ports[i].id);
		(void)lr_kernel_rx_drops(lr.ports[i].kernel_ifindex); /* reading resets them */
		lr.ports[i].rx_kernel_drops = 0;
	}
	/* no worker writes its health outside measurement and drain: safe to reset before WARMUP is published */
	for (unsigned i = 0; i < lr.nworkers; i++)
		lr.health[i].max_gap_tsc = 0;
	t->id = id ? (uint32_t)id : t->id + 1;
	t->burst = burst;
	t->warmup_tsc = warm * lr.tsc_hz / 1000;
	t->duration_tsc = dur * lr.tsc_hz / 1000;
	t->drain_tsc = drain * lr.tsc_hz / 1000;
	t->stall_tsc = stall * lr.tsc_hz / 1000;
	t->meas_start_tsc = t->meas_end_tsc = t->end_tsc = 0;
	t->reason[0] = 0;
	atomic_store(&t->abort_req, false);
	t->start_tsc = rte_rdtsc();
	atomic_store_explicit(&t->state, LR_WARMUP, memory_order_release);
	put(o, "{\"ok\":true,\"trial\":%u}", t->id);
	return 0;
}

static const char *state_name(int st)
{
	static const char *names[] = {"idle", "warmup", "running", "draining", "done", "aborted"};
	return st >= 0 && st <= LR_ABORTED ? names[st] : "unknown";
}

static void put_poll(struct out *o)
{
	struct lr_trial *t = &lr.trial;
	int st = atomic_load_explicit(&t->state, memory_order_acquire);
	uint64_t end = st >= LR_DONE ? t->end_tsc : rte_rdtsc();
	uint64_t elapsed = st == LR_IDLE ? 0 : (end - t->start_tsc) * 1000 / lr.tsc_hz;
	put(o, "{\"ok\":true,\"trial\":%u,\"state\":\"%s\",\"elapsed_ms\":%llu,\"streams\":[", t->id, state_name(st),
	    (unsigned long long)elapsed);
	for (unsigned i = 0; i < t->nstreams; i++) {
		struct lr_stream *s = lr.streams[t->streams[i]];
		put(o, "%s{\"id\":%d,\"tx_frames\":%llu,\"rx_frames\":%llu}", i ? "," : "", s->id,
		    (unsigned long long)s->tx_frames, (unsigned long long)s->win.rx);
	}
	put(o, "]}");
}

static int do_poll(struct args *a, struct out *o)
{
	if (check_unused(a, o, "POLL"))
		return -1;
	put_poll(o);
	return 0;
}

static int do_wait(struct args *a, struct out *o)
{
	uint64_t timeout;
	if (get_u64(a, o, "timeout_ms", 0, 86400000, 86400000, &timeout) || check_unused(a, o, "WAIT"))
		return -1;
	uint64_t end = rte_rdtsc() + timeout * lr.tsc_hz / 1000;
	while (trial_active() && rte_rdtsc() < end)
		usleep(1000);
	put_poll(o);
	return 0;
}

static uint64_t class_tx(const struct lr_stream *s, unsigned c, uint64_t n)
{
	uint64_t per_cycle = 0, partial = 0, rem = n % s->cycle_len;
	for (uint32_t i = 0; i < s->cycle_len; i++)
		if (s->cycle_class[i] == c) {
			per_cycle++;
			if (i < rem)
				partial++;
		}
	return n / s->cycle_len * per_cycle + partial;
}

static void put_latency(struct out *o, const struct lr_stream *s)
{
	const struct lr_hist *h = &s->lat;
	bool local = s->tx_port >= 0 && s->rx_port >= 0;
	const char *clock = local ? "local" : lr.realtime ? "realtime" : "unsynchronised";
	if (!local && !lr.realtime) {
		put(o, "\"latency\":{\"valid\":false,\"clock\":\"%s\",\"count\":%llu}", clock,
		    (unsigned long long)h->count);
		return;
	}
	if (s->lat_negative > 0) {
		put(o, "\"latency\":{\"valid\":false,\"clock\":\"%s\",\"count\":%llu,\"negative\":%llu}", clock,
		    (unsigned long long)h->count, (unsigned long long)s->lat_negative);
		return;
	}
	if (h->count == 0) {
		put(o, "\"latency\":{\"valid\":false,\"clock\":\"%s\",\"count\":0}", clock);
		return;
	}
	uint64_t p999 = lr_hist_quantile(h, 0.999);
	put(o,
	    "\"latency\":{\"valid\":true,\"clock\":\"%s\",\"count\":%llu,\"min_ns\":%llu,\"mean_ns\":%llu,"
	    "\"max_ns\":%llu,\"p50_ns\":%llu,\"p90_ns\":%llu,\"p99_ns\":%llu,\"p999_ns\":%llu,\"p9999_ns\":%llu,"
	    "\"pdv_ns\":%llu,\"jitter_ns\":%llu,\"hist\":[",
	    clock, (unsigned long long)h->count, (unsigned long long)h->min, (unsigned long long)(h->sum / h->count),
	    (unsigned long long)h->max, (unsigned long long)lr_hist_quantile(h, 0.5),
	    (unsigned long long)lr_hist_quantile(h, 0.9), (unsigned long long)lr_hist_quantile(h, 0.99),
	    (unsigned long long)p999, (unsigned long long)lr_hist_quantile(h, 0.9999),
	    (unsigned long long)(p999 - h->min), (unsigned long long)(h->j16 / 16));
	bool first = true;
	for (unsigned i = 0; i < LR_HIST_BUCKETS; i++)
		if (h->b[i]) {
			put(o, "%s[%llu,%llu]", first ? "" : ",", (unsigned long long)lr_hist_upper(i),
			    (unsigned long long)h->b[i]);
			first = false;
		}
	put(o, "]}");
}

static int do_result(struct args *a, struct out *o)
{
	if (check_unused(a, o, "RESULT"))
		return -1;
	struct lr_trial *t = &lr.trial;
	int st = atomic_load_explicit(&t->state, memory_order_acquire);
	if (st == LR_IDLE)
		return fail(o, "no-trial", "RESULT: no trial has run");
	if (st != LR_DONE && st != LR_ABORTED)
		return fail(o, "busy", "RESULT: trial %u is still %s", t->id, state_name(st));
	uint64_t meas_end = t->meas_end_tsc ? t->meas_end_tsc : t->end_tsc;
	uint64_t meas = t->meas_start_tsc && meas_end > t->meas_start_tsc ? meas_end - t->meas_start_tsc : 0;
	put(o, "{\"ok\":true,\"trial\":%u,\"state\":\"%s\",\"reason\":\"%s\",\"duration_ns\":%llu,\"streams\":[", t->id,
	    state_name(st), t->reason, (unsigned long long)((double)meas * lr.ns_per_tsc));
	for (unsigned i = 0; i < t->nstreams; i++) {
		struct lr_stream *s = lr.streams[t->streams[i]];
		/* Offered is judged by frames: a trial of d s at r frames/s must send ceil(d·r) frames. A late
		 * look at the clock (the OS preempting the worker) stretches the measured interval but does
		 * not make the tester the bottleneck; frames it could not send do. */
		double secs = (double)t->duration_tsc / (double)lr.tsc_hz;
		if (t->burst)
			secs = s->tx_last_tsc > s->tx_first_tsc ? (double)(s->tx_last_tsc - s->tx_first_tsc) / (double)lr.tsc_hz : 0;
		double achieved = secs > 0 ? (double)s->tx_frames / secs : 0;
		uint64_t expected = t->burst ? 0 : (uint64_t)((double)(t->duration_tsc - 1) * s->fps / (double)lr.tsc_hz) + 1;
		bool saturated = s->tx_port >= 0 && !t->burst && st == LR_DONE && (double)s->tx_frames < (double)expected * 0.995;
		/* Loss is the runner's to compute from these counts (PROTOCOL.md): with a stream's two halves
		 * on two engines, only it has both. */
		uint64_t rx = s->win.rx, dup = s->win.dup;
		put(o,
		    "%s{\"id\":%d,\"target_fps\":%.3f,\"achieved_fps\":%.3f,\"saturated\":%s,\"tx_frames\":%llu,"
		    "\"tx_bytes\":%llu,\"rx_frames\":%llu,\"rx_bytes\":%llu,\"duplicates\":%llu,"
		    "\"reordered\":%llu,\"early\":%llu,\"late\":%llu,\"beyond_window\":%llu,\"max_late\":%llu,"
		    "\"max_early\":%llu,"
		    "\"bad_flow\":%llu,\"corrupted\":%llu,\"tx_max_lag_ns\":%llu,\"scheduled_frames\":%llu,"
		    "\"tx_peak_fps\":%llu,",
		    i ? "," : "", s->id, t->burst ? 0.0 : s->fps, achieved, saturated ? "true" : "false",
		    (unsigned long long)s->tx_frames, (unsigned long long)s->tx_bytes, (unsigned long long)rx,
		    (unsigned long long)s->rx_bytes, (unsigned long long)dup,
		    (unsigned long long)s->win.reordered, (unsigned long long)s->win.early, (unsigned long long)s->late,
		    (unsigned long long)s->win.beyond, (unsigned long long)s->win.max_late,
		    (unsigned long long)s->win.max_early,
		    (unsigned long long)s->bad_flow, (unsigned long long)s->corrupted,
		    (unsigned long long)(s->fps > 0 && s->max_backlog > 1 ? (double)(s->max_backlog - 1) * 1e9 / s->fps : 0),
		    (unsigned long long)(s->tx_port < 0 ? 0 : t->burst ? t->burst : expected),
		    (unsigned long long)(s->peak_win_frames > s->win_frames ? s->peak_win_frames : s->win_frames) * 1000ULL);
		put_latency(o, s);
		put(o, ",\"classes\":[");
		for (unsigned c = 0; c < s->nclasses; c++) {
			uint64_t ctx = s->tx_port >= 0 ? class_tx(s, c, s->tx_frames) : 0;
			put(o, "%s{\"size\":%u,\"tx_frames\":%llu,\"rx_frames\":%llu}", c ? "," : "",
			    s->class_size[c], (unsigned long long)ctx, (unsigned long long)s->class_rx[c]);
		}
		put(o, "]}");
	}
	put(o, "],\"ports\":[");
	for (unsigned i = 0; i < lr.nports; i++) {
		struct lr_port *p = &lr.ports[i];
		struct rte_eth_stats es;
		memset(&es, 0, sizeof(es));
		rte_eth_stats_get(p->id, &es);
		p->rx_kernel_drops += lr_kernel_rx_drops(p->kernel_ifindex); /* stable across repeated RESULTs */
		put(o,
		    "%s{\"id\":%u,\"rx_foreign\":%llu,\"rx_arp\":%llu,\"tx_arp\":%llu,\"rx_stale\":%llu,"
		    "\"rx_warmup\":%llu,\"imissed\":%llu,\"ierrors\":%llu,\"oerrors\":%llu,\"rx_nombuf\":%llu,"
		    "\"tx_alloc_fail\":%llu,\"tx_full\":%llu,\"rx_bad_checksum\":%llu,\"rx_kernel_drops\":%llu}",
		    i ? "," : "", i, (unsigned long long)p->rx_foreign, (unsigned long long)p->rx_arp,
		    (unsigned long long)p->tx_arp, (unsigned long long)p->rx_stale, (unsigned long long)p->rx_warmup,
		    (unsigned long long)es.imissed, (unsigned long long)es.ierrors, (unsigned long long)es.oerrors,
		    (unsigned long long)es.rx_nombuf, (unsigned long long)p->tx_alloc_fail,
		    (unsigned long long)p->tx_full, (unsigned long long)p->rx_bad_cksum,
		    (unsigned long long)p->rx_kernel_drops);
	}
	put(o, "],\"workers\":[");
	for (unsigned i = 0; i < lr.nworkers; i++)
		put(o, "%s{\"lcore\":%u,\"role\":\"%s\",\"max_gap_ns\":%llu}", i ? "," : "", lr.health[i].lcore,
		    lr.health[i].role, (unsigned long long)((double)lr.health[i].max_gap_tsc * lr.ns_per_tsc));
	put(o, "]}");
	return 0;
}

static int do_abort(struct args *a, struct out *o)
{
	if (check_unused(a, o, "ABORT"))
		return -1;
	atomic_store_explicit(&lr.trial.abort_req, true, memory_order_release);
	for (int i = 0; i < 1000 && trial_active(); i++)
		usleep(1000);
	put_poll(o);
	return 0;
}

/* Returns 1 when the engine should quit. */
static int handle(char *line, struct out *o)
{
	char *verb;
	struct args a;
	o->len = 0;
	if (split_args(line, &verb, &a, o))
		return 0;
	if (verb == NULL) {
		fail(o, "bad-request", "empty request");
		return 0;
	}
	if (!strcmp(verb, "HELLO"))
		do_hello(&a, o);
	else if (!strcmp(verb, "TIME"))
		do_time(&a, o);
	else if (!strcmp(verb, "PORT"))
		do_port(&a, o);
	else if (!strcmp(verb, "RESOLVE"))
		do_resolve(&a, o);
	else if (!strcmp(verb, "STREAM"))
		do_stream(&a, o);
	else if (!strcmp(verb, "TRIAL"))
		do_trial(&a, o);
	else if (!strcmp(verb, "POLL"))
		do_poll(&a, o);
	else if (!strcmp(verb, "WAIT"))
		do_wait(&a, o);
	else if (!strcmp(verb, "RESULT"))
		do_result(&a, o);
	else if (!strcmp(verb, "ABORT"))
		do_abort(&a, o);
	else if (!strcmp(verb, "QUIT")) {
		atomic_store_explicit(&lr.trial.abort_req, true, memory_order_release);
		put(o, "{\"ok\":true}");
		return 1;
	} else
		fail(o, "bad-request", "unknown verb '%s'", verb);
	return 0;
}

static int listen_on(const char *addr)
{
	int fd;
	if (strncmp(addr, "tcp:", 4) == 0) {
		char host[256];
		snprintf(host, sizeof(host), "%s", addr + 4);
		char *colon = strrchr(host, ':');
		if (colon == NULL)
			return -1;
		*colon = 0;
		struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE};
		struct addrinfo *res;
		if (getaddrinfo(host[0] ? host : NULL, colon + 1, &hints, &res) != 0)
			return -1;
		fd = socket(res->ai_family, SOCK_STREAM, 0);
		int one = 1;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (fd < 0 || bind(fd, res->ai_addr, res->ai_addrlen) != 0) {
			freeaddrinfo(res);
			return -1;
		}
		freeaddrinfo(res);
	} else {
		struct sockaddr_un sa = {.sun_family = AF_UNIX};
		if (strlen(addr) >= sizeof(sa.sun_path))
			return -1;
		memcpy(sa.sun_path, addr, strlen(addr) + 1);
		unlink(addr);
		fd = socket(AF_UNIX, SOCK_STREAM, 0);
		if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
			return -1;
	}
	return listen(fd, 4) == 0 ? fd : -1;
}

void lr_control_serve(const char *addr)
{
	int lfd = listen_on(addr);
	if (lfd < 0) {
		fprintf(stderr, "linerate-engine: cannot listen on %s: %s\n", addr, strerror(errno));
		return;
	}
	printf("linerate-engine: %u ports, control on %s\n", lr.nports, addr);
	fflush(stdout);
	struct out o = {.buf = malloc(65536), .cap = 65536};
	size_t cap = 1 << 16;
	char *line = malloc(cap);
	bool quit = false;
	while (!quit) {
		int fd = accept(lfd, NULL, NULL);
		if (fd < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		size_t have = 0;
		for (;;) {
			char *nl = memchr(line, '\n', have);
			if (nl == NULL) {
				if (have == cap) {
					o.len = 0;
					fail(&o, "bad-request", "request line longer than %zu bytes", cap);
					put(&o, "\n");
					(void)!write(fd, o.buf, o.len);
					break;
				}
				ssize_t n = read(fd, line + have, cap - have);
				if (n <= 0)
					break;
				have += (size_t)n;
				continue;
			}
			*nl = 0;
			size_t used = (size_t)(nl - line) + 1;
			quit = handle(line, &o) == 1;
			put(&o, "\n");
			size_t off = 0;
			while (off < o.len) {
				ssize_t w = write(fd, o.buf + off, o.len - off);
				if (w <= 0)
					break;
				off += (size_t)w;
			}
			memmove(line, line + used, have - used);
			have -= used;
			if (quit)
				break;
		}
		close(fd);
	}
	close(lfd);
	if (addr[0] != 't')
		unlink(addr);
	free(line);
	free(o.buf);
}
