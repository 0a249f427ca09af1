/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-evtchn.c: event channels over xensim (XENOPS_SIM).
 *
 *   XENSIM_DIR=DIR test-evtchn DOMID OTHER
 *
 * DOMID and OTHER are existing domUs (OTHER: the third party that must
 * not bind what is offered to dom0).
 */
#include <config.h>

#include <errno.h>
#include <stdbool.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compiler.h"
#include "t-common.h"

static uint32_t guest_id, other_id;
static xenops_t *dom0;
static xenops_t *guest;

/* Wait for an event and return its port (masked), or -errno. */
static int
wait_event(xenops_evtchn_t *e, int ms)
{
	if (!t_wait_readable(xenops_evtchn_fd(e), ms))
		return -ETIMEDOUT;
	return xenops_evtchn_pending(e);
}

/* A channel dom0 <-> guest: dom0 offers, the guest binds. */
static int
connect_pair(xenops_evtchn_t *e0, xenops_evtchn_t *eg, int *p0, int *pg)
{
	*p0 = xenops_evtchn_bind_unbound(e0, guest_id);
	if (*p0 <= 0)
		return *p0 ? *p0 : -EPROTO;
	*pg = xenops_evtchn_bind_interdomain(eg, 0, *p0);
	return *pg > 0 ? 0 : *pg;
}

/* 1000 round trips between two processes, each event counted once. */
static int
test_ping_pong(void)
{
	enum { ROUNDS = 1000 };
	xenops_evtchn_t *e0;
	int sv[2], p0, st, got = 0, rc;
	uint32_t pg;
	pid_t pid;

	T_CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) == 0, "%m");
	/* Fork before opening anything the child must not inherit. */
	pid = fork();
	T_CHECK(pid >= 0, "fork");
	if (pid == 0) {
		/* The guest process: bind, then answer every event. */
		xenops_t *g = t_open(guest_id);
		xenops_evtchn_t *eg = xenops_evtchn_open(g);
		int port, n = 0;

		close(sv[0]);
		if (!eg || read(sv[1], &p0, sizeof(p0)) != sizeof(p0))
			_exit(2);
		port = xenops_evtchn_bind_interdomain(eg, 0, p0);
		if (port <= 0)
			_exit(2);
		if (write(sv[1], &port, sizeof(port)) != sizeof(port))
			_exit(3);
		while (n < ROUNDS) {
			int p = wait_event(eg, 10000);

			if (p == -EAGAIN)
				continue;	/* spurious wakeup: allowed */
			if (p != port)
				_exit(4);
			n++;
			if (xenops_evtchn_unmask(eg, port) < 0 ||
			    xenops_evtchn_notify(eg, port) < 0)
				_exit(5);
		}
		/* No extra event may be pending. */
		if (t_wait_readable(xenops_evtchn_fd(eg), 50) &&
		    xenops_evtchn_pending(eg) != -EAGAIN)
			_exit(6);
		if (write(sv[1], &n, sizeof(n)) != sizeof(n))
			_exit(7);
		xenops_evtchn_close(eg);
		xenops_close(g);
		close(sv[1]);
		_exit(0);
	}
	close(sv[1]);
	e0 = xenops_evtchn_open(dom0);
	T_CHECK(e0, "open: %m");
	p0 = xenops_evtchn_bind_unbound(e0, guest_id);
	T_CHECK(p0 > 0, "bind_unbound: %d", p0);
	T_CHECK(write(sv[0], &p0, sizeof(p0)) == sizeof(p0), "send port");
	T_CHECK(read(sv[0], &pg, sizeof(pg)) == sizeof(pg), "guest port");
	for (int i = 0; i < ROUNDS; i++) {
		int p;

		rc = xenops_evtchn_notify(e0, p0);
		T_CHECK(rc == 0, "notify round %d: %d", i, rc);
		do
			p = wait_event(e0, 10000);
		while (p == -EAGAIN);
		T_CHECK(p == p0, "round %d: pending %d", i, p);
		got++;
		T_CHECK(xenops_evtchn_unmask(e0, p0) == 0, "unmask");
	}
	T_CHECK(read(sv[0], &rc, sizeof(rc)) == sizeof(rc) && rc == ROUNDS,
		"guest counted %d", rc);
	T_CHECK(waitpid(pid, &st, 0) == pid, "waitpid");
	T_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "guest status 0x%x", st);
	T_CHECK(got == ROUNDS, "dom0 counted %d", got);
	/* The guest process closed its handle: our end is now dead. */
	T_CHECK(xenops_evtchn_notify(e0, p0) == -ENOTCONN, "notify after peer exit");
	close(sv[0]);
	xenops_evtchn_close(e0);
	return 0;
}

/* pending() masks; notifies while masked coalesce; unmask re-signals. */
static int
test_pending_unmask(void)
{
	xenops_evtchn_t *e0 = xenops_evtchn_open(dom0);
	xenops_evtchn_t *eg = xenops_evtchn_open(guest);
	int p0, pg;

	T_CHECK(e0 && eg, "open: %m");
	T_CHECK(connect_pair(e0, eg, &p0, &pg) == 0, "connect");
	T_CHECK(xenops_evtchn_pending(eg) == -EAGAIN, "nothing pending yet");
	T_CHECK(!t_wait_readable(xenops_evtchn_fd(eg), 0), "fd readable early");

	/* Three notifies before the guest looks: one event. */
	for (int i = 0; i < 3; i++)
		T_CHECK(xenops_evtchn_notify(e0, p0) == 0, "notify");
	T_CHECK(wait_event(eg, 1000) == pg, "first event");
	T_CHECK(xenops_evtchn_pending(eg) == -EAGAIN, "coalesced");

	/* Masked now: a notify sets pending but does not wake us. */
	T_CHECK(xenops_evtchn_notify(e0, p0) == 0, "notify while masked");
	T_CHECK(!t_wait_readable(xenops_evtchn_fd(eg), 50), "woken while masked");
	T_CHECK(xenops_evtchn_pending(eg) == -EAGAIN, "reported while masked");
	/* Unmask: the event that arrived meanwhile is delivered. */
	T_CHECK(xenops_evtchn_unmask(eg, pg) == 0, "unmask");
	T_CHECK(wait_event(eg, 1000) == pg, "event after unmask");
	T_CHECK(xenops_evtchn_unmask(eg, pg) == 0, "unmask");
	T_CHECK(!t_wait_readable(xenops_evtchn_fd(eg), 50), "spurious event");

	/* Both directions work, and the ports are independent. */
	T_CHECK(xenops_evtchn_notify(eg, pg) == 0, "notify back");
	T_CHECK(wait_event(e0, 1000) == p0, "dom0 event");
	T_CHECK(xenops_evtchn_unmask(e0, p0) == 0, "unmask");

	/* Two ports on one handle: both reported, one per pending(). */
	{
		int q0, qg, a, b;

		T_CHECK(connect_pair(e0, eg, &q0, &qg) == 0, "second channel");
		T_CHECK(xenops_evtchn_notify(e0, p0) == 0 &&
			xenops_evtchn_notify(e0, q0) == 0, "notify both");
		a = wait_event(eg, 1000);
		b = wait_event(eg, 1000);
		T_CHECK((a == pg && b == qg) || (a == qg && b == pg),
			"two ports: got %d and %d", a, b);
		T_CHECK(xenops_evtchn_unmask(eg, pg) == 0 &&
			xenops_evtchn_unmask(eg, qg) == 0, "unmask");
		T_CHECK(xenops_evtchn_unbind(eg, qg) == 0, "unbind");
		T_CHECK(xenops_evtchn_unbind(e0, q0) == 0, "unbind");
	}
	xenops_evtchn_close(eg);
	xenops_evtchn_close(e0);
	return 0;
}

/* Notify needs a connected port of this handle. */
static int
test_notify_errors(void)
{
	xenops_evtchn_t *e0 = xenops_evtchn_open(dom0);
	xenops_evtchn_t *e1 = xenops_evtchn_open(dom0);
	xenops_evtchn_t *eg = xenops_evtchn_open(guest);
	int p0, pg, rc;

	T_CHECK(e0 && e1 && eg, "open: %m");
	T_CHECK(xenops_evtchn_notify(e0, 0) == -EINVAL, "port 0");
	T_CHECK(xenops_evtchn_notify(e0, 100000) == -EINVAL, "huge port");
	p0 = xenops_evtchn_bind_unbound(e0, guest_id);
	T_CHECK(p0 > 0, "bind_unbound %d", p0);
	/* Unbound: nobody to notify. */
	T_CHECK(xenops_evtchn_notify(e0, p0) == -ENOTCONN, "notify unbound");
	/* Another handle's port is not ours. */
	T_CHECK(xenops_evtchn_notify(e1, p0) == -EINVAL, "notify via e1");
	T_CHECK(xenops_evtchn_unmask(e1, p0) == -EINVAL, "unmask via e1");
	/* Binding: only the offered domain, only an unbound port. */
	rc = xenops_evtchn_bind_interdomain(e1, 0, p0);
	T_CHECK(rc == -EINVAL, "dom0 binds a port offered to dom%u: %d",
		guest_id, rc);
	rc = xenops_evtchn_bind_interdomain(eg, 0, p0 + 1);
	T_CHECK(rc == -EINVAL, "bind to a free port: %d", rc);
	rc = xenops_evtchn_bind_interdomain(eg, 4242, 1);
	T_CHECK(rc == -ESRCH, "bind to a missing domain: %d", rc);
	rc = xenops_evtchn_bind_unbound(eg, 4242);
	T_CHECK(rc == -ESRCH, "offer to a missing domain: %d", rc);
	pg = xenops_evtchn_bind_interdomain(eg, 0, p0);
	T_CHECK(pg > 0, "bind %d", pg);
	rc = xenops_evtchn_bind_interdomain(eg, 0, p0);
	T_CHECK(rc == -EINVAL, "bind twice: %d", rc);
	T_CHECK(xenops_evtchn_notify(e0, p0) == 0, "notify connected");

	/* The guest closes its end: -ENOTCONN from now on. */
	T_CHECK(xenops_evtchn_unbind(eg, pg) == 0, "unbind");
	T_CHECK(xenops_evtchn_notify(e0, p0) == -ENOTCONN, "notify closed");
	T_CHECK(xenops_evtchn_notify(eg, pg) == -EINVAL, "notify own unbound");
	T_CHECK(xenops_evtchn_unbind(eg, pg) == -EINVAL, "unbind twice");
	T_CHECK(xenops_evtchn_unbind(e0, p0) == 0, "unbind dead port");
	T_CHECK(xenops_evtchn_notify(e0, p0) == -EINVAL, "notify after unbind");

	/* Closing a handle closes its ports. */
	T_CHECK(connect_pair(e0, eg, &p0, &pg) == 0, "reconnect");
	T_CHECK(xenops_evtchn_notify(eg, pg) == 0, "notify");
	xenops_evtchn_close(e0);
	T_CHECK(xenops_evtchn_notify(eg, pg) == -ENOTCONN, "peer handle closed");
	xenops_evtchn_close(e1);
	xenops_evtchn_close(eg);
	return 0;
}

/* One notify from a to b: b sees its port pb, unmasks it. */
static int
one_event(xenops_evtchn_t *a, int pa, xenops_evtchn_t *b, int pb)
{
	int p, rc = xenops_evtchn_notify(a, pa);

	if (rc < 0)
		return rc;
	do
		p = wait_event(b, 2000);
	while (p == -EAGAIN);
	if (p != pb)
		return p < 0 ? p : -EPROTO;
	return xenops_evtchn_unmask(b, pb);
}

/* Wait until the guest's port says its peer is gone (-ENOTCONN). */
static bool
peer_gone(xenops_evtchn_t *eg, int pg)
{
	for (int i = 0; i < 500; i++) {
		if (xenops_evtchn_notify(eg, pg) == -ENOTCONN)
			return true;
		usleep(10000);
	}
	return false;
}

/*
 * Xen's evtchn_close(): when dom0 closes its end of an interdomain
 * channel, the guest's port goes back to unbound, offered to dom0, so a
 * restarted dom0 process (a backend) binds it again and events flow both
 * ways on the guest's unchanged port; nobody else may bind it.  The same
 * when the dom0 process dies without closing.
 */
static int
test_rebind(void)
{
	xenops_t *other = t_open(other_id);
	xenops_evtchn_t *e0 = xenops_evtchn_open(dom0);
	xenops_evtchn_t *eg = xenops_evtchn_open(guest);
	xenops_evtchn_t *eo = xenops_evtchn_open(other);
	int p0, pg, rc, sv[2], st;
	pid_t pid;

	T_CHECK(e0 && eg && eo, "open: %m");
	T_CHECK(connect_pair(e0, eg, &p0, &pg) == 0, "connect");
	T_CHECK(one_event(e0, p0, eg, pg) == 0, "dom0 -> guest");
	T_CHECK(one_event(eg, pg, e0, p0) == 0, "guest -> dom0");
	/* connected: nobody may bind the guest's port */
	rc = xenops_evtchn_bind_interdomain(eo, guest_id, pg);
	T_CHECK(rc == -EINVAL, "third party binds a connected port: %d", rc);

	/* 1. dom0 closes its handle: the guest's port is dom0's to bind */
	xenops_evtchn_close(e0);
	T_CHECK(xenops_evtchn_notify(eg, pg) == -ENOTCONN, "notify after close");
	rc = xenops_evtchn_bind_interdomain(eo, guest_id, pg);
	T_CHECK(rc == -EINVAL, "third party binds the port offered to dom0: %d", rc);
	rc = xenops_evtchn_bind_interdomain(eg, guest_id, pg);
	T_CHECK(rc == -EINVAL, "the guest binds its own port: %d", rc);
	e0 = xenops_evtchn_open(dom0);
	T_CHECK(e0, "reopen: %m");
	p0 = xenops_evtchn_bind_interdomain(e0, guest_id, pg);
	T_CHECK(p0 > 0, "dom0 binds the guest's port again: %d", p0);
	T_CHECK(one_event(e0, p0, eg, pg) == 0, "dom0 -> guest after rebind");
	T_CHECK(one_event(eg, pg, e0, p0) == 0, "guest -> dom0 after rebind");
	rc = xenops_evtchn_bind_interdomain(e0, guest_id, pg);
	T_CHECK(rc == -EINVAL, "bind a rebound port twice: %d", rc);
	T_CHECK(xenops_evtchn_unbind(e0, p0) == 0, "unbind");
	T_CHECK(xenops_evtchn_notify(eg, pg) == -ENOTCONN, "notify after unbind");

	/* 2. a dom0 process that binds it and dies (SIGKILL, no close) */
	T_CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) == 0, "%m");
	pid = fork();
	T_CHECK(pid >= 0, "fork");
	if (pid == 0) {
		xenops_t *x = t_open(0);
		xenops_evtchn_t *e = xenops_evtchn_open(x);
		int port;

		close(sv[0]);
		port = e ? xenops_evtchn_bind_interdomain(e, guest_id, pg) : -1;
		if (write(sv[1], &port, sizeof(port)) != sizeof(port))
			_exit(2);
		pause();
		_exit(3);
	}
	close(sv[1]);
	T_CHECK(read(sv[0], &rc, sizeof(rc)) == sizeof(rc) && rc > 0,
		"the child bound the guest's port: %d", rc);
	close(sv[0]);
	T_CHECK(xenops_evtchn_notify(eg, pg) == 0, "notify the child");
	kill(pid, SIGKILL);
	T_CHECK(waitpid(pid, &st, 0) == pid, "waitpid");
	T_CHECK(peer_gone(eg, pg), "the guest's port is still connected to a dead process");
	rc = xenops_evtchn_bind_interdomain(eo, guest_id, pg);
	T_CHECK(rc == -EINVAL, "third party binds after the death: %d", rc);
	p0 = xenops_evtchn_bind_interdomain(e0, guest_id, pg);
	T_CHECK(p0 > 0, "dom0 binds again after the death: %d", p0);
	/* the dead process's notify may have left the guest's bit pending */
	while (wait_event(eg, 50) == pg)
		T_CHECK(xenops_evtchn_unmask(eg, pg) == 0, "unmask");
	T_CHECK(one_event(e0, p0, eg, pg) == 0, "dom0 -> guest after the death");
	T_CHECK(one_event(eg, pg, e0, p0) == 0, "guest -> dom0 after the death");

	/* 3. the other direction: the guest closes, dom0's port is its again */
	T_CHECK(xenops_evtchn_unbind(eg, pg) == 0, "guest unbinds");
	T_CHECK(xenops_evtchn_notify(e0, p0) == -ENOTCONN, "notify after guest close");
	rc = xenops_evtchn_bind_interdomain(eo, 0, p0);
	T_CHECK(rc == -EINVAL, "third party binds dom0's port: %d", rc);
	pg = xenops_evtchn_bind_interdomain(eg, 0, p0);
	T_CHECK(pg > 0, "the guest binds dom0's port again: %d", pg);
	T_CHECK(one_event(e0, p0, eg, pg) == 0, "dom0 -> guest, guest rebound");
	T_CHECK(one_event(eg, pg, e0, p0) == 0, "guest -> dom0, guest rebound");

	xenops_evtchn_close(eo);
	xenops_evtchn_close(eg);
	xenops_evtchn_close(e0);
	xenops_close(other);
	return 0;
}

static int
test_domain_alive(void)
{
	T_CHECK(xenops_domain_alive(dom0, 0) == 1, "dom0");
	T_CHECK(xenops_domain_alive(dom0, guest_id) == 1, "guest");
	T_CHECK(xenops_domain_alive(dom0, 4242) == 0, "dom4242");
	T_CHECK(xenops_domain_alive(guest, 0) == 1, "dom0 from the guest");
	T_CHECK(xenops_domain_alive(dom0, 0x7ff0) == -EINVAL, "DOMID_SELF-range");
	return 0;
}

int
main(int argc, char **argv)
{
	int fails = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: XENSIM_DIR=DIR test-evtchn DOMID OTHER\n");
		return T_EXIT_FAIL;
	}
	guest_id = strtoul(argv[1], NULL, 10);
	other_id = strtoul(argv[2], NULL, 10);
	dom0 = t_open(0);
	guest = t_open(guest_id);

	fails += t_run("ping_pong", test_ping_pong);
	fails += t_run("pending_unmask", test_pending_unmask);
	fails += t_run("notify_errors", test_notify_errors);
	fails += t_run("rebind", test_rebind);
	fails += t_run("domain_alive", test_domain_alive);

	xenops_close(guest);
	xenops_close(dom0);
	return fails ? T_EXIT_FAIL : T_EXIT_PASS;
}
