/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xensim-ctl.c: control a running xensim over DIR/ctl.sock (see ctl.h
 * for the protocol and xensim.1 for the command line).
 *
 *   xensim-ctl --dir DIR create-domain NAME    prints the new domid
 *   xensim-ctl --dir DIR destroy-domain ID
 *   xensim-ctl --dir DIR list                  "domid name" lines
 *
 * Exit status: 0 done, 1 refused or failed (the reason on stderr).
 */
#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "compiler.h"
#include "log.h"

static void
usage(FILE *f)
{
	fprintf(f,
"Usage: xensim-ctl --dir DIR COMMAND\n"
"Commands:\n"
"  create-domain NAME   create a domain; prints its domid\n"
"  destroy-domain ID    destroy a domain (fires @releaseDomain)\n"
"  list                 \"domid name\" per line, dom0 first\n"
"  grants ID            the domain's grants another domain holds mapped now:\n"
"                       \"REF pins=N writable=W by=DOMID\" per line\n"
"  evtchn ID            the domain's event channel ports in use: \"PORT\n"
"                       interdomain|unbound remote=DOM:PORT pid=PID conn=N\n"
"                       since=SEQ\" per line (pid, conn: the process and\n"
"                       connection it is bound through; SEQ: xensim's count\n"
"                       of port changes when it entered that state)\n"
"  maps ID              which dom0 process holds which of the domain's\n"
"                       grants: \"REF pid=PID conn=N writable=W\" per pin\n"
"Options:\n"
"  -d, --dir DIR        xensim's directory (default $XENSIM_DIR)\n"
"  -h, --help           this help\n");
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	const char *dir = getenv("XENSIM_DIR");
	static char reply[8 << 20];	/* "maps": up to 8192 lines per process */
	char req[256], *nl;
	size_t len = 0;
	int fd, opt, n;

	log_init(argv[0]);
	while ((opt = getopt_long(argc, argv, "d:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'd':
			dir = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 1;
		}
	}
	if (!dir) {
		log_error("no --dir and no XENSIM_DIR");
		return 1;
	}
	if (optind + 2 == argc && !strcmp(argv[optind], "create-domain"))
		n = snprintf(req, sizeof(req), "create-domain %s\n",
			     argv[optind + 1]);
	else if (optind + 2 == argc && !strcmp(argv[optind], "destroy-domain"))
		n = snprintf(req, sizeof(req), "destroy-domain %s\n",
			     argv[optind + 1]);
	else if (optind + 2 == argc && (!strcmp(argv[optind], "grants") ||
					!strcmp(argv[optind], "evtchn") ||
					!strcmp(argv[optind], "maps")))
		n = snprintf(req, sizeof(req), "%s %s\n", argv[optind], argv[optind + 1]);
	else if (optind + 1 == argc && !strcmp(argv[optind], "list"))
		n = snprintf(req, sizeof(req), "list\n");
	else {
		usage(stderr);
		return 1;
	}
	if (n < 0 || (size_t)n >= sizeof(req) || strchr(req, '\n') !=
	    req + n - 1) {
		log_error("argument too long or contains a newline");
		return 1;
	}
	if ((size_t)snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/ctl.sock",
			     dir) >= sizeof(sun.sun_path)) {
		log_error("%s/ctl.sock: path too long", dir);
		return 1;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		log_error("connect %s: %m (is xensim running?)", sun.sun_path);
		return 1;
	}
	if (write(fd, req, (size_t)n) != n) {
		log_error("write %s: %m", sun.sun_path);
		return 1;
	}
	for (;;) {
		ssize_t r = read(fd, reply + len, sizeof(reply) - 1 - len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			log_error("read %s: %m", sun.sun_path);
			return 1;
		}
		if (r == 0 || len + (size_t)r == sizeof(reply) - 1) {
			len += (size_t)r;
			break;
		}
		len += (size_t)r;
	}
	close(fd);
	if (len == sizeof(reply) - 1) {
		log_error("the answer is longer than %zu bytes: not printed", sizeof(reply) - 1);
		return 1;
	}
	reply[len] = '\0';
	nl = strchr(reply, '\n');
	if (!nl) {
		log_error("xensim closed the connection without an answer");
		return 1;
	}
	*nl = '\0';
	if (strcmp(reply, "OK") != 0) {
		log_error("%s", strncmp(reply, "ERR ", 4) ? reply : reply + 4);
		return 1;
	}
	fputs(nl + 1, stdout);
	return fflush(stdout) == 0 ? 0 : 1;
}
