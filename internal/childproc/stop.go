package childproc

import (
	"os"
	"syscall"
	"time"
)

// Stop ends a child the way ccproxy ends every child, polite first:
// closeStdin (EOF: a well-behaved CLI or MCP server exits), up to
// closeGrace for exited to be closed; SIGTERM to group pgid and to p (where
// there are no groups; on Windows the group gets Ctrl-Break), up to
// termGrace; then SIGKILL to the group and p. A grace of 0 skips that
// step's wait. exited is closed by whoever reaps p. Stop returns as soon as
// exited is closed, or once SIGKILL is sent (it does not wait for the kill
// to take effect: see WaitGroupGone); it reports whether SIGKILL was sent.
func Stop(p *os.Process, pgid int, exited <-chan struct{}, closeStdin func(), closeGrace, termGrace time.Duration) (killed bool) {
	if closeStdin != nil {
		closeStdin()
	}
	if waitClosed(exited, closeGrace) {
		return false
	}
	if closeGrace > 0 || termGrace > 0 {
		_ = SignalGroup(pgid, syscall.SIGTERM)
		_ = p.Signal(syscall.SIGTERM)
		if waitClosed(exited, termGrace) {
			return false
		}
	}
	Kill(p, pgid)
	return true
}

// Kill sends SIGKILL to group pgid and to p (where there are no groups).
func Kill(p *os.Process, pgid int) {
	_ = SignalGroup(pgid, syscall.SIGKILL)
	_ = p.Kill()
}

// WaitGroupGone polls until process group pgid has no live member, up to
// d, and reports whether it has none. There is no event to wait for when
// the members are not our children (the leader is reaped, what it spawned
// is not ours), hence the short, growing polling interval.
func WaitGroupGone(pgid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	step := time.Millisecond
	for GroupAlive(pgid) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(step)
		step = min(2*step, 20*time.Millisecond)
	}
	return true
}

// waitClosed waits up to d for ch to be closed (d <= 0: only looks).
func waitClosed(ch <-chan struct{}, d time.Duration) bool {
	select {
	case <-ch:
		return true
	default:
	}
	if d <= 0 {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}
