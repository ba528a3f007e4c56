/* Child processes (app.h). posix_spawn, not fork: the apps that start
 * others hold large tensors, and a fork would copy their page tables. */
#include <errno.h>
#include <spawn.h>
#include <sys/wait.h>

#include "app.h"

extern char **environ;

int app_spawn(pid_t *pid, char *const argv[], int out_fd, int err_fd, int close_fd)
{
	posix_spawn_file_actions_t fa;
	int e = posix_spawn_file_actions_init(&fa);
	if (e)
		return e;
	if (out_fd >= 0)
		e = posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
	if (!e && err_fd >= 0)
		e = posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
	if (!e && close_fd >= 0)
		e = posix_spawn_file_actions_addclose(&fa, close_fd);
	if (!e)
		e = posix_spawn(pid, argv[0], &fa, NULL, argv, environ);
	if (e == ENOENT || e == EACCES)
		e = posix_spawnp(pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	return e;
}

int app_wait(pid_t pid)
{
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return st;
}

const char *app_status_text(int status, char *buf, size_t len)
{
	if (WIFEXITED(status))
		snprintf(buf, len, "exit status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "signal %d", WTERMSIG(status));
	else
		snprintf(buf, len, "wait status %#x", (unsigned)status);
	return buf;
}
