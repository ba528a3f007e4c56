/* gw_member: a framework's view of one process of a job (gw/member.h).
 * Options are text, checked as they are set; the job itself is assembled
 * at gw_member_connect, once the framework knows the tensor's size. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gw/member.h>

#include "coll_internal.h"
#include "coll_opts.h"

#define EAL_ARGS_MAX 32

struct eal {
	char *buf;                 /* the text, split in place */
	char *argv[EAL_ARGS_MAX + 1];
	int argc;
};

struct gw_member {
	/* options */
	struct coll_opt_vals o;    /* the table's (coll_opts.h) */
	int up, down;              /* codec ids; 0: the engine's */
	char *up_params, *down_params;
	struct coll_engine_params ep;   /* from o at connect; dense's tensor_elems: owned */
	uint8_t key[GW_KEY_LEN];
	int keyed;
	gw_endpoint *ext;          /* external shards, or NULL: co-located */
	uint32_t next;
	char backend[8];
	gw_endpoint local;         /* ip; port: the co-located shard's */
	char *opts;
	struct eal eal, shard_eal;
	/* state */
	uint32_t rank, workers;
	uint64_t dim;
	gw_dp *dp, *sdp;           /* worker's; the co-located shard's */
	gw_agg *agg;
	gw_agg_thread *thr;
	gw_comm *comm;
	char gpu[8];               /* "", "emu" or "cuda": grad's memory */
	gw_gpu *g;
};

gw_member *gw_member_new(void)
{
	gw_member *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	strcpy(m->backend, "udp");
	coll_opts_init(&m->o);
	gw_endpoint_parse("127.0.0.1:0", &m->local);
	return m;
}

void gw_member_free(gw_member *m)
{
	if (!m)
		return;
	gw_agg_join(m->thr);
	free((void *)m->ep.dense.tensor_elems);
	gw_agg_free(m->agg);
	gw_comm_free(m->comm);
	gw_gpu_close(m->g);
	gw_dp_close(m->sdp);
	gw_dp_close(m->dp);
	free(m->up_params);
	free(m->down_params);
	free(m->ext);
	free(m->opts);
	free(m->eal.buf);
	free(m->shard_eal.buf);
	free(m);
}

/* "name[:k=v,...]": the codec's id and its parameters, checked by making
 * an encoder of them. */
static int set_codec(const char *name, const char *v, int *id, char **params)
{
	gw_encoder *enc = gw_encoder_from_string(v);
	if (!enc)
		return GW_ERRF(GW_EINVAL, "%s: %s", name, gw_error_detail());
	gw_encoder_free(enc);
	const char *colon = strchr(v, ':');
	size_t n = colon ? (size_t)(colon - v) : strlen(v);
	char cname[32];
	snprintf(cname, sizeof(cname), "%.*s", (int)GW_MIN(n, sizeof(cname) - 1), v);
	char *p = colon ? strdup(colon + 1) : NULL;
	if (colon && !p)
		return GW_ERRF(GW_ENOMEM, "out of memory");
	free(*params);
	*params = p;
	*id = gw_codec_by_name(cname);
	return GW_OK;
}

/* "IP:PORT,IP:PORT,...": a new array of *n endpoints. */
static int parse_endpoints(const char *v, gw_endpoint **out, uint32_t *n)
{
	uint32_t k = 1;
	for (const char *s = v; *s; s++)
		k += *s == ',';
	if (k > GW_COLL_WORKERS_MAX)
		return GW_ERRF(GW_EINVAL, "shards: %u endpoints, at most %u", k,
			       GW_COLL_WORKERS_MAX);
	gw_endpoint *ep = calloc(k, sizeof(*ep));
	if (!ep)
		return GW_ERRF(GW_ENOMEM, "out of memory");
	const char *s = v;
	for (uint32_t i = 0; i < k; i++) {
		const char *e = strchr(s, ',');
		size_t len = e ? (size_t)(e - s) : strlen(s);
		char one[80];
		if (len >= sizeof(one) ||
		    (snprintf(one, sizeof(one), "%.*s", (int)len, s), gw_endpoint_parse(one, &ep[i]) < 0)) {
			free(ep);
			return GW_ERRF(GW_EINVAL, "shards: '%.*s' is not IP:PORT[@MAC] (or "
				       "'colocated')", (int)GW_MIN(len, 64), s);
		}
		s = e ? e + 1 : s + len;
	}
	*out = ep;
	*n = k;
	return GW_OK;
}

static int set_endpoints(gw_member *m, const char *v)
{
	gw_endpoint *ep;
	uint32_t n;
	int rc = parse_endpoints(v, &ep, &n);
	if (rc < 0)
		return rc;
	if (n > GW_COLL_SHARDS_MAX) {
		free(ep);
		return GW_ERRF(GW_EINVAL, "shards: %u endpoints, at most %u", n,
			       GW_COLL_SHARDS_MAX);
	}
	free(m->ext);
	m->ext = ep;
	m->next = n;
	return GW_OK;
}

static int set_eal(struct eal *e, const char *name, const char *v)
{
	/* argv[0] with its NUL, then v's words each with a NUL: at most v's
	 * bytes and one more (the last word's NUL, where v has no space after
	 * it). */
	static const char arg0[] = "gradwire";
	char *buf = malloc(sizeof(arg0) + strlen(v) + 1);
	if (!buf)
		return GW_ERRF(GW_ENOMEM, "out of memory");
	memcpy(buf, arg0, sizeof(arg0));
	int argc = 1;
	char *argv[EAL_ARGS_MAX + 1] = {buf};
	char *w = buf + strlen(buf) + 1;
	for (const char *s = v; *s;) {
		while (*s == ' ')
			s++;
		if (!*s)
			break;
		if (argc == EAL_ARGS_MAX) {
			free(buf);
			return GW_ERRF(GW_EINVAL, "%s: more than %d arguments", name,
				       EAL_ARGS_MAX - 1);
		}
		argv[argc++] = w;
		while (*s && *s != ' ')
			*w++ = *s++;
		*w++ = '\0';
	}
	free(e->buf);
	e->buf = buf;
	memcpy(e->argv, argv, sizeof(argv));
	e->argc = argc;
	return GW_OK;
}

static int set_local(gw_member *m, const char *v)
{
	char buf[64];
	snprintf(buf, sizeof(buf), strchr(v, ':') ? "%s" : "%s:0", v);
	gw_endpoint ep;
	if (strlen(v) > 48 || gw_endpoint_parse(buf, &ep) < 0)
		return GW_ERRF(GW_EINVAL, "local: '%s' is not IP or IP:PORT", v);
	m->local = ep;
	return GW_OK;
}

static int set_key(gw_member *m, const char *name, const char *v)
{
	if (!strcmp(name, "key-file")) {
		int rc = gw_coll_key_load(v, m->key);
		if (rc < 0)
			return GW_ERRF(rc, "key-file: %s", gw_error_detail());
	} else if (coll_key_parse(v, strlen(v), m->key) < 0) {
		return GW_ERRF(GW_EINVAL, "key: not 64 hex digits");
	}
	m->keyed = 1;
	return GW_OK;
}

static int set_string(char **dst, const char *v)
{
	char *s = strdup(v);
	if (!s)
		return GW_ERRF(GW_ENOMEM, "out of memory");
	free(*dst);
	*dst = s;
	return GW_OK;
}

/* "N,N,...": the tensors' sizes, each at least 1 ("" : one tensor). */
static int set_layout(gw_member *m, const char *v)
{
	uint32_t n = *v ? 1 : 0;
	for (const char *p = v; *p; p++)
		n += *p == ',';
	if (n > GW_COLL_TENSORS_MAX)
		return GW_ERRF(GW_EINVAL, "layout: %u tensors, at most %u", n, GW_COLL_TENSORS_MAX);
	uint64_t *t = n ? malloc(n * sizeof(*t)) : NULL;
	if (n && !t)
		return GW_ERR(GW_ENOMEM);
	const char *p = v;
	for (uint32_t i = 0; i < n; i++) {
		char *end;
		errno = 0;
		unsigned long long x = isdigit((unsigned char)*p) ? strtoull(p, &end, 10) : 0;
		if (!x || errno || (*end != ',' && *end)) {
			free(t);
			return GW_ERRF(GW_EINVAL, "layout: tensor %u: '%.*s' is not a whole number "
				       "of elements above 0", i, (int)strcspn(p, ","), p);
		}
		t[i] = x;
		p = end + (*end == ',');
	}
	free((void *)m->ep.dense.tensor_elems);
	m->ep.dense.tensor_elems = t;
	m->ep.dense.ntensors = n;
	return GW_OK;
}

int gw_member_set(gw_member *m, const char *name, const char *v)
{
	gw__detail_clear();
	if (!m || !name || !v)
		return GW_ERRF(GW_EINVAL, "%s: missing", !m ? "member" : !name ? "name" : "value");
	/* gpu and layout may wait for connect: a framework knows where its
	 * tensors live, and their sizes, only once it has them. */
	if (m->comm || (m->dp && strcmp(name, "gpu") && strcmp(name, "layout")))
		return GW_ERRF(GW_ESTATE, "%s: options are fixed once the member is %s",
			       name, m->comm ? "connected" : "open");
	const struct coll_opt *o = coll_opt_find(name, COLL_OPT_MEMBER);
	if (!o) {
		char names[512];
		coll_opt_names(COLL_OPT_MEMBER, names, sizeof(names));
		return GW_ERRF(GW_EINVAL, "%s: not an option (%s)", name, names);
	}
	if (o->kind != COLL_OPT_OWN)   /* checked and stored as the table says */
		return coll_opt_set(o, v, &m->o);
	if (!strcmp(name, "up"))   /* which engine runs it: the library's choice */
		return set_codec(name, coll_opts_up_spec(v), &m->up, &m->up_params);
	if (!strcmp(name, "down"))
		return set_codec(name, v, &m->down, &m->down_params);
	if (!strcmp(name, "shards")) {
		if (!strcmp(v, "colocated")) {
			free(m->ext);
			m->ext = NULL;
			m->next = 0;
			return GW_OK;
		}
		return set_endpoints(m, v);
	}
	if (!strcmp(name, "backend")) {
		/* Any backend built into this library: udp, dpdk, rdma. */
		int rc = coll_opt_backend(v);
		if (rc == GW_OK)
			snprintf(m->backend, sizeof(m->backend), "%s", v);
		return rc;
	}
	if (!strcmp(name, "gpu")) {
		if (strcmp(v, "none") && gw_gpu_name_valid(v) < 0)
			return GW_ERRF(GW_EINVAL, "gpu: '%s' is not none, cuda or emu (with :N "
				       "for device N)", v);
		snprintf(m->gpu, sizeof(m->gpu), "%s", strcmp(v, "none") ? v : "");
		return GW_OK;
	}
	if (!strcmp(name, "local"))
		return set_local(m, v);
	if (!strcmp(name, "opts"))
		return set_string(&m->opts, v);
	if (!strcmp(name, "eal") || !strcmp(name, "shard-eal"))
		return set_eal(!strcmp(name, "eal") ? &m->eal : &m->shard_eal, name, v);
	if (!strcmp(name, "key") || !strcmp(name, "key-file"))
		return set_key(m, name, v);
	if (!strcmp(name, "layout"))
		return set_layout(m, v);
	/* An OWN entry of the table's that this file does not know yet. */
	return GW_ERRF(GW_EINVAL, "%s: not handled by gw_member_set", name);
}

/* Co-located shards: as many as the uplink's engine needs, on the first
 * ranks. */
static uint32_t colocated(const gw_member *m)
{
	return coll_engine_for(m->up)->colocated_shards(m->workers);
}

static int open_dp(gw_member *m, const char *who, uint16_t port, struct eal *e, gw_dp **out)
{
	gw_dp_config cfg = {.backend = m->backend, .local = m->local, .opts = m->opts,
			    .argc = e->argc, .argv = e->argc ? e->argv : NULL};
	cfg.local.port = port;
	int rc = coll_opts_dp_open(&m->o, &cfg, out);   /* gso, wait */
	if (rc < 0)
		return GW_ERRF(rc, "%s dataplane: %s", who, gw_error_detail());
	return GW_OK;
}

int gw_member_open(gw_member *m, uint32_t rank, uint32_t workers)
{
	gw__detail_clear();
	if (!m)
		return GW_ERRF(GW_EINVAL, "member: missing");
	if (m->dp)
		return GW_ERRF(GW_ESTATE, "member: already open");
	if (!workers || workers > GW_COLL_WORKERS_MAX)
		return GW_ERRF(GW_EINVAL, "workers: %u, must be 1 .. %u", workers,
			       GW_COLL_WORKERS_MAX);
	if (rank >= workers)
		return GW_ERRF(GW_EINVAL, "rank: %u, but the job has %u workers", rank, workers);
	if (!m->ext && workers > GW_COLL_SHARDS_MAX)
		return GW_ERRF(GW_EINVAL, "shards: colocated, but %u workers are more than "
			       "%u shards", workers, GW_COLL_SHARDS_MAX);
	int rc = coll_opts_dp_check(&m->o, m->backend);   /* gso: udp's */
	if (rc < 0)
		return rc;
	m->rank = rank;
	m->workers = workers;
	/* local's port is the shard's when co-located, else the worker's. */
	rc = open_dp(m, "worker", m->ext ? m->local.port : 0, &m->eal, &m->dp);
	if (rc == GW_OK && !m->ext && rank < colocated(m))
		rc = open_dp(m, "shard", m->local.port, m->shard_eal.argc ? &m->shard_eal
			     : &m->eal, &m->sdp);
	if (rc < 0) {
		char why[256];
		snprintf(why, sizeof(why), "%s", gw_error_detail());
		gw_dp_close(m->dp);
		m->dp = NULL;
		gw__detail(rc, "%s", why);
	}
	return rc;
}

enum need { NEED_OPEN, NEED_CONNECTED };

/* How the calls after open begin: the member and the call's argument
 * (named arg_name) given, and the member as far along as the call needs. */
static int member_call(const gw_member *m, const void *arg, const char *arg_name,
		       enum need need)
{
	gw__detail_clear();
	if (!m || !arg)
		return GW_ERRF(GW_EINVAL, "%s: missing", !m ? "member" : arg_name);
	if (need == NEED_OPEN ? !m->dp : !m->comm)
		return GW_ERRF(GW_ESTATE, "member: not %s", need == NEED_OPEN ? "open"
			       : "connected");
	return GW_OK;
}

int gw_member_endpoint(const gw_member *m, char *buf, size_t len)
{
	int rc = member_call(m, buf, "buf", NEED_OPEN);
	if (rc < 0)
		return rc;
	gw_endpoint ep;
	rc = gw_dp_local(m->sdp ? m->sdp : m->dp, &ep);
	if (rc == GW_OK)
		rc = gw_endpoint_format(&ep, buf, len);
	return rc < 0 ? GW_ERRF(rc, "endpoint: does not fit %zu bytes", len) : GW_OK;
}

static gw_coll_job member_job(gw_member *m, uint64_t dim, uint32_t shards)
{
	gw_coll_job job = {
		.dim = dim, .workers = (uint16_t)m->workers, .shards = (uint16_t)shards,
		.up_codec = m->up, .down_codec = m->down, .up_params = m->up_params,
		.down_params = m->down_params, .key = m->keyed ? m->key : NULL,
	};
	coll_opts_job(&m->o, &m->ep, &job);
	return job;
}

/* Co-located: this process's shard, on its own thread. */
static int start_shard(gw_member *m, const gw_coll_job *job)
{
	if (!m->sdp)
		return GW_OK;
	gw_agg_config acfg = {.job = *job, .shard = (uint16_t)m->rank};
	if ((m->agg = gw_agg_create(&m->sdp, 1, &acfg)) &&
	    coll_opts_liveness(&m->o, NULL, m->agg) < 0)
		return GW_EINVAL;   /* the detail names liveness-ms or startup-ms */
	if (!m->agg)
		return gw__detail(GW_EINVAL, "co-located shard: %s", gw_error_detail());
	if (!(m->thr = gw_agg_spawn(m->agg))) {
		gw_agg_free(m->agg);
		m->agg = NULL;
		return gw__detail(GW_EIO, "co-located shard: %s", gw_error_detail());
	}
	return GW_OK;
}

int gw_member_connect(gw_member *m, uint64_t dim, const char *shards)
{
	gw__detail_clear();
	if (!m)
		return GW_ERRF(GW_EINVAL, "member: missing");
	if (!m->dp || m->comm)
		return GW_ERRF(GW_ESTATE, "member: %s", !m->dp ? "not open" : "already connected");
	gw_endpoint *eps = m->ext;
	uint32_t n = m->next;
	if (!m->ext) {
		if (!shards)
			return GW_ERRF(GW_EINVAL, "shards: the co-located shards' endpoints "
				       "are missing");
		int rc = parse_endpoints(shards, &eps, &n);
		if (rc < 0)
			return rc;
		if (n != m->workers) {
			free(eps);
			return GW_ERRF(GW_EINVAL, "shards: %u endpoints for %u workers' "
				       "co-located shards", n, m->workers);
		}
		n = colocated(m);   /* the first ones host shards */
	}
	gw_coll_job job = member_job(m, dim, n);
	int rc = GW_OK;
	if (!job.chunk_elems) {
		/* What one packet holds, as the CLIs pick it: every process of
		 * the job must agree, so a co-located shard's payload counts. */
		uint32_t pm = gw_dp_payload_max(m->dp);
		if (m->sdp)
			pm = GW_MIN(pm, gw_dp_payload_max(m->sdp));
		rc = gw_coll_chunk_elems(&job, pm);
		if (rc > 0)
			job.chunk_elems = (uint32_t)rc;
	}
	if (rc >= 0 && !m->ext)
		rc = start_shard(m, &job);
	if (rc >= 0) {
		rc = GW_OK;
		gw_comm_config cfg = {.job = job, .rank = (uint16_t)m->rank, .shards = eps,
				      .rto_us = (uint32_t)m->o.rto_us,
				      .timeout_ms = (uint32_t)m->o.timeout_ms};
		if (!(m->comm = gw_comm_create(m->dp, &cfg)))
			rc = gw__detail(GW_EINVAL, "%s", gw_error_detail());
		else
			rc = coll_opts_liveness(&m->o, m->comm, NULL);
	}
	if (rc == GW_OK && m->gpu[0]) {
		/* Both leave a detail that starts "gpu: ". */
		if (!(m->g = gw_gpu_open(m->gpu)))
			rc = GW_EUNSUPPORTED;
		else
			rc = gw_comm_set_gpu(m->comm, m->g);
		if (rc < 0) {
			gw_comm_free(m->comm);
			m->comm = NULL;
			gw_gpu_close(m->g);
			m->g = NULL;
		}
	}
	if (eps != m->ext)
		free(eps);
	if (rc == GW_OK)
		m->dim = dim;
	return rc;
}

/* A timeout with a co-located shard: its own view names the workers that
 * sent it nothing since the call began, the likely dead peers (every
 * worker sends every shard its chunks each round). */
static int silent_peers(const gw_member *m, uint64_t t0)
{
	char why[512], list[160] = "";
	snprintf(why, sizeof(why), "%s", gw_error_detail());
	size_t n = 0;
	uint32_t silent = 0;
	for (uint32_t w = 0; w < m->workers; w++) {
		if (w == m->rank || coll_agg_heard(m->agg, w) >= t0)
			continue;
		if (silent++ < 8 && n < sizeof(list))
			n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%u",
					      silent > 1 ? ", " : "", w);
	}
	if (!silent)
		return gw__detail(GW_ETIMEDOUT, "%s", why);
	return gw__detail(GW_ETIMEDOUT, "%s; rank%s %s%s sent nothing to rank %u's shard "
			  "this round (dead or stalled)", why, silent > 1 ? "s" : "", list,
			  silent > 8 ? ", ..." : "", m->rank);
}

/* A member's call may start: connected, its shard (if it hosts one) up. */
static int call_ok(gw_member *m, const void *arg, const char *arg_name)
{
	int st = member_call(m, arg, arg_name, NEED_CONNECTED);
	if (st < 0)
		return st;
	st = m->thr ? gw_agg_thread_status(m->thr) : 1;
	if (st <= 0)   /* the shard this process hosts stopped: no use waiting */
		return st < 0 ? st : GW_ERRF(GW_ESTATE, "co-located shard: stopped");
	return GW_OK;
}

/* A round's end, as the member reports it: rc with its best cause, or 0
 * and info from ai (and up, a sparse result's; NULL: none). */
static int call_done(gw_member *m, int rc, uint64_t t0, const gw_allreduce_info *ai,
		     const gw_sparse_update *up, uint64_t *info)
{
	int st;
	if (rc < 0) {
		/* A co-located shard that died meanwhile is the better cause. */
		if (m->thr && (st = gw_agg_thread_status(m->thr)) < 0)
			return st;
		if (!gw_error_detail()[0])
			gw__detail(rc, "allreduce: %s", gw_strerror(rc));
		if (m->agg) {
			/* This process closes next, its shard with it: the BYE
			 * names the first cause to workers that hear it first. */
			char why[COLL_CTRL_TEXT];
			snprintf(why, sizeof(why), "its rank's call failed: %s", gw_error_detail());
			agg_live_bye_reason(m->agg, why);
		}
		if (rc == GW_ETIMEDOUT && m->agg)
			return silent_peers(m, t0);
		return rc;
	}
	if (m->agg)   /* a failure the job went on after is no cause */
		agg_live_bye_reason(m->agg, NULL);
	if (info) {
		uint64_t v[GW_MI_N] = {
			[GW_MI_ROUND] = ai->round, [GW_MI_CHUNKS] = ai->chunks,
			[GW_MI_SHORT] = ai->short_chunks, [GW_MI_LEFT_OUT] = ai->left_out,
			[GW_MI_BYTES_UP] = ai->bytes_up, [GW_MI_BYTES_DOWN] = ai->bytes_down,
			[GW_MI_BYTES_UP_ONCE] = ai->bytes_up_once,
			[GW_MI_BYTES_DOWN_ONCE] = ai->bytes_down_once,
			[GW_MI_NNZ] = up ? up->nnz : 0,
			[GW_MI_APPLIED] = up ? (uint64_t)up->applied : 0,
		};
		memcpy(info, v, sizeof(v));
	}
	return GW_OK;
}

int gw_member_allreduce(gw_member *m, float *grad, uint64_t *info)
{
	int rc = call_ok(m, grad, "grad");
	if (rc < 0)
		return rc;
	gw_allreduce_info ai;
	gw_result res = {0};
	uint64_t t0 = gw_now_ns();
	rc = gw_allreduce_result(m->comm, grad, grad, &res, &ai);
	return call_done(m, rc, t0, &ai, &res.sparse, info);
}

int gw_member_allreduce_pipelined(gw_member *m, uint32_t tag, uint64_t *info)
{
	int rc = call_ok(m, m, "member");
	uint64_t t0 = gw_now_ns();
	gw_allreduce_info ai;
	if (rc < 0)
		return rc;
	rc = call_done(m, gw_allreduce_pipelined(m->comm, tag, &ai), t0, &ai, NULL, info);
	if (rc < 0 && m->comm->pipe)   /* waiters learn the cause that names a peer */
		coll_pipe_failed(m->comm->pipe, tag, rc);
	return rc;
}

/* The calls other threads make while a pipelined round runs. */
static int pipe_member(gw_member *m)
{
	return member_call(m, m, "member", NEED_CONNECTED);
}

int gw_member_tensor_ready(gw_member *m, uint32_t tag, uint32_t tensor, void *data,
			   int dtype, float scale)
{
	int rc = pipe_member(m);
	return rc < 0 ? rc : gw_comm_tensor_ready(m->comm, tag, tensor, data, (gw_dtype)dtype,
						  scale);
}

int gw_member_tensor_wait(gw_member *m, uint32_t tag, uint32_t tensor, uint32_t timeout_ms)
{
	int rc = pipe_member(m);
	return rc < 0 ? rc : gw_comm_tensor_wait(m->comm, tag, tensor, timeout_ms);
}

int gw_member_round_cancel(gw_member *m, uint32_t tag, int rc)
{
	int r = pipe_member(m);
	return r < 0 ? r : gw_comm_round_cancel(m->comm, tag, rc);
}

/* Bindings name info[]'s counters from the library they loaded, so a
 * counter added to enum gw_member_info later moves no name of theirs: by
 * designated index, so the table cannot drift from the enum's order. */
const char *gw_member_info_name(int i)
{
	static const char *const names[GW_MI_N] = {
		[GW_MI_ROUND] = "round",
		[GW_MI_CHUNKS] = "chunks",
		[GW_MI_SHORT] = "short_chunks",
		[GW_MI_LEFT_OUT] = "left_out",
		[GW_MI_BYTES_UP] = "bytes_up",
		[GW_MI_BYTES_DOWN] = "bytes_down",
		[GW_MI_BYTES_UP_ONCE] = "bytes_up_once",
		[GW_MI_BYTES_DOWN_ONCE] = "bytes_down_once",
		[GW_MI_NNZ] = "nnz",
		[GW_MI_APPLIED] = "applied",
	};
	return i >= 0 && i < GW_MI_N ? names[i] : NULL;
}

int gw_member_residual(const gw_member *m, float *out, uint64_t n)
{
	int rc = member_call(m, out, "out", NEED_CONNECTED);
	if (rc < 0)
		return rc;
	if (n != m->dim)
		return GW_ERRF(GW_EINVAL, "out: %llu elements, but the job has %llu",
			       (unsigned long long)n, (unsigned long long)m->dim);
	if (m->g)
		return GW_ERRF(GW_EUNSUPPORTED, "residual: it lives in the device's memory");
	const float *e = gw_comm_residual(m->comm);
	if (e)
		memcpy(out, e, n * sizeof(*out));
	else
		memset(out, 0, n * sizeof(*out));
	return GW_OK;
}
