/* Error names and texts, the per-thread error detail, and the debug
 * error-site record. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <gw/common.h>

#include "gw_util.h"

#define GW_STR_(x) #x
#define GW_STR(x) GW_STR_(x)

static const struct {
	const char *name;
	const char *text;
} errtab[] = {
	[0] = {"GW_OK", "success"},
	[1] = {"GW_EINVAL", "invalid argument"},
	[2] = {"GW_ENOMEM", "out of memory"},
	[3] = {"GW_ETRUNC", "frame truncated"},
	[4] = {"GW_EMAGIC", "bad frame magic"},
	[5] = {"GW_EVERSION", "unsupported frame version"},
	[6] = {"GW_ERESERVED", "reserved bits set"},
	[7] = {"GW_ECHECKSUM", "frame checksum mismatch"},
	[8] = {"GW_ECODEC", "unknown codec"},
	[9] = {"GW_ELENGTH", "inconsistent lengths"},
	[10] = {"GW_ERANGE", "element or key out of range"},
	[11] = {"GW_EBUDGET", "budget too small for one element"},
	[12] = {"GW_EPARAM", "parameter not accepted by codec"},
	[13] = {"GW_EBOUNDS", "parameter value out of bounds"},
	[14] = {"GW_ECORRUPT", "corrupt payload"},
	[15] = {"GW_ESTATE", "call out of order"},
	[16] = {"GW_EUNSUPPORTED", "not supported by this codec or build"},
	[17] = {"GW_EIO", "device or socket I/O failed"},
	[18] = {"GW_ETIMEDOUT", "timed out"},
	[19] = {"GW_EPEER", "a peer died or left"},
	[20] = {"GW_ECONFIG", "processes of the job disagree on a setting"},
};

_Static_assert(GW_ARRAY_SIZE(errtab) == (unsigned)-GW_E_LAST,
	       "every GW_E* code needs a name and a text");

static int errindex(int err)
{
	if (err > 0 || err <= GW_E_LAST)
		return -1;
	return -err;
}

const char *gw_strerror(int err)
{
	int i = errindex(err);
	return i < 0 ? "unknown error" : errtab[i].text;
}

const char *gw_error_name(int err)
{
	int i = errindex(err);
	return i < 0 ? "GW_E?" : errtab[i].name;
}

/* The detail of the last failure of a call that gives one (gw_util.h). */
static _Thread_local char detail[256];

int gw__detailv(int err, const char *fmt, va_list ap)
{
	/* Through a copy: callers may wrap the current detail
	 * (gw__detail(rc, "shard: %s", gw_error_detail())). */
	char tmp[sizeof(detail)];
	vsnprintf(tmp, sizeof(tmp), fmt, ap);
	memcpy(detail, tmp, sizeof(detail));
	return err;
}

int gw__detail(int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	gw__detailv(err, fmt, ap);
	va_end(ap);
	return err;
}

void gw__detail_clear(void)
{
	detail[0] = '\0';
}

const char *gw_error_detail(void)
{
	return detail;
}

static _Thread_local const char *site_file;
static _Thread_local int site_line;

int gw__raise(int err, const char *file, int line)
{
	site_file = file;
	site_line = line;
	return err;
}

int gw_error_site(const char **file, int *line)
{
	if (!site_file)
		return 0;
	if (file)
		*file = site_file;
	if (line)
		*line = site_line;
	return 1;
}

const char *gw_version_string(void)
{
	return GW_STR(GW_VERSION_MAJOR) "." GW_STR(GW_VERSION_MINOR) "." GW_STR(
		GW_VERSION_PATCH);
}
