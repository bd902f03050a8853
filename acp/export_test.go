package acp

import sdk "github.com/coder/acp-go-sdk"

// SuspendIdle does now what the idle timer of session id does: it
// suspends the session if it is idle, and reports whether it did.
func (a *Agent) SuspendIdle(id sdk.SessionId) bool {
	s := a.lookup(string(id))
	return s != nil && a.suspend(s, "test")
}

// SetHook sets the agent's test hook (before Serve): f("suspend", id)
// once a suspend has begun, before it checks that the session is still
// quiet; f("close", id) after that check, just before the ccproxy session
// is closed (either may block to hold the suspend there); f("wait", id)
// when a request waits for a suspend or resume of id to end.
func (a *Agent) SetHook(f func(event string, id sdk.SessionId)) { a.hook = f }

// Suspended reports whether session id is suspended.
func (a *Agent) Suspended(id sdk.SessionId) bool {
	s := a.lookup(string(id))
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.suspended
}

// Closing is closed once Close has begun (the agent's context is done).
func (a *Agent) Closing() <-chan struct{} { return a.ctx.Done() }
