/* gw-launch: the job's processes. Each is started with posix_spawn (its
 * signal mask restored, SIGPIPE back to default); its output goes to its
 * log files, and a worker's also through a pipe that this process reads
 * and copies to the console, each line prefixed with the rank. One ppoll
 * waits for output, signals (a signalfd: SIGINT, SIGTERM, SIGCHLD) and
 * the next tick; every wake-up reaps with waitpid(-1, WNOHANG), so an exit
 * is seen at the latest a tick after it happened, whatever came first. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "launch.h"

extern char **environ;

static sigset_t orig_mask;
/* Ended processes not yet handed to the caller, oldest first. */
static struct proc *ended[sizeof(((struct sup *)0)->p) / sizeof(struct proc)];
static unsigned nended;

uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

int sup_init(struct sup *s, bool quiet, double timeout_s)
{
	memset(s, 0, sizeof(*s));
	s->quiet = quiet;
	s->deadline_ns = timeout_s > 0 ? now_ns() + (uint64_t)(timeout_s * 1e9) : 0;
	sigset_t m;
	sigemptyset(&m);
	sigaddset(&m, SIGINT);
	sigaddset(&m, SIGTERM);
	sigaddset(&m, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &m, &orig_mask) < 0)
		return -1;
	/* A console that went away is no reason to leave the job behind. */
	signal(SIGPIPE, SIG_IGN);
	s->sigfd = signalfd(-1, &m, SFD_CLOEXEC | SFD_NONBLOCK);
	return s->sigfd < 0 ? -1 : 0;
}

const char *proc_name(const struct proc *p, char *buf, size_t len)
{
	snprintf(buf, len, "%s %u", p->role == ROLE_WORKER ? "worker" : "shard", p->id);
	return buf;
}

const char *proc_how(int status, char *buf, size_t len)
{
	if (WIFSIGNALED(status)) {
		const char *n = sigabbrev_np(WTERMSIG(status));
		if (n)
			snprintf(buf, len, "killed by SIG%s", n);
		else
			snprintf(buf, len, "killed by signal %d", WTERMSIG(status));
	} else {
		snprintf(buf, len, "exit %d", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	}
	return buf;
}

bool proc_ok(int status)
{
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static int open_log(const char *path, bool append)
{
	return open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC), 0644);
}

static void write_all(int fd, const char *b, size_t n)
{
	while (n) {
		ssize_t w = write(fd, b, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;   /* a closed console: the logs still have it */
		b += w;
		n -= (size_t)w;
	}
}

/* Console lines of relay k of p: "[R] " and the line. */
static void emit(const struct proc *p, int k, const char *line, size_t n)
{
	char tag[16];
	int t = snprintf(tag, sizeof(tag), "[%u] ", p->id);
	write_all(k ? 2 : 1, tag, (size_t)t);
	write_all(k ? 2 : 1, line, n);
	write_all(k ? 2 : 1, "\n", 1);
}

/* Copies what relay k of p has: to its log as it comes, to the console a
 * line at a time. At EOF the relay closes (a last unended line goes out). */
static void relay(struct proc *p, int k)
{
	char buf[65536];
	ssize_t n = read(p->fd[k], buf, sizeof(buf));
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		if (p->partn[k])
			emit(p, k, p->part[k], p->partn[k]);
		p->partn[k] = 0;
		close(p->fd[k]);
		close(p->log[k]);
		p->fd[k] = p->log[k] = -1;
		return;
	}
	write_all(p->log[k], buf, (size_t)n);
	for (ssize_t i = 0; i < n; i++) {
		if (buf[i] == '\n' || p->partn[k] == sizeof(p->part[k])) {
			emit(p, k, p->part[k], p->partn[k]);
			p->partn[k] = 0;
			if (buf[i] == '\n')
				continue;
		}
		p->part[k][p->partn[k]++] = buf[i];
	}
}

struct proc *sup_spawn(struct sup *s, enum role role, unsigned id, const struct argv *a,
		       const char *out, const char *err, bool append)
{
	if (s->n == sizeof(s->p) / sizeof(s->p[0])) {
		fprintf(stderr, PROG ": too many processes started\n");
		return NULL;
	}
	struct proc *p = &s->p[s->n];
	*p = (struct proc){.role = role, .id = id, .fd = {-1, -1}, .log = {-1, -1}};
	bool tee = role == ROLE_WORKER && !s->quiet;
	int child[2] = {-1, -1};
	const char *path[2] = {out, err};
	for (int k = 0; k < 2; k++) {
		if (tee) {
			int pp[2];
			if (pipe2(pp, O_CLOEXEC) < 0)
				goto fail;
			p->fd[k] = pp[0];
			child[k] = pp[1];
			fcntl(pp[0], F_SETFL, O_NONBLOCK);
			p->log[k] = open_log(path[k], append);
		} else {
			child[k] = open_log(path[k], append);
		}
		if (child[k] < 0 || (tee && p->log[k] < 0)) {
			fprintf(stderr, PROG ": %s: %s\n", path[k], strerror(errno));
			goto fail;
		}
	}
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&at);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, child[0], 1);
	posix_spawn_file_actions_adddup2(&fa, child[1], 2);
	sigset_t def;
	sigemptyset(&def);
	sigaddset(&def, SIGPIPE);
	posix_spawnattr_setsigmask(&at, &orig_mask);
	posix_spawnattr_setsigdefault(&at, &def);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	int e = posix_spawnp(&p->pid, a->v[0], &fa, &at, a->v, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(child[0]);
	close(child[1]);
	if (e) {
		fprintf(stderr, PROG ": %s: %s\n", a->v[0], strerror(e));
		child[0] = child[1] = -1;
		goto fail;
	}
	p->live = true;
	s->n++;
	return p;
fail:
	for (int k = 0; k < 2; k++) {
		if (child[k] >= 0)
			close(child[k]);
		if (p->fd[k] >= 0)
			close(p->fd[k]);
		if (p->log[k] >= 0)
			close(p->log[k]);
	}
	return NULL;
}

/* Every child that ended, into ended[]. */
static void reap(struct sup *s)
{
	int st;
	pid_t pid;
	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		for (unsigned i = 0; i < s->n; i++) {
			if (s->p[i].pid == pid && s->p[i].live) {
				s->p[i].live = false;
				s->p[i].status = st;
				ended[nended++] = &s->p[i];
				break;
			}
		}
	}
}

static struct proc *take_ended(void)
{
	if (!nended)
		return NULL;
	struct proc *p = ended[0];
	memmove(ended, ended + 1, --nended * sizeof(ended[0]));
	return p;
}

/* One ppoll over the signalfd and the open relays, up to ms. */
static void poll_once(struct sup *s, unsigned ms, bool *sig)
{
	struct pollfd pfd[1 + 2 * (sizeof(s->p) / sizeof(s->p[0]))];
	struct proc *owner[sizeof(pfd) / sizeof(pfd[0])];
	int kind[sizeof(pfd) / sizeof(pfd[0])];
	nfds_t n = 0;
	pfd[n++] = (struct pollfd){.fd = s->sigfd, .events = POLLIN};
	for (unsigned i = 0; i < s->n; i++)
		for (int k = 0; k < 2; k++)
			if (s->p[i].fd[k] >= 0) {
				owner[n] = &s->p[i];
				kind[n] = k;
				pfd[n++] = (struct pollfd){.fd = s->p[i].fd[k], .events = POLLIN};
			}
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000};
	if (ppoll(pfd, n, &ts, NULL) <= 0)
		return;
	struct signalfd_siginfo si;
	while (read(s->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		if (sig && (si.ssi_signo == SIGINT || si.ssi_signo == SIGTERM))
			*sig = true;
	for (nfds_t i = 1; i < n; i++)
		if (pfd[i].revents)
			relay(owner[i], kind[i]);
}

struct proc *sup_wait(struct sup *s, unsigned ms, bool *sig, bool *late)
{
	*sig = *late = false;
	reap(s);
	struct proc *p = take_ended();
	if (p)
		return p;
	uint64_t now = now_ns();
	if (s->deadline_ns) {
		if (now >= s->deadline_ns) {
			*late = true;
			return NULL;
		}
		uint64_t left_ms = (s->deadline_ns - now) / 1000000u + 1;
		if (left_ms < ms)
			ms = (unsigned)left_ms;
	}
	poll_once(s, ms, sig);
	reap(s);
	return take_ended();
}

static unsigned live_count(const struct sup *s)
{
	unsigned n = 0;
	for (unsigned i = 0; i < s->n; i++)
		n += s->p[i].live;
	return n;
}

void sup_stop_all(struct sup *s, int sig, unsigned grace_ms)
{
	char name[32];
	for (unsigned i = 0; i < s->n; i++)
		if (s->p[i].live)
			kill(s->p[i].pid, sig);
	uint64_t end = now_ns() + 1000000ull * grace_ms;
	while (live_count(s) && now_ns() < end) {
		poll_once(s, 100, NULL);
		reap(s);
	}
	for (unsigned i = 0; i < s->n; i++) {
		if (!s->p[i].live)
			continue;
		fprintf(stderr, PROG ": %s ignored SIG%s for %u s: killed\n",
			proc_name(&s->p[i], name, sizeof(name)), sigabbrev_np(sig), grace_ms / 1000);
		kill(s->p[i].pid, SIGKILL);
	}
	/* A process stuck in the kernel (state D) does not die even of
	 * SIGKILL: named after 5 s, and not waited for, so the job ends. */
	end = now_ns() + 5000000000ull;
	while (live_count(s) && now_ns() < end) {
		poll_once(s, 100, NULL);
		reap(s);
	}
	for (unsigned i = 0; i < s->n; i++)
		if (s->p[i].live)
			fprintf(stderr, PROG ": %s survived SIGKILL for 5 s (stuck in the "
				"kernel?): left behind\n", proc_name(&s->p[i], name, sizeof(name)));
	nended = 0;
	/* The relays end once nothing holds their pipes: the logs are whole
	 * when we exit (a process's own children may keep one a while). */
	end = now_ns() + 2000000000ull;
	for (bool open = true; open && now_ns() < end;) {
		open = false;
		for (unsigned i = 0; i < s->n; i++)
			open |= s->p[i].fd[0] >= 0 || s->p[i].fd[1] >= 0;
		if (open)
			poll_once(s, 100, NULL);
	}
}
