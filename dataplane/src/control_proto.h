/* The control socket's request/reply language (control_proto.c, PROTOCOL.md): a request is a verb and
 * key=value arguments (struct args), a reply one JSON object built in a struct out. A verb reads its
 * arguments with the parsers here, so every verb refuses a bad value with the same words, and returns -1
 * when it refused (the reply then says why), 0 otherwise. */
#ifndef LR_CONTROL_PROTO_H
#define LR_CONTROL_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- a growable JSON response ---- */
struct out {
	char *buf;
	size_t len, cap;
};

void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int fail(struct out *o, const char *code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- request arguments ---- */
#define MAX_ARGS 24
struct args {
	int n;
	char *k[MAX_ARGS], *v[MAX_ARGS];
	bool used[MAX_ARGS];
};

int split_args(char *line, char **verb, struct args *a, struct out *o);
const char *arg(struct args *a, const char *key);
int check_unused(struct args *a, struct out *o, const char *verb);
int get_u64(struct args *a, struct out *o, const char *key, uint64_t min, uint64_t max, uint64_t def, uint64_t *v);
int parse_mac(const char *s, uint8_t *mac);
int parse_ip(const char *s, int l3, uint8_t *out, int *len);
const char *mac_str(const uint8_t *m, char *buf);
int parse_list(const char *s, double *out, unsigned max, unsigned *n);
/* A port's id, from argument key: one of the engine's ports ("none" too when allow_none: -1). */
int port_arg(struct args *a, struct out *o, const char *key, int *id, bool allow_none);

#endif
