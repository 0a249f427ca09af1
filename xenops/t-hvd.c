/*
 * t-hvd.c: test stand-in for xensim's hypervisor half: the loop and the
 * hv module alone, no xenstore.  Used by the xenops tests when the real
 * xensim is not built.
 *
 *   t-hvd DIR PIDFILE
 *
 * Creates dom0, listens on DIR/hv.sock, writes PIDFILE, then reads
 * commands from the FIFO DIR/hvd.ctl, one per line:
 *   create N     create domain N
 *   destroy N    destroy domain N
 * and writes "ok" or "error <errno>" to DIR/hvd.ctl.out.  Exits 0 on
 * SIGTERM/SIGINT.
 *
 *   t-hvd --ctl DIR create|destroy N
 *
 * sends one command and waits (10 s) for the answer: exit 0 on "ok".
 * One client at a time.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "sim.h"

struct t_hvd {
	struct sim_loop *loop;
	struct hv *hv;
	int ctl_fd;
	char out_path[PATH_MAX];
	char buf[256];
	size_t len;
};

static void
reply(struct t_hvd *t, int rc)
{
	char tmp[PATH_MAX + 8];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", t->out_path);
	f = fopen(tmp, "w");
	if (!f)
		return;
	if (rc < 0)
		fprintf(f, "error %d\n", -rc);
	else
		fprintf(f, "ok\n");
	fclose(f);
	rename(tmp, t->out_path);
}

static void
ctl_cb(void *opaque, uint32_t events)
{
	struct t_hvd *t = opaque;
	ssize_t n = read(t->ctl_fd, t->buf + t->len, sizeof(t->buf) - 1 - t->len);
	char *nl;

	if (n <= 0)
		return;
	t->len += n;
	t->buf[t->len] = '\0';
	while ((nl = strchr(t->buf, '\n'))) {
		unsigned int id;
		int rc = -EINVAL;

		*nl = '\0';
		if (sscanf(t->buf, "create %u", &id) == 1)
			rc = hv_domain_create(t->hv, id);
		else if (sscanf(t->buf, "destroy %u", &id) == 1)
			rc = hv_domain_destroy(t->hv, id);
		reply(t, rc);
		t->len -= nl + 1 - t->buf;
		memmove(t->buf, nl + 1, t->len + 1);
	}
	if (t->len == sizeof(t->buf) - 1)
		t->len = 0;
}

static void
sig_cb(void *opaque, uint32_t events)
{
	struct t_hvd *t = opaque;

	sim_loop_stop(t->loop);
}

static int
ctl_main(const char *dir, const char *cmd, const char *id)
{
	char path[PATH_MAX], out[PATH_MAX], ans[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), "%s/hvd.ctl", dir);
	snprintf(out, sizeof(out), "%s/hvd.ctl.out", dir);
	unlink(out);
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		return 1;
	}
	fprintf(f, "%s %s\n", cmd, id);
	fclose(f);
	for (int i = 0; i < 1000; i++) {
		f = fopen(out, "r");
		if (f) {
			bool ok = fgets(ans, sizeof(ans), f) && strcmp(ans, "ok\n") == 0;

			fclose(f);
			if (ans[0]) {
				if (!ok)
					fprintf(stderr, "t-hvd: %s %s: %s", cmd, id, ans);
				return ok ? 0 : 1;
			}
		}
		usleep(10000);
	}
	fprintf(stderr, "t-hvd: %s %s: no answer\n", cmd, id);
	return 1;
}

int
main(int argc, char **argv)
{
	static struct t_hvd t;
	char ctl_path[PATH_MAX];
	sigset_t mask;
	int sfd, rc;
	FILE *pf;

	log_init("t-hvd");
	if (argc == 5 && strcmp(argv[1], "--ctl") == 0)
		return ctl_main(argv[2], argv[3], argv[4]);
	if (argc != 3) {
		fprintf(stderr, "usage: t-hvd DIR PIDFILE\n");
		return 2;
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);

	snprintf(ctl_path, sizeof(ctl_path), "%s/hvd.ctl", argv[1]);
	snprintf(t.out_path, sizeof(t.out_path), "%s/hvd.ctl.out", argv[1]);
	unlink(ctl_path);
	if (mkfifo(ctl_path, 0600) < 0) {
		perror("mkfifo");
		return 1;
	}
	t.ctl_fd = open(ctl_path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	t.loop = sim_loop_new();
	t.hv = t.loop ? hv_new(t.loop, argv[1]) : NULL;
	if (!t.hv || t.ctl_fd < 0 || sfd < 0) {
		perror("t-hvd");
		return 1;
	}
	rc = hv_domain_create(t.hv, 0);
	if (rc < 0) {
		fprintf(stderr, "t-hvd: create dom0: %s\n", strerror(-rc));
		return 1;
	}
	sim_loop_add(t.loop, t.ctl_fd, EPOLLIN, ctl_cb, &t);
	sim_loop_add(t.loop, sfd, EPOLLIN, sig_cb, &t);
	pf = fopen(argv[2], "w");
	if (!pf) {
		perror(argv[2]);
		return 1;
	}
	fprintf(pf, "%d\n", (int)getpid());
	fclose(pf);

	sim_loop_run(t.loop);

	sim_loop_del(t.loop, t.ctl_fd);
	sim_loop_del(t.loop, sfd);
	hv_free(t.hv);
	sim_loop_free(t.loop);
	close(t.ctl_fd);
	close(sfd);
	unlink(ctl_path);
	unlink(t.out_path);
	unlink(argv[2]);
	return 0;
}
