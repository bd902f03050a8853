package acp

import sdk "github.com/coder/acp-go-sdk"

// SetHook sets the agent's test hook (before Serve): f("send", id) just
// before a prompt of session id sends its turn (it may block to hold it
// there).
func (a *Agent) SetHook(f func(event string, id sdk.SessionId)) { a.hook = f }

// Closing is closed once Close has begun (the agent's context is done).
func (a *Agent) Closing() <-chan struct{} { return a.ctx.Done() }
