/* gw-launch: what each process of the job is started with, per link, and
 * what the shards say once they run (their endpoints, their readiness). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "launch.h"

void argv_add(struct argv *a, const char *s)
{
	if (a->n < MAX_ARGS)
		a->v[a->n++] = strdup(s);
	a->v[a->n] = NULL;
}

void argv_optu(struct argv *a, const char *name, unsigned v)
{
	argv_add(a, name);
	argv_addf(a, "%u", v);
}

void argv_free(struct argv *a)
{
	for (unsigned i = 0; i < a->n; i++)
		free(a->v[i]);
	a->n = 0;
	a->v[0] = NULL;
}

void argv_addf(struct argv *a, const char *fmt, ...)
{
	char buf[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	argv_add(a, buf);
}

/* DPDK without hugepages or PCI, quiet, on the job's cores: memif only
 * joins two processes, so each has a vdev per peer. */
static void eal(const struct job *j, struct argv *a, const char *prefix, unsigned mb)
{
	argv_add(a, "-l");
	argv_add(a, j->o->cores);
	argv_add(a, "--no-huge");
	argv_add(a, "--no-pci");
	argv_add(a, "-m");
	argv_addf(a, "%u", mb);
	argv_add(a, "--no-shconf");
	argv_addf(a, "--file-prefix=%s", prefix);
	argv_add(a, "--log-level=lib.eal:error");
	argv_add(a, "--log-level=pmd.net.memif:error");
}

/* [ip netns exec NS] EXE [EAL options --] --backend B --local LOCAL: a
 * shard (id: its index) or a worker (its rank). memif joins two processes
 * only: a shard has a port per worker and a worker one per shard, the
 * link of shard s and worker w being the socket s<s>.w<w>. */
static void head(const struct job *j, struct argv *a, const char *exe, bool shard, unsigned id,
		 const char *local)
{
	const struct opts *o = j->o;
	if (o->link == LINK_NETNS) {
		argv_add(a, "ip");
		argv_add(a, "netns");
		argv_add(a, "exec");
		if (shard)
			argv_add(a, "gwhub");
		else
			argv_addf(a, "gwn%u", id);
	}
	argv_add(a, exe);
	if (o->link == LINK_MEMIF) {
		unsigned n = shard ? o->workers : o->shards;
		char prefix[64];
		snprintf(prefix, sizeof(prefix), shard ? "gwla%ds%u" : "gwlw%dw%u", (int)j->self, id);
		/* A mempool per port: about 40 MB each with the default pool. */
		eal(j, a, prefix, shard ? 128 + 48 * n : 192 + 64 * n);
		for (unsigned i = 0; i < n; i++)
			argv_addf(a, "--vdev=net_memif%u,role=%s,id=0,socket=%s/s%u.w%u.sock,"
				  "socket-abstract=no", i, shard ? "server" : "client", j->run,
				  shard ? id : i, shard ? i : id);
		argv_add(a, "--");
	}
	argv_add(a, "--backend");
	argv_add(a, o->link == LINK_MEMIF ? "dpdk" : o->link == LINK_RDMA ? "rdma" : "udp");
	argv_add(a, "--local");
	argv_add(a, local);
}

static void add_job(const struct job *j, struct argv *a)
{
	for (unsigned i = 0; i < j->o->njob; i++)
		argv_add(a, j->o->job[i]);
}

/* udp and rdma: the link's address, port 0 (the kernel or the device
 * picks; a shard prints what it got). */
static void port0(const struct opts *o, char *buf, size_t n)
{
	snprintf(buf, n, "%s:0", o->link == LINK_RDMA ? o->rdma_ip : "127.0.0.1");
}

void job_shard_cmd(const struct job *j, unsigned s, struct argv *a)
{
	const struct opts *o = j->o;
	char local[64];
	/* memif and netns: a fixed address. */
	if (o->link == LINK_MEMIF || o->link == LINK_NETNS)
		snprintf(local, sizeof(local), "%s", j->eps[s]);
	else
		port0(o, local, sizeof(local));
	head(j, a, o->agg, true, s, local);
	if (o->link == LINK_MEMIF) {
		argv_optu(a, "--ports", o->workers);
		/* Its workers start after it: it must not wait for links. */
		argv_add(a, "--opts");
		argv_add(a, "link_wait=0");
	}
	argv_optu(a, "--shard", s);
	argv_optu(a, "--shards", o->shards);
	argv_optu(a, "--workers", o->workers);
	add_job(j, a);
	for (unsigned i = 0; i < o->nagg; i++)
		argv_add(a, o->agg_extra[i]);
}

void job_worker_cmd(const struct job *j, unsigned w, bool rejoin, struct argv *a)
{
	const struct opts *o = j->o;
	char local[64];
	if (o->link == LINK_MEMIF)
		snprintf(local, sizeof(local), "10.77.1.%u:7000", w + 1);
	else if (o->link == LINK_NETNS)
		snprintf(local, sizeof(local), "10.77.0.%u:7100", w + 1);
	else
		port0(o, local, sizeof(local));
	head(j, a, o->worker, false, w, local);
	/* memif: port s is the link to shard s. */
	if (o->link == LINK_MEMIF && o->shards > 1) {
		argv_optu(a, "--ports", o->shards);
	}
	argv_add(a, "--agg");
	argv_add(a, j->aggs);
	argv_optu(a, "--rank", w);
	argv_optu(a, "--workers", o->workers);
	argv_optu(a, "--shards", o->shards);
	if (o->colocate)
		argv_add(a, "--host-shard");
	add_job(j, a);
	for (int i = 1; i < o->wargc; i++)
		argv_add(a, o->wargv[i]);
	/* --rank-args R:ARGS, split at blanks. */
	if (o->rank_extra[w]) {
		char *copy = strdup(o->rank_extra[w]), *save = NULL;
		for (char *t = strtok_r(copy, " \t", &save); t; t = strtok_r(NULL, " \t", &save))
			argv_add(a, t);
		free(copy);
	}
	/* A restart says hello until every shard takes it: the old process
	 * must be found gone first. */
	if (rejoin) {
		argv_add(a, "--rejoin");
		argv_add(a, "30000");
	}
}

/* UDP ports bound on this machine, from the kernel's tables. */
static void used_ports(unsigned char *used)
{
	const char *tab[] = {"/proc/net/udp", "/proc/net/udp6"};
	for (unsigned t = 0; t < 2; t++) {
		FILE *f = fopen(tab[t], "r");
		char line[512];
		while (f && fgets(line, sizeof(line), f)) {
			char *c = strchr(line, ':');            /* after "sl" */
			c = c ? strchr(c + 1, ':') : NULL;      /* the local port */
			unsigned port;
			if (c && sscanf(c + 1, "%x", &port) == 1 && port < 65536)
				used[port] = 1;
		}
		if (f)
			fclose(f);
	}
}

int job_colocated_eps(struct job *j)
{
	const struct opts *o = j->o;
	if (o->link == LINK_NETNS) {
		for (unsigned s = 0; s < o->shards; s++)
			snprintf(j->eps[s], sizeof(j->eps[s]), "10.77.0.%u:7000", s + 1);
		return 0;
	}
	/* Ports base .. base + S - 1, all free: every endpoint must be known
	 * before any worker starts. */
	static unsigned char used[65536];
	used_ports(used);
	srand((unsigned)time(NULL) ^ (unsigned)j->self);
	for (int attempt = 0; attempt < 50; attempt++) {
		unsigned base = 20000 + (unsigned)rand() % 40000, s;
		for (s = 0; s < o->shards && !used[base + s]; s++)
			;
		if (s < o->shards)
			continue;
		for (s = 0; s < o->shards; s++)
			snprintf(j->eps[s], sizeof(j->eps[s]), "127.0.0.1:%u", base + s);
		return 0;
	}
	fprintf(stderr, PROG ": --colocate: no %u free UDP ports\n", o->shards);
	return -1;
}

/* Each line of path to fn until it returns true (then true). */
static bool lines(const char *path, bool (*fn)(const char *line, void *arg), void *arg)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	char line[4096];
	bool hit = false;
	while (!hit && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		hit = fn(line, arg);
	}
	fclose(f);
	return hit;
}

/* "gw-aggregator shard 0: endpoint 127.0.0.1:4000" or
 * {"tool":"gw-aggregator","shard":0,"endpoint":"127.0.0.1:4000"}. */
static bool endpoint_in(const char *line, void *arg)
{
	char *ep = arg;
	const char *at = strstr(line, "endpoint");
	if (!at)
		return false;
	at += strlen("endpoint");
	at += strspn(at, "\": ");
	size_t n = strspn(at, "0123456789.:");
	const char *colon = memchr(at, ':', n);
	if (!n || n >= 64 || !colon || colon == at || colon + 1 == at + n)
		return false;
	memcpy(ep, at, n);
	ep[n] = '\0';
	return true;
}

void job_read_endpoint(struct job *j, unsigned s)
{
	if (j->eps[s][0])
		return;
	char path[4200];
	snprintf(path, sizeof(path), "%s/agg.%u.out", j->logs, s);
	lines(path, endpoint_in, j->eps[s]);
}

/* "gw-aggregator: shard 0 of 2, ..., ready" */
static bool ready_line(const char *line, void *arg)
{
	(void)arg;
	size_t n = strlen(line);
	return !strncmp(line, "gw-aggregator: shard ", 21) && n >= 7 &&
	       !strcmp(line + n - 7, ", ready");
}

bool job_shard_ready(const struct job *j, unsigned s)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/agg.%u.err", j->logs, s);
	return lines(path, ready_line, NULL);
}

void job_not_up(const struct job *j, const bool *waiting, char *buf, size_t len)
{
	size_t at = 0;
	buf[0] = '\0';
	for (unsigned s = 0; s < j->o->shards && at < len; s++) {
		if (!waiting[s])
			continue;
		bool said = !j->eps[s][0] && job_shard_ready(j, s);
		at += (size_t)snprintf(buf + at, len - at, "%sshard %u %s", at ? ", " : "", s,
				       said ? "printed no endpoint" : "not ready");
	}
}
