/* The plumbing every gradwire app needs and none should write again: the
 * command line split at "--", strict numbers whose refusal names the
 * option, monotonic clocks, JSON lines and child processes. An archive
 * of the apps (gw_app), not part of libgradwire: it needs only the C
 * library and POSIX, so bench/mpi_allreduce links it too. */
#ifndef GW_APP_H
#define GW_APP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* ---- the command line ---------------------------------------------------
 *
 * DPDK's convention: [EAL or backend options] -- [app options]. The part
 * before "--" goes to the dataplane (gw_dp_config's argc and argv; with
 * no "--" it is the program name alone); the part after it is the app's,
 * for getopt_long. With no "--" every argument is the app's. */
struct app_args {
	int argc;            /* the app's options: argv[0] is the program name */
	char **argv;
	int eal_argc;        /* argv[0] and the options before "--" */
	char **eal_argv;
	int first;           /* where the app's part starts in the argv given */
};

/* Splits argv at its first "--" (argv[i], i >= 1), which is replaced by
 * argv[0] so that the app's part starts with the program name too (and
 * getopt names the program, not "--", in its messages). */
void app_split_args(int argc, char **argv, struct app_args *a);

/* ---- messages and exit codes ---------------------------------------------
 *
 * Every message starts with the program's name ("gw-allreduce: --window:
 * ..."), and every app exits with one table of codes (docs/cli.md): */
#define APP_EXIT_OK 0        /* done */
#define APP_EXIT_FAIL 1      /* the run failed (the job, a check, I/O) */
#define APP_EXIT_USAGE 2     /* a bad command line: nothing was run */
#define APP_EXIT_MISSING 77  /* not built into this gradwire, or not on this machine */

/* getopt_long's refusal in the app's words, for a loop run with opterr = 0
 * where it returned '?': "PROG: unknown option '--x'", "PROG: --x: needs a
 * value" or "PROG: --x: takes no value", then "PROG: HELP --help lists the
 * options" (HELP: the command that has them, e.g. "gw-bench codec"; NULL:
 * PROG). shorts: the loop's optstring. */
void app_bad_option(const char *prog, const char *help, char **argv, const char *shorts);

/* The EAL options (before "--") are the dpdk backend's only: with another
 * backend (NULL: udp) they are refused, naming the first, as
 * "PROG: EAL option '-l' before '--': only --backend dpdk takes EAL
 * options". False then. */
bool app_eal_check(const char *prog, const struct app_args *a, const char *backend);

/* The exit code of a --backend NAME that is not built in: APP_EXIT_MISSING
 * for a backend gradwire has (udp, dpdk, rdma: built where its library
 * was found), APP_EXIT_USAGE for any other name. */
int app_backend_missing(const char *name);

/* ---- numbers ------------------------------------------------------------
 *
 * Strict: the whole string is the number, in the range. A whole number
 * is decimal digits (a leading 0 is not octal) or 0x and hexadecimal
 * digits, without sign or space; a number is what strtod reads, without
 * space first, not NaN. app_parse_* write why a string is refused ("not
 * a whole number in [1, 64]") into why; app_opt_* print "PROG: --OPT:
 * 'S' is <why>" on stderr (nothing if prog is NULL). Both return false
 * when refused and leave *out alone. */

/* Bounds of app_*_double left out of the range. */
#define APP_OPEN_LO 1u
#define APP_OPEN_HI 2u

bool app_parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out,
		   char *why, size_t whylen);
bool app_parse_double(const char *s, double lo, double hi, unsigned open, double *out,
		      char *why, size_t whylen);
/* opt: the long option's name, without "--". */
bool app_opt_u64(const char *prog, const char *opt, const char *s, uint64_t lo,
		 uint64_t hi, uint64_t *out);
bool app_opt_double(const char *prog, const char *opt, const char *s, double lo,
		    double hi, unsigned open, double *out);

/* ---- clocks -------------------------------------------------------------- */

uint64_t app_now_ns(void);   /* CLOCK_MONOTONIC */
double app_now_s(void);

/* ---- JSON lines ---------------------------------------------------------
 *
 * One object per line, written as it goes: begin, members, end. Strings
 * are escaped; a number that is not finite is written as null (JSON has
 * no NaN). Numbers keep the printf forms the apps always used: %.<p>f or
 * %.<p>g. */
#define APP_JSON_DEPTH 4

struct app_json {
	FILE *f;
	bool spaced;                   /* ", " and ": " (gw-bench's objects) */
	unsigned depth;
	bool more[APP_JSON_DEPTH];     /* a member is already out at depth */
};

/* "{". spaced: a space after every ',' and ':'. */
void app_json_begin(struct app_json *j, FILE *f, bool spaced);
/* "key":{ ... up to the matching app_json_end (APP_JSON_DEPTH - 1 deep
 * at most). */
void app_json_object(struct app_json *j, const char *key);
/* "}", and at the outermost level a newline. */
void app_json_end(struct app_json *j);
void app_json_str(struct app_json *j, const char *key, const char *s);   /* NULL: null */
void app_json_u64(struct app_json *j, const char *key, uint64_t v);
void app_json_f(struct app_json *j, const char *key, int prec, double v);   /* %.*f */
void app_json_g(struct app_json *j, const char *key, int prec, double v);   /* %.*g */
void app_json_bool(struct app_json *j, const char *key, bool v);
void app_json_null(struct app_json *j, const char *key);

/* Members as a table: an object's layout written as data, several to a
 * line, then app_json_members() writes them in order. */
enum app_json_kind { APP_JSON_STR, APP_JSON_U64, APP_JSON_FIX, APP_JSON_GEN, APP_JSON_BOOL };

struct app_json_member {
	const char *key;
	enum app_json_kind kind;
	int prec;                      /* APP_JSON_FIX, APP_JSON_GEN */
	const char *s;
	uint64_t u;
	double d;
};

#define APP_JS(k, x) {.key = (k), .kind = APP_JSON_STR, .s = (x)}
#define APP_JU(k, x) {.key = (k), .kind = APP_JSON_U64, .u = (x)}
#define APP_JF(k, p, x) {.key = (k), .kind = APP_JSON_FIX, .prec = (p), .d = (x)}   /* %.pf */
#define APP_JG(k, p, x) {.key = (k), .kind = APP_JSON_GEN, .prec = (p), .d = (x)}   /* %.pg */
#define APP_JB(k, x) {.key = (k), .kind = APP_JSON_BOOL, .u = (x)}
#define APP_JSON_N(m) (sizeof(m) / sizeof((m)[0]))

void app_json_members(struct app_json *j, const struct app_json_member *m, size_t n);

/* ---- child processes ---------------------------------------------------- */

/* Starts argv[0] (as a path, then searched in PATH if that finds nothing)
 * with argv. out_fd and err_fd (-1: inherited) become its stdout and
 * stderr; close_fd (-1: none) is closed in the child, as the read end of
 * a pipe whose write end is out_fd must be. 0 and *pid, or an errno. */
int app_spawn(pid_t *pid, char *const argv[], int out_fd, int err_fd, int close_fd);

/* Waits for pid (again when a signal interrupts) and returns its wait
 * status, or -1 with errno. */
int app_wait(pid_t pid);

/* The end of a child, from its wait status: "exit status 3", "signal 9". */
const char *app_status_text(int status, char *buf, size_t len);

#endif
