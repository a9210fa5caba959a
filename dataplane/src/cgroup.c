/* This process's cgroups, as the engine reads them: the CPU quota and the real-time budget (cgroup.h). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"

/* The first line of a small kernel file, "" when it cannot be read. */
static void read_line(const char *path, char *buf, size_t len)
{
	buf[0] = 0;
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return;
	if (fgets(buf, (int)len, f) == NULL)
		buf[0] = 0;
	fclose(f);
}

/* A number at the start of s, or -1 when there is none (or it is negative). */
static double leading_number(const char *s)
{
	char *end;
	double v = strtod(s, &end);
	return end == s || v < 0 ? -1 : v;
}

/* This process's cgroup directory under the controller's mount, from /proc/self/cgroup: "0::/path" on
 * cgroup v2, "N:cpu,cpuacct:/path" on v1. A container with its own cgroup namespace sees "/" there; a
 * process on a host (or in a test's cgroup) sees its real path, and its quota is in that directory. */
static bool own_cgroup(bool v2, char *dir, size_t len)
{
	FILE *f = fopen("/proc/self/cgroup", "r");
	if (f == NULL)
		return false;
	char line[512];
	bool found = false;
	while (!found && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		char *ctrl = strchr(line, ':');
		char *path = ctrl ? strchr(ctrl + 1, ':') : NULL;
		if (path == NULL)
			continue;
		*path++ = 0;
		/* "0::/path": the hierarchy ID must end at its colon to be compared as "0" */
		*ctrl++ = 0;
		if (v2 && !strcmp(line, "0") && !ctrl[0])
			found = snprintf(dir, len, "/sys/fs/cgroup%s", path) < (int)len;
		/* the v1 cpu controller, alone or joined with cpuacct: the list holds "cpu" as a whole word */
		for (char *w = ctrl; !v2 && !found && w && *w; w = strchr(w, ',') ? strchr(w, ',') + 1 : NULL)
			if (!strncmp(w, "cpu", 3) && (w[3] == ',' || w[3] == 0))
				found = snprintf(dir, len, "/sys/fs/cgroup/cpu%s", path) < (int)len;
	}
	fclose(f);
	return found;
}

/* CPUs the cgroup directory dir allows (quota / period), 0 when unlimited or unreadable. */
static double quota_at(bool v2, const char *dir)
{
	char file[448], line[64] = "";
	if (v2) {
		snprintf(file, sizeof(file), "%s/cpu.max", dir); /* "QUOTA PERIOD" or "max PERIOD" */
		read_line(file, line, sizeof(line));
		char *gap = strchr(line, ' ');
		double quota = leading_number(line), period = gap ? leading_number(gap + 1) : -1;
		return quota > 0 && period > 0 ? quota / period : 0;
	}
	snprintf(file, sizeof(file), "%s/cpu.cfs_quota_us", dir); /* -1 = unlimited */
	read_line(file, line, sizeof(line));
	double q = leading_number(line);
	snprintf(file, sizeof(file), "%s/cpu.cfs_period_us", dir);
	read_line(file, line, sizeof(line));
	double p = leading_number(line);
	return q > 0 && p > 0 ? q / p : 0;
}

/* The smallest positive value read() gives over this process's cgroup and every one above it up to the
 * controller's mount (a pod's limit may sit on the pod's cgroup, above the container's), 0 when none is.
 * A container on cgroup v1 sees its host path in /proc/self/cgroup but has its own cgroup mounted at the
 * root: a path that does not exist under the mount means the mount root is ours. */
static double smallest_up_the_chain(double (*read)(bool v2, const char *dir))
{
	char dir[400];
	bool v2 = access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0;
	const char *root = v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/cpu";
	if (!own_cgroup(v2, dir, sizeof(dir)) || access(dir, F_OK) != 0)
		snprintf(dir, sizeof(dir), "%s", root);
	double least = 0;
	for (;;) {
		double v = read(v2, dir);
		if (v > 0 && (least == 0 || v < least))
			least = v;
		char *slash = strrchr(dir, '/');
		if (strlen(dir) <= strlen(root) || slash == NULL)
			break;
		*slash = 0;
	}
	return least;
}

double lr_cgroup_cpus(void)
{
	return smallest_up_the_chain(quota_at);
}

/* The share of a CPU real-time threads of cgroup dir may use (cgroup v1 with RT group scheduling: its
 * cpu.rt_runtime_us / cpu.rt_period_us); a tiny positive value for a budget of 0, 0 where there is none
 * of these files. */
static double rt_share_at(bool v2, const char *dir)
{
	if (v2)
		return 0;
	char file[448], line[64] = "";
	snprintf(file, sizeof(file), "%s/cpu.rt_runtime_us", dir);
	read_line(file, line, sizeof(line));
	double r = leading_number(line);
	snprintf(file, sizeof(file), "%s/cpu.rt_period_us", dir);
	read_line(file, line, sizeof(line));
	double p = leading_number(line);
	if (r < 0 || p <= 0)
		return 0;
	return r > 0 ? r / p : 1e-9;
}

double lr_cgroup_rt_share(void)
{
	double s = smallest_up_the_chain(rt_share_at);
	return s > 0 ? s : 1;
}

