/* gpudirect's kernels on a GPU: encode and decode-accumulate throughput of
 * raw, bf16, int8, 3lc, top-k (1%) and hq (4 bits, rotated or not) on a tensor in device memory (the real cnn
 * traces tiled to --elems floats), against device-to-device cudaMemcpy of
 * the same bytes in the same run; frames into device memory or, with
 * --host-slots, into pinned host memory mapped for the device (what a
 * NIC's packet buffers are). That the device's frames are codec/'s, byte
 * for byte, is tests/gpu/test_gpu_device's to check; this program times.
 * One JSON object on stdout.
 *
 *   gpu_bench --traces DIR [--elems N] [--budget B] [--reps R] [--host-slots]
 *
 * Exits 77 without a CUDA device. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "emu.h"
#include "gw_cuda.h"

#define CU(x)                                                                       \
	do {                                                                        \
		cudaError_t e_ = (x);                                               \
		if (e_ != cudaSuccess) {                                            \
			fprintf(stderr, "gpu_bench: %s: %s\n", #x,                  \
				cudaGetErrorString(e_));                            \
			exit(1);                                                    \
		}                                                                   \
	} while (0)

static const char *const traces[] = {"conv1.weight", "conv1.bias", "conv2.weight",
				     "conv2.bias", "fc.weight", "fc.bias"};

/* The cnn traces of iteration 100, concatenated, tiled to n floats. */
static float *load(const char *dir, uint64_t n)
{
	float *v = malloc(n * sizeof(float)), *one = malloc(32768 * sizeof(float));
	size_t have = 0;
	if (!v || !one)
		return NULL;
	for (size_t t = 0; t < sizeof(traces) / sizeof(traces[0]); t++) {
		char p[4096];
		snprintf(p, sizeof(p), "%s/cnn/it100_%s.f32", dir, traces[t]);
		FILE *f = fopen(p, "rb");
		if (!f) {
			fprintf(stderr, "gpu_bench: --traces: cannot read %s: %s\n", p,
				strerror(errno));
			exit(2);
		}
		size_t k = fread(one + have, sizeof(float), 32768 - have, f);
		fclose(f);
		have += k;
	}
	for (uint64_t i = 0; i < n; i++)
		v[i] = one[i % have];
	free(one);
	return v;
}

struct timer {
	cudaEvent_t a, b;
};

static double ms_of(struct timer *t)
{
	float ms = 0;
	CU(cudaEventSynchronize(t->b));
	CU(cudaEventElapsedTime(&ms, t->a, t->b));
	return ms;
}

/* GB/s of reps decode-accumulates of dd's frames (bytes: the tensor they
 * cover), timed on the device. */
static double time_decode(cudaError_t (*dec)(const struct gw_kf_dec *, cudaStream_t),
			  const struct gw_kf_dec *dd, struct timer *t, unsigned reps, size_t bytes)
{
	CU(cudaEventRecord(t->a, 0));
	for (unsigned r = 0; r < reps; r++)
		dec(dd, 0);
	CU(cudaEventRecord(t->b, 0));
	double gbs = (double)bytes * reps / (ms_of(t) * 1e6);
	CU(cudaGetLastError());
	return gbs;
}

int main(int argc, char **argv)
{
	const char *dir = NULL;
	uint64_t n = 16u << 20;
	unsigned budget = 8924, reps = 20;
	int host_slots = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--traces") && i + 1 < argc)
			dir = argv[++i];
		else if (!strcmp(argv[i], "--elems") && i + 1 < argc)
			n = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--budget") && i + 1 < argc)
			budget = (unsigned)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = (unsigned)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--host-slots"))
			host_slots = 1;
		else {
			fprintf(stderr, "gpu_bench: '%s' not understood (--traces DIR, --elems N, "
				"--budget B, --reps R, --host-slots)\n", argv[i]);
			return 2;
		}
	}
	if (!dir || n < 1000 || n > (1ull << 31) || budget < 100 || budget > 65535 || !reps) {
		fprintf(stderr, "gpu_bench: need --traces DIR; --elems in [1000, 2^31], "
			"--budget in [100, 65535], --reps >= 1\n");
		return 2;
	}
	int ndev = 0;
	if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1) {
		printf("{\"tool\":\"gpu_bench\",\"skipped\":\"no CUDA device\"}\n");
		return 77;
	}
	struct cudaDeviceProp prop;
	CU(cudaGetDeviceProperties(&prop, 0));
	float *h = load(dir, n);
	if (!h) {
		fprintf(stderr, "gpu_bench: out of memory\n");
		return 1;
	}
	size_t bytes = n * sizeof(float);
	float *dg, *de, *dcopy;
	CU(cudaMalloc((void **)&dg, bytes));
	CU(cudaMalloc((void **)&de, bytes));
	CU(cudaMalloc((void **)&dcopy, bytes));
	CU(cudaMemcpy(dg, h, bytes, cudaMemcpyHostToDevice));
	CU(cudaMemset(de, 0, bytes));
	struct timer t;
	CU(cudaEventCreate(&t.a));
	CU(cudaEventCreate(&t.b));

	/* memcpy, device to device, the same bytes */
	CU(cudaMemcpy(dcopy, dg, bytes, cudaMemcpyDeviceToDevice));
	CU(cudaEventRecord(t.a, 0));
	for (unsigned r = 0; r < reps; r++)
		CU(cudaMemcpyAsync(dcopy, dg, bytes, cudaMemcpyDeviceToDevice, 0));
	CU(cudaEventRecord(t.b, 0));
	double memcpy_gbs = (double)bytes * reps / (ms_of(&t) * 1e6);

	/* Slots: as many as raw needs (the most frames of any codec here). */
	uint32_t per_raw = gw_kd_per_frame(GW_WIRE_CODEC_RAW, budget, 0);
	uint32_t nslots = (uint32_t)((n + per_raw - 1) / per_raw);
	uint8_t *mem, *dmem, **hptr = malloc(nslots * sizeof(*hptr)), **dptr;
	uint32_t *dlens;
	if (!hptr)
		return 1;
	if (host_slots) {
		CU(cudaHostAlloc((void **)&mem, (size_t)nslots * budget, cudaHostAllocMapped));
		CU(cudaHostGetDevicePointer((void **)&dmem, mem, 0));
	} else {
		CU(cudaMalloc((void **)&dmem, (size_t)nslots * budget));
	}
	for (uint32_t i = 0; i < nslots; i++)
		hptr[i] = dmem + (size_t)i * budget;
	CU(cudaMalloc((void **)&dptr, nslots * sizeof(*dptr)));
	CU(cudaMemcpy(dptr, hptr, nslots * sizeof(*dptr), cudaMemcpyHostToDevice));
	CU(cudaMalloc((void **)&dlens, nslots * sizeof(uint32_t)));
	uint64_t nb = (n + 4) / 5;
	struct gw_kt_enc tj = {.g = dg, .e = de, .dim = n, .tensor = 1, .sparsity = 1.0,
			       .room = budget - 40, .nb = nb, .slots = dptr, .lens = dlens,
			       .max_frames = nslots};
	CU(cudaMalloc((void **)&tj.bytes, nb));
	CU(cudaMalloc((void **)&tj.runs, nb * 4));
	CU(cudaMalloc((void **)&tj.tok, nb * 4));
	CU(cudaMalloc((void **)&tj.tok_byte, nb * 4));
	CU(cudaMalloc((void **)&tj.tiles, gw_ks_tiles(nb) * 4 + 4));
	CU(cudaMalloc((void **)&tj.mx, 4));
	CU(cudaMalloc((void **)&tj.ntok, 4));
	CU(cudaMalloc((void **)&tj.err, 4));

	printf("{\"tool\":\"gpu_bench\",\"device\":\"%s\",\"elems\":%llu,\"budget\":%u,"
	       "\"reps\":%u,\"slots\":\"%s\",\"memcpy_d2d_gbs\":%.2f,\"codecs\":{",
	       prop.name, (unsigned long long)n, budget, reps,
	       host_slots ? "pinned host, mapped" : "device", memcpy_gbs);
	static const int ids[] = {GW_WIRE_CODEC_RAW, GW_WIRE_CODEC_BF16, GW_WIRE_CODEC_INT8,
				  GW_WIRE_CODEC_3LC};
	static const char *const names[] = {"raw", "bf16", "int8", "3lc"};
	for (int c = 0; c < 4; c++) {
		struct gw_kd_enc dj = {.codec = ids[c], .g = dg, .e = de, .dim = n, .tensor = 1,
				       .per_frame = gw_kd_per_frame(ids[c], budget, 0),
				       .slots = dptr, .lens = dlens};
		if (c < 3)
			dj.frames = gw_kd_frame_count(&dj);
		/* warm-up (and, for 3lc, the frame count) */
		if (c < 3)
			CU(gw_cuda_encode_dense(&dj, 0) ? cudaErrorUnknown : cudaSuccess);
		else
			CU(gw_cuda_encode_3lc(&tj, 0) ? cudaErrorUnknown : cudaSuccess);
		CU(cudaDeviceSynchronize());
		uint32_t frames = dj.frames;
		if (c == 3) {
			uint32_t ntok = 0;
			CU(cudaMemcpy(&ntok, tj.ntok, 4, cudaMemcpyDeviceToHost));
			frames = (ntok + tj.room - 1) / tj.room;
		}
		CU(cudaEventRecord(t.a, 0));
		for (unsigned r = 0; r < reps; r++) {
			if (c < 3)
				gw_cuda_encode_dense(&dj, 0);
			else
				gw_cuda_encode_3lc(&tj, 0);
		}
		CU(cudaEventRecord(t.b, 0));
		double enc_gbs = (double)bytes * reps / (ms_of(&t) * 1e6);
		/* decode-accumulate the frames just written, into dcopy */
		int32_t *drcs;
		CU(cudaMalloc((void **)&drcs, frames * sizeof(int32_t)));
		struct gw_kf_dec dd = {(const uint8_t *const *)dptr, dlens, frames, dcopy, n, drcs};
		double dec_gbs = time_decode(c < 3 ? gw_cuda_decode_dense : gw_cuda_decode_3lc, &dd,
					     &t, reps, bytes);
		int32_t rc0 = 0;
		CU(cudaMemcpy(&rc0, drcs, sizeof(rc0), cudaMemcpyDeviceToHost));
		cudaFree(drcs);
		printf("%s\"%s\":{\"frames\":%u,\"encode_gbs\":%.2f,\"decode_gbs\":%.2f,"
		       "\"encode_x_memcpy\":%.3f,\"decode_x_memcpy\":%.3f,\"first_frame_rc\":%d}",
		       c ? "," : "", names[c], frames, enc_gbs, dec_gbs, enc_gbs / memcpy_gbs,
		       dec_gbs / memcpy_gbs, rc0);
	}
	/* top-k at 1 %, error feedback on */
	{
		uint32_t k = (uint32_t)((n + 99) / 100), cap = budget - 36;
		uint32_t per = (cap - 4) / 9 + 1, maxf = (k + per - 1) / per;
		struct gw_kk_enc kj = {.g = dg, .e = de, .dim = n, .tensor = 1, .k = k, .cap = cap,
				       .slots = dptr, .lens = dlens, .max_frames = maxf};
		CU(cudaMalloc((void **)&kj.rank, bytes));
		CU(cudaMalloc((void **)&kj.ties, bytes));
		CU(cudaMalloc((void **)&kj.pos, bytes));
		CU(cudaMalloc((void **)&kj.sel, (size_t)k * 4));
		CU(cudaMalloc((void **)&kj.val, (size_t)k * 4));
		CU(cudaMalloc((void **)&kj.cost, ((size_t)k + 1) * 4));
		CU(cudaMalloc((void **)&kj.tiles, gw_ks_tiles(n + 1) * 4 + 4));
		CU(cudaMalloc((void **)&kj.hist, 256 * 4));
		CU(cudaMalloc((void **)&kj.st, GW_KK_ST * 4));
		CU(cudaMalloc((void **)&kj.first, (size_t)maxf * 4));
		CU(cudaMalloc((void **)&kj.count, (size_t)maxf * 4));
		CU(cudaMalloc((void **)&kj.nframes, 4));
		CU(gw_cuda_encode_topk(&kj, 0) ? cudaErrorUnknown : cudaSuccess);
		CU(cudaDeviceSynchronize());
		uint32_t nf = 0;
		CU(cudaMemcpy(&nf, kj.nframes, 4, cudaMemcpyDeviceToHost));
		CU(cudaEventRecord(t.a, 0));
		for (unsigned r = 0; r < reps; r++)
			gw_cuda_encode_topk(&kj, 0);
		CU(cudaEventRecord(t.b, 0));
		double enc_gbs = (double)bytes * reps / (ms_of(&t) * 1e6);
		int32_t *drcs;
		CU(cudaMalloc((void **)&drcs, (size_t)nf * sizeof(int32_t)));
		struct gw_kf_dec dd = {(const uint8_t *const *)dptr, dlens, nf, dcopy, n, drcs};
		double dec_gbs = time_decode(gw_cuda_decode_topk, &dd, &t, reps, bytes);
		printf(",\"topk\":{\"k\":%u,\"frames\":%u,\"encode_gbs\":%.2f,\"decode_gbs\":%.2f,"
		       "\"encode_x_memcpy\":%.3f,\"decode_x_memcpy\":%.3f}", k, nf, enc_gbs, dec_gbs,
		       enc_gbs / memcpy_gbs, dec_gbs / memcpy_gbs);
	}
	/* hq, 4 bits, error feedback on, every chunk on a shared scale (as
	 * the allreduce runs it): rotated, and unrotated */
	for (int rot = 1; rot >= 0; rot--) {
		uint32_t per = gw_kh_per_frame(4, budget, 0);
		uint32_t nf = (uint32_t)((n + per - 1) / per);
		float *sc = malloc(nf * sizeof(float));
		uint32_t *sd = malloc(nf * sizeof(uint32_t));
		if (!sc || !sd)
			return 1;
		for (uint32_t f = 0; f < nf; f++) {
			sc[f] = 0.05f;
			sd[f] = f * 2654435761u;
		}
		struct gw_kh_enc hj = {.g = dg, .e = de, .dim = n, .tensor = 1, .per_frame = per,
				       .frames = nf, .slots = dptr, .lens = dlens, .bits = 4,
				       .rotate = (uint32_t)rot};
		CU(cudaMalloc((void **)&hj.scales, nf * sizeof(float)));
		CU(cudaMalloc((void **)&hj.seeds, nf * sizeof(uint32_t)));
		CU(cudaMemcpy((void *)hj.scales, sc, nf * sizeof(float), cudaMemcpyHostToDevice));
		CU(cudaMemcpy((void *)hj.seeds, sd, nf * sizeof(uint32_t), cudaMemcpyHostToDevice));
		CU(cudaMalloc((void **)&hj.y, bytes));
		CU(cudaMalloc((void **)&hj.q, n));
		CU(gw_cuda_encode_hq(&hj, 0) ? cudaErrorUnknown : cudaSuccess);
		CU(cudaDeviceSynchronize());
		CU(cudaEventRecord(t.a, 0));
		for (unsigned r = 0; r < reps; r++)
			gw_cuda_encode_hq(&hj, 0);
		CU(cudaEventRecord(t.b, 0));
		double enc_gbs = (double)bytes * reps / (ms_of(&t) * 1e6);
		int32_t *drcs;
		CU(cudaMalloc((void **)&drcs, (size_t)nf * sizeof(int32_t)));
		struct gw_kf_dec dd = {(const uint8_t *const *)dptr, dlens, nf, dcopy, n, drcs};
		double dec_gbs = time_decode(gw_cuda_decode_hq, &dd, &t, reps, bytes);
		int32_t rc0 = 0;
		CU(cudaMemcpy(&rc0, drcs, sizeof(rc0), cudaMemcpyDeviceToHost));
		printf(",\"%s\":{\"frames\":%u,\"encode_gbs\":%.2f,\"decode_gbs\":%.2f,"
		       "\"encode_x_memcpy\":%.3f,\"decode_x_memcpy\":%.3f,\"first_frame_rc\":%d}",
		       rot ? "hq" : "hq_rotate0", nf, enc_gbs, dec_gbs, enc_gbs / memcpy_gbs,
		       dec_gbs / memcpy_gbs, rc0);
		cudaFree(drcs);
		cudaFree((void *)hj.scales);
		cudaFree((void *)hj.seeds);
		cudaFree(hj.y);
		cudaFree(hj.q);
		free(sc);
		free(sd);
	}
	printf("},\"note\":\"GB/s of float32 input (encode) and of the tensor the frames "
	       "cover (decode); frames byte-identical to codec/'s is test_gpu_device's check\"}\n");
	return 0;
}
