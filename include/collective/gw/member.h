/* gradwire for frameworks: one process of a job — its worker and, by
 * default, the shard it hosts — behind a flat call surface of strings and
 * integers, so that a foreign-function interface (Python's ctypes, the
 * PyTorch hook of python/gradwire) needs no struct layout of this
 * library, and every option is checked where it is given, with the
 * library's own message.
 *
 *   m = gw_member_new();
 *   gw_member_set(m, "up", "3lc");  ...           checked here
 *   gw_member_open(m, rank, workers);              sockets; endpoint known
 *   gw_member_endpoint(m, buf, len);               exchange out of band
 *   gw_member_connect(m, dim, "ip:port,ip:port");  the job starts
 *   gw_member_allreduce(m, grad, info);            each step
 *   gw_member_free(m);
 *
 * Options (gw_member_set; the collective CLIs' names without "--", with
 * the same bounds and messages: one table, collective/coll_opts.c):
 *   up, down        codec strings as the CLIs take them: "3lc",
 *                   "3lc:sparsity=1.9", "deepreduce:index=bloom,...";
 *                   up "countsketch" (or "sketched-sgd") runs Sketched-SGD
 *   mode            reliable | loss-tolerant
 *   shards          colocated (default: worker i hosts shard i) or the
 *                   external shards' endpoints, "IP:PORT,IP:PORT,..."
 *   backend         udp (default), dpdk or rdma: a backend built in
 *   local           IP[:PORT] to bind (default 127.0.0.1:0). PORT (0: any)
 *                   is the co-located shard's, the worker taking any; with
 *                   external shards it is the worker's
 *   eal, shard-eal  dpdk: EAL arguments of the worker's and the shard's
 *                   dataplane, separated by spaces
 *   opts            backend options (impair_loss=P, ..., port=N)
 *   wait            this process's idle waits (its worker's and its
 *                   co-located shard's loops): spin (default: poll about
 *                   20 us after recent traffic, then sleep) or sleep (at
 *                   once). sleep where more processes poll than there are
 *                   cores, e.g. 4 ranks and their 4 shards on 2 cores: a
 *                   spin there holds the core the awaited peer needs
 *                   (gw_dp_set_wait)
 *   gso             0 | 1: the udp backend's transmit segmentation, as opts
 *                   "gso=N" (which it overrides; default: 1 where the
 *                   kernel has it); refused at open for another backend
 *   job (default 1, as the CLIs), window, chunk-elems, deadline-us,
 *                   rto-us, timeout-ms, liveness-ms (a peer silent this
 *                   long, and longer than its history makes likely, is
 *                   suspected, and dead as long again later; default 1000,
 *                   0: off; see gw_comm_set_liveness), startup-ms (a peer
 *                   never heard is waited for this long; default 30000;
 *                   gw_comm_set_startup)
 *   key             64 hex digits: every packet is MACed; key-file: a file
 *   topk, candidates, sketch-momentum   Sketched-SGD's fields
 *   layout          the tensors' sizes, "N,N,...", summing to connect's
 *                   dim: a compression context per tensor, no chunk across
 *                   two (gw_dense_job); "" (default): one tensor. May be
 *                   set between open and connect, as gpu may
 *   min-elems       tensors of fewer elements go raw (default 0: none)
 *   down-momentum   mu in [0, 1): the shards keep momentum and send the
 *                   state change; the caller's optimizer then runs with
 *                   momentum 0 (default 0: the sum goes down)
 *   gpu             none (default), cuda or emu, either with :N for
 *                   device N: gw_member_allreduce's grad lives in that
 *                   executor's memory (<gw/gpudirect.h>): cuda, a device
 *                   pointer; emu, host memory through the device path.
 *                   Opened at connect, which fails naming why
 *                   (no device, a codec without kernels); with layout,
 *                   the options that may still be set between open and
 *                   connect
 *
 * Calls return 0 or GW_E* with a detail (gw_error_detail) that names the
 * option or the peer. A member is used by one thread at a time; the
 * co-located shard runs on its own. (GRADWIRE_0.3) */
#ifndef GW_MEMBER_H
#define GW_MEMBER_H

#include <gw/collective.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gw_member gw_member;

/* What gw_member_allreduce reports: info[GW_MI_*]. */
enum gw_member_info {
	GW_MI_ROUND = 0,
	GW_MI_CHUNKS,
	GW_MI_SHORT,          /* chunks finished without every worker */
	GW_MI_LEFT_OUT,       /* of them, without this worker */
	GW_MI_BYTES_UP,       /* UDP payload bytes sent, re-sends included */
	GW_MI_BYTES_DOWN,     /* and received */
	GW_MI_BYTES_UP_ONCE,  /* without re-sends and repeats */
	GW_MI_BYTES_DOWN_ONCE,
	GW_MI_NNZ,            /* Sketched-SGD: coordinates updated */
	GW_MI_APPLIED,        /* Sketched-SGD: this worker was in the sum */
	GW_MI_N
};

/* NULL only without memory. */
GW_API gw_member *gw_member_new(void);
GW_API void gw_member_free(gw_member *m);          /* accepts NULL */

/* Sets option name to value (text); GW_EINVAL with "name: why" for an
 * unknown option or a bad value, GW_ESTATE after gw_member_open. */
GW_API int gw_member_set(gw_member *m, const char *name, const char *value);

/* Opens this process's dataplanes as worker rank of workers (and, with
 * co-located shards, the shard's), so that its endpoint is known. */
GW_API int gw_member_open(gw_member *m, uint32_t rank, uint32_t workers);

/* The endpoint the others need from this process, as "IP:PORT[@MAC]": its
 * co-located shard's, or (external shards) its worker's. */
GW_API int gw_member_endpoint(const gw_member *m, char *buf, size_t len);

/* Starts the job over dim float32 elements. shards: co-located, every
 * worker's gw_member_endpoint in rank order, comma-separated; external:
 * NULL (the "shards" option holds them). Every member of the job must
 * give the same options and dim. */
GW_API int gw_member_connect(gw_member *m, uint64_t dim, const char *shards);

/* grad[0..dim) <- the sum over workers (dense engine), or Sketched-SGD's
 * k-sparse update, zero elsewhere. info: GW_MI_N counters, or NULL.
 * GW_ETIMEDOUT names the shard that did not answer; a co-located shard
 * that failed is reported as such. */
GW_API int gw_member_allreduce(gw_member *m, float *grad, uint64_t *info);

/* Pipelined rounds (gw_allreduce_pipelined of <gw/collective.h>): a dense
 * job with a layout and no gpu. tensor_ready hands tensor `tensor` of the
 * layout over for round tag (data in place, dtype a gw_dtype, results
 * written back times scale), allreduce_pipelined runs the round,
 * tensor_wait waits for one tensor's results, round_cancel fails a round
 * with the caller's GW_E*. Unlike the other calls, tensor_ready,
 * tensor_wait and round_cancel may be made from other threads while
 * allreduce_pipelined runs. (GRADWIRE_0.6) */
GW_API int gw_member_tensor_ready(gw_member *m, uint32_t tag, uint32_t tensor, void *data,
				  int dtype, float scale);
GW_API int gw_member_allreduce_pipelined(gw_member *m, uint32_t tag, uint64_t *info);
GW_API int gw_member_tensor_wait(gw_member *m, uint32_t tag, uint32_t tensor,
				 uint32_t timeout_ms);
GW_API int gw_member_round_cancel(gw_member *m, uint32_t tag, int rc);

/* The name of info[i] ("round", "chunks", "short_chunks", "left_out",
 * "bytes_up", ..., "applied": GW_MI_*'s, in order), or NULL for i outside
 * [0, GW_MI_N): a binding counts and names the counters of the library it
 * loaded instead of mirroring the enum. (GRADWIRE_0.6) */
GW_API const char *gw_member_info_name(int i);

/* out[0..n) <- this worker's error-feedback buffer (what its uplink codec
 * and left-out chunks have not delivered yet), by element of the job
 * (n: connect's dim); zeros for a job that keeps none. Between calls
 * only. GW_EUNSUPPORTED with a device executor. (GRADWIRE_0.6) */
GW_API int gw_member_residual(const gw_member *m, float *out, uint64_t n);

#ifdef __cplusplus
}
#endif
#endif /* GW_MEMBER_H */
