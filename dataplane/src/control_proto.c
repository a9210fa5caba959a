/* The control socket's request/reply language (PROTOCOL.md): a request is a verb and key=value
 * arguments, a reply is one JSON object built up in a struct out, a refusal is {"ok":false} with an error
 * code and a message. The parsers of argument values (integers, addresses, lists) live here too, so every
 * verb refuses a bad value with the same words. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "control_proto.h"
#include "engine.h"

/* ---- a growable JSON response ---- */
void put(struct out *o, const char *fmt, ...)
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

int fail(struct out *o, const char *code, const char *fmt, ...)
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
int split_args(char *line, char **verb, struct args *a, struct out *o)
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

const char *arg(struct args *a, const char *key)
{
	for (int i = 0; i < a->n; i++)
		if (strcmp(a->k[i], key) == 0) {
			a->used[i] = true;
			return a->v[i];
		}
	return NULL;
}

int check_unused(struct args *a, struct out *o, const char *verb)
{
	for (int i = 0; i < a->n; i++)
		if (!a->used[i])
			return fail(o, "bad-request", "%s: unknown key '%s'", verb, a->k[i]);
	return 0;
}

int get_u64(struct args *a, struct out *o, const char *key, uint64_t min, uint64_t max, uint64_t def,
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
int parse_mac(const char *s, uint8_t *mac)
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
int parse_ip(const char *s, int l3, uint8_t *out, int *len)
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

const char *mac_str(const uint8_t *m, char *buf)
{
	sprintf(buf, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
	return buf;
}

int parse_list(const char *s, double *out, unsigned max, unsigned *n)
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

/* A port's id, from argument key: one of the engine's ports ("none" too when allow_none: -1). */
int port_arg(struct args *a, struct out *o, const char *key, int *id, bool allow_none)
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
