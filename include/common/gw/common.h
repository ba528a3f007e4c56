/* gradwire — errors and version, shared by every public header. */
#ifndef GW_COMMON_H
#define GW_COMMON_H

#ifdef __cplusplus
extern "C" {
#endif

/* Public entry points; everything else in the library is hidden. */
#if defined(__GNUC__)
#define GW_API __attribute__((visibility("default")))
#else
#define GW_API
#endif

#define GW_VERSION_MAJOR 0
#define GW_VERSION_MINOR 3
#define GW_VERSION_PATCH 0

/* Every gw_* call that can fail returns a negative GW_E* code; 0 or a
 * positive count means success. Codes are stable: they are part of the ABI. */
enum gw_error {
	GW_OK = 0,
	GW_EINVAL = -1,       /* invalid argument (NULL, bad size, unsorted keys) */
	GW_ENOMEM = -2,       /* allocation failed */
	GW_ETRUNC = -3,       /* frame shorter than its header or lengths claim */
	GW_EMAGIC = -4,       /* frame magic is not "GW" */
	GW_EVERSION = -5,     /* frame version not understood by this build */
	GW_ERESERVED = -6,    /* a reserved bit or field is not zero */
	GW_ECHECKSUM = -7,    /* frame checksum mismatch: corrupted in flight */
	GW_ECODEC = -8,       /* unknown codec id or name */
	GW_ELENGTH = -9,      /* lengths or counts inconsistent with each other */
	GW_ERANGE = -10,      /* element or key outside the output tensor */
	GW_EBUDGET = -11,     /* payload budget too small for one element */
	GW_EPARAM = -12,      /* parameter not accepted by this codec */
	GW_EBOUNDS = -13,     /* parameter value outside its bounds */
	GW_ECORRUPT = -14,    /* payload violates the codec's format */
	GW_ESTATE = -15,      /* call out of order (e.g. next before begin) */
	GW_EUNSUPPORTED = -16,/* codec cannot take this kind of tensor, or a
			       * backend/feature not built into this library */
	GW_EIO = -17,         /* device or socket failed */
	GW_ETIMEDOUT = -18,   /* a bounded wait ran out */
	GW_EPEER = -19,       /* a peer of the job died or left (the detail
			       * names it) */
	GW_ECONFIG = -20,     /* processes of one job were told different
			       * things (the detail names the setting) */
	GW_E_LAST = -21       /* not a code: one past the last */
};

/* Human-readable text for a GW_E* code (or "unknown error" for others). */
GW_API const char *gw_strerror(int err);

/* Symbolic name of a code, e.g. "GW_ECHECKSUM". */
GW_API const char *gw_error_name(int err);

static inline int gw_is_error(int ret) { return ret < 0; }

/* What the last failing call of this thread had to say beyond its code:
 * which argument, field or parameter it refused and why, e.g. "workers:
 * must be 1 .. 1024" or "parameter s: 2.5 is outside [1, 2)". Never NULL;
 * "" when there is nothing more to say. The calls that check what a caller
 * configures give details (codec strings and parameters, jobs, dataplanes,
 * streams, communicators and shards: their headers say so); each clears
 * the detail when it starts, and the other calls leave it alone, so read it
 * right after the call that failed. One convention for the whole API:
 * codes say what class of error, the detail says where. (GRADWIRE_0.2) */
GW_API const char *gw_error_detail(void);

/* In builds with GW_DEBUG, the file:line where the last error of this thread
 * was raised; returns 0 and leaves outputs untouched in other builds. */
GW_API int gw_error_site(const char **file, int *line);

/* "MAJOR.MINOR.PATCH" of the library actually linked. */
GW_API const char *gw_version_string(void);

#ifdef __cplusplus
}
#endif
#endif /* GW_COMMON_H */
