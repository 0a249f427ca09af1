/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ctl.h: blkbackd's control socket (blkbackd-ctl.8), on the control
 * thread: a unix socket that answers list, stats, resize, status, and
 * takes shutdown and upgrade requests for the main loop.  Root may do
 * everything; the members of an optional group (--ctl-group) may list,
 * stats and status.  The protocol is ctl-proto.h's.
 */
#ifndef BK_CTL_H
#define BK_CTL_H

#include <stdbool.h>
#include <sys/types.h>

struct bk_daemon;
struct bk_ctl;

/* Default socket paths (see bk_ctl_open()). */
#ifndef BLKBACKD_CTL_SOCKET
#define BLKBACKD_CTL_SOCKET "/run/blkbackd/ctl.sock"
#endif
/* sim: XENSTORED_PATH + this, %u the daemon's domain (0) */
#define BK_CTL_SIM_SUFFIX ".blkbackd-%u.ctl"
/* real Xen: the queues' recovery records, blkbackd --state-dir (tmpfs:
 * they outlive the process, not the machine); blkbackd-ctl status reads
 * them when blkbackd is down.  sim: XENSTORED_PATH + BK_STATE_SIM_SUFFIX. */
#ifndef BLKBACKD_STATE_DIR
#define BLKBACKD_STATE_DIR "/run/blkbackd"
#endif
#define BK_STATE_SIM_SUFFIX ".blkbackd-%u.state"

/* What a request asks of the main loop. */
enum bk_ctl_action {
	BK_CTL_NONE,
	BK_CTL_SHUTDOWN,	/* stop as for SIGTERM (close_on_exit decides) */
	BK_CTL_SHUTDOWN_CLOSE,	/* stop and close every vbd */
	BK_CTL_UPGRADE,		/* stop without closing, exec bk_ctl_upgrade_path() */
};

/*
 * Listen on path (mode 0600; or 0660 and owned by group when group is
 * not (gid_t)-1; its directory is made, 0755, when missing), replacing
 * a stale socket; refused (-EADDRINUSE) when something answers there
 * already.  0 with *out, or -errno after logging.  d is borrowed for
 * the ctl's life.
 */
int bk_ctl_open(struct bk_daemon *d, const char *path, gid_t group, struct bk_ctl **out);
/* The listening fd: poll it for POLLIN. */
int bk_ctl_fd(const struct bk_ctl *c);
/*
 * The fd polled readable: accept the clients waiting, refuse each unless
 * its peer credentials (SO_PEERCRED, SO_PEERGROUPS) say root, or a
 * member of the group (then list, stats and status only: EPERM for the
 * rest), read their requests and answer them (each step bounded by a
 * timeout).  Returns what the loop must do.
 * The client of a shutdown or upgrade is kept connected until the
 * process exits or execs (its EOF tells it the daemon is done).
 */
enum bk_ctl_action bk_ctl_handle(struct bk_ctl *c);
/*
 * Answer the resize requests that wait for a size probe
 * (bk_vbd_size_ask): those whose probe was answered (the main loop
 * calls this after the queues' reports), whose vbd went or
 * disconnected (ENOTCONN), and, on the socket's own ticks, those that
 * waited CTL_RESIZE_WAIT_S (5 s) in vain: ETIMEDOUT (a backing that
 * hangs; the probe stays out, and its answer is acted on when it
 * comes).  Never waits.
 */
void bk_ctl_resizes(struct bk_ctl *c);
/* After BK_CTL_UPGRADE: the program to exec (absolute). */
const char *bk_ctl_upgrade_path(const struct bk_ctl *c);
/*
 * Stop listening.  unlink: remove the socket's path (not before an
 * upgrade's exec: the new process replaces it).  The client of a
 * shutdown or upgrade stays connected (closed at exit, or by exec: the
 * fd is O_CLOEXEC).  c may be NULL.
 */
void bk_ctl_close(struct bk_ctl *c, bool unlink_path);
/*
 * Stopping (a shutdown or upgrade request, a signal): every client still
 * waiting -- connected in the same instant as the request that stops us,
 * or while the devices drained -- is answered "error EBUSY busy: WHY"
 * rather than left to find its connection closed unanswered at exit or
 * exec (blkbackd-ctl would then say blkbackd is not running).  The
 * client of the request that stops us is not among them.  Never blocks:
 * the answer is one short line.  Before bk_ctl_close(); c may be NULL.
 */
void bk_ctl_refuse_waiting(struct bk_ctl *c, const char *why);

#endif /* BK_CTL_H */
