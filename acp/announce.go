package acp

// A new session is the editor's once the answer naming it is written:
// session/new and session/fork answer with its sessionId, and an update
// about it that came first would be about a session the editor does not
// know yet. Claude says its slash commands and models in its answer to
// initialize (docs/CLI-NOTES.md), which the proxy passes on as soon as it
// has it (session/commands, session/state), possibly before that answer
// is written (at once for a claude the proxy had started ahead). So the
// pushes of a new session wait (session.awaitShown) until the answer is written:
// lockedWriter sees it go out (a result whose sessionId is the session's)
// and marks the session shown (session.show). A loaded or resumed session
// is shown from the start: the editor named it, and its replay comes
// before the answer by design.

import (
	"context"
	"log/slog"
	"time"

	"github.com/tidwall/gjson"
)

// expectAnswer has show called once an answer naming session id (its
// result.sessionId) has been written (l.mu taken; not with it held).
func (l *lockedWriter) expectAnswer(id string, show func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.answers == nil {
		l.answers = map[string]func(){}
	}
	l.answers[id] = show
}

// dropAnswer forgets the answer expected for session id (its open
// failed, or it was closed first).
func (l *lockedWriter) dropAnswer(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.answers, id)
}

// answeredLocked is what Write does after writing b (l.mu held): if b is
// an answer naming a session whose answer is expected, it returns that
// session's show.
func (l *lockedWriter) answeredLocked(b []byte) func() {
	if len(l.answers) == 0 {
		return nil
	}
	id := gjson.GetBytes(b, "result.sessionId")
	if id.Type != gjson.String {
		return nil
	}
	show := l.answers[id.Str]
	delete(l.answers, id.Str)
	return show
}

// show marks s known to the editor: its pushes may make updates.
func (s *session) show() { s.showOnce.Do(func() { close(s.shown) }) }

// awaitShown waits until the editor knows s (the answer naming it was
// written), the agent closes, or closeTimeout passes (logged; the update
// then goes anyway). It runs on the backend's read loop, which it holds
// up for as long as the SDK takes to write an answer already made: the
// session's open has returned once a push of it can come.
func (s *session) awaitShown(ctx context.Context, log *slog.Logger) {
	select {
	case <-s.shown:
		return
	default:
	}
	t := time.NewTimer(closeTimeout)
	defer t.Stop()
	select {
	case <-s.shown:
	case <-ctx.Done():
	case <-t.C:
		log.Warn("a push of a session came long before its answer was written; its updates go anyway", "session", s.acpID)
		s.show()
	}
}
