/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * run.h: what blkbackd's main() sets up and its helpers share (main.c,
 * options.c).  The daemon's top level: one struct run, on main()'s
 * stack, owned by the control thread.  Private to blkbackd.
 */
#ifndef BLKBACKD_RUN_H
#define BLKBACKD_RUN_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

#include "ctl.h"
#include "dev.h"

/* Everything main() sets up, for its helpers below. */
struct run {
	struct bk_daemon d;
	char **argv;			/* as given: an upgrade execs it again */
	bool foreground;
	bool upgraded;			/* exec'ed by an upgrade: detached already */
	/* absolute (the daemon works from /): malloc'd, or NULL */
	char *pidfile, *trace_path, *log_file, *ctl_path, *record_path;
	bool ctl_group_set;		/* --ctl-group: ctl_gid may list, stats, status */
	gid_t ctl_gid;
	unsigned int stats_secs;
	unsigned int size_check_secs;	/* --size-check-interval; 0: never */
	sigset_t sigs;			/* blocked in every thread; read from sfd */
	char *state_dir;		/* --state-dir, absolute, or its default:
					 * malloc'd, or NULL */
	char *sim_dir;			/* --sim-dir or $XENSIM_DIR, absolute:
					 * malloc'd, or NULL */
	/* the working directory at start (malloc'd, or NULL): an upgrade
	 * execs from it, so that relative paths in argv mean what they
	 * meant at start */
	char *start_cwd;
	bool poll_set;			/* --poll-max-us was given */
	int sfd, tfd, size_tfd, lockfd;
	int ready_fd;			/* detached: the waiting parent's pipe, or -1 */
	struct bk_ctl *ctl;
	/* how the loop ended */
	bool close_devs;		/* write Closed for every vbd */
	bool upgrade;			/* exec bk_ctl_upgrade_path() */
};

/* The command line into r.  0 to go on, 1 to exit 0 at once (--help,
 * --version), -1 to exit 1 (after a message). */
int parse_options(int argc, char **argv, struct run *r);

/* The queues' defaults for this machine's costs, once, before any
 * queue starts (see options.c). */
void machine_costs(struct bk_options *o, bool poll_set);

#endif /* BLKBACKD_RUN_H */
