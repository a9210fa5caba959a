/* The control socket (PROTOCOL.md): one request line in, one JSON line out, one client at a time.
 * Runs on the main lcore; never touches the fast path except through the hand-offs described in
 * engine.h. This file holds the connections and hands each request to its verb (control_*.c). */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "control.h"
#include "control_ports.h"
#include "control_report.h"
#include "control_streams.h"
#include "control_trial.h"
#include "timeline.h"
#include "engine.h"

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
	else if (!strcmp(verb, "TIMELINE"))
		lr_timeline_put(&a, o);
	else if (!strcmp(verb, "ABORT"))
		do_abort(&a, o);
	else if (!strcmp(verb, "QUIET"))
		do_quiet(&a, o);
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
