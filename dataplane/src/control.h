/* What the control socket's files share, and nothing else includes: the request/reply language
 * (control_proto.c) and the verbs it dispatches to (control_ports.c, control_streams.c, control_trial.c,
 * control_report.c). A verb reads its arguments from a struct args, writes its reply into a struct out,
 * and returns -1 when it refused (the reply then says why), 0 otherwise. */
#ifndef LR_CONTROL_H
#define LR_CONTROL_H

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

/* control_ports.c */
int port_arg(struct args *a, struct out *o, const char *key, int *id, bool allow_none);
int do_hello(struct args *a, struct out *o);
int do_time(struct args *a, struct out *o);
int do_port(struct args *a, struct out *o);
int do_resolve(struct args *a, struct out *o);

/* control_streams.c */
int do_stream(struct args *a, struct out *o);

/* control_trial.c */
bool trial_active(void);
const char *state_name(int st);
int do_trial(struct args *a, struct out *o);
int do_poll(struct args *a, struct out *o);
int do_wait(struct args *a, struct out *o);
int do_abort(struct args *a, struct out *o);

/* control_report.c */
int do_result(struct args *a, struct out *o);

#endif
