/* This process's cgroups (cgroup.c), v1 or v2, read up to the controller's mount. */
#ifndef LR_CGROUP_H
#define LR_CGROUP_H

/* CPUs the cgroups let this process use (quota / period, the smallest up the chain), 0 when unlimited or
 * unknown. */
double lr_cgroup_cpus(void);
/* The share of a CPU its real-time threads may use (the smallest cpu.rt_runtime_us / cpu.rt_period_us up
 * the chain, cgroup v1 with RT group scheduling), 1 where the cgroups set none: the kernel's own limit
 * (sched_rt_runtime_us, 95 %) alone. */
double lr_cgroup_rt_share(void);

#endif
