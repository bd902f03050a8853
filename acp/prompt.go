package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/tidwall/gjson"

	"github.com/ccproxy/ccproxy/protocol"
)

// Prompt runs one turn. session/cancel (Cancel) interrupts the running
// turn, whose prompt answers cancelled once the turn's result comes, and
// cancels the prompts that have not begun their turn. A newer valid prompt
// replaces the running turn: it interrupts it, waits for its end, then
// runs; an older prompt still waiting gives way to it. (The SDK's own
// per-prompt context is not used for this: it keeps one per session and
// forgets the newer prompt's when an older one returns.) If the interrupt
// fails, the prompt answers cancelled at once (as ACP asks) and the turn
// runs on: until its result, the session refuses prompts, saying why (so
// that result is not taken for the next prompt's), and session/cancel
// tries the interrupt again. The turn also ends when the session is closed
// (cancelled), or when the editor, the agent or the connection to ccproxy
// goes. A suspended session is resumed by the proxy when the turn reaches
// it (the turn held until its claude is ready).
func (a *Agent) Prompt(_ context.Context, p sdk.PromptRequest) (sdk.PromptResponse, error) {
	s, err := a.session(p.SessionId)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	r := &promptRun{a: a, s: s, t: newTurn()}
	ccID := r.begin()
	send, err := turnOf(ccID, p.Prompt)
	if err != nil { // refused before it could replace anything
		return sdk.PromptResponse{}, err
	}
	if stop, resp, err := r.enqueue(); stop {
		return resp, err
	}
	defer r.end()
	if stop, resp, err := r.resume(send); stop {
		return resp, err
	}
	// Not under ctx: a session/cancel may come before the reply (claude can
	// ask for a permission before the proxy's reply arrives, and the proxy
	// holds the turn, replying only once it is written, while claude
	// starts); the turn is then interrupted, not abandoned half-sent. The
	// interrupt may go as soon as the send is written: the proxy handles
	// it after the send, withdrawing the turn if it still holds it.
	if a.hook != nil {
		a.hook("send", s.acpID)
	}
	call, err := a.b.Begin(a.ctx, protocol.TypeSessionSend, send)
	close(r.t.sent)
	if err == nil {
		err = call.Wait(a.ctx, nil)
	}
	if err != nil {
		return r.sendFailed(err)
	}
	return r.wait()
}

// sendFailed answers a prompt whose session/send failed: cancelled when
// the session was closed meanwhile (session/close sets closing before it
// closes the ccproxy session, so the proxy's unknown_session then comes
// from that close), or when the proxy withdrew the turn it held for a
// claude not ready yet (starting or restarting), which only an interrupt
// does (the proxy's cancelled); else the error.
func (r *promptRun) sendFailed(err error) (sdk.PromptResponse, error) {
	r.s.mu.Lock()
	closing := r.s.closing
	r.s.mu.Unlock()
	if closing || isCode(err, protocol.CodeCancelled) {
		return cancelled, nil
	}
	return sdk.PromptResponse{}, rpcError("session/prompt", err)
}

// cancelled is a prompt's answer when it was cancelled.
var cancelled = sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}

// promptRun is one Prompt call, step by step: begin (its number), enqueue
// (wait for its turn), resume (a suspended session), the send, wait (the
// turn's end) and end (the turn over, after the interrupts of it).
type promptRun struct {
	a      *Agent
	s      *session
	t      *turn // its turn
	seq    int   // its number (promptQueue.started)
	runsOn bool  // it gave up on its turn, which has not ended: deliver ends it
}

// begin numbers the prompt and tells the guard it began. It returns the
// session's ccproxy session.
func (r *promptRun) begin() string {
	s := r.s
	s.mu.Lock()
	r.seq = s.startLocked()
	ccID := s.id
	s.mu.Unlock()
	s.enter() // the guard may wait for this before passing a session/cancel on
	return ccID
}

// enqueue waits for the prompt's turn: it replaces the running turn (an
// interrupt, then its end awaited) and gives way to a newer prompt. When
// it reports stop the prompt answers with resp and err (cancelled,
// replaced, closed, or refused) without a turn.
func (r *promptRun) enqueue() (stop bool, resp sdk.PromptResponse, err error) {
	a, s := r.a, r.s
	s.mu.Lock()
	s.newestLocked(r.seq)
	s.mu.Unlock()
	for {
		s.mu.Lock()
		got, old, wake := s.takeLocked(r.seq, r.t, s.closing)
		s.mu.Unlock()
		switch got {
		case took:
			return false, sdk.PromptResponse{}, nil
		case stale: // cancelled, replaced or closed before its turn began: nothing was sent
			return true, cancelled, nil
		case blocked:
			return true, sdk.PromptResponse{}, sdk.NewInvalidRequest(map[string]any{"error": "session/prompt: the cancelled turn of this session has not ended (claude did not take the interrupt); send session/cancel again, or close the session"})
		}
		// This prompt replaces the running turn: interrupted, its end awaited.
		a.interrupt(s)
		select {
		case <-old.done:
		case <-old.gaveUp: // refused above, next time round
		case <-wake:
		case <-a.ctx.Done():
			return true, cancelled, nil
		case <-a.b.Done():
			return true, sdk.PromptResponse{}, sdk.NewInternalError(map[string]any{"error": "session/prompt: the connection to ccproxy ended"})
		}
	}
}

// end ends the prompt's turn, unless it runs on (deliver ends it), after
// the interrupts of it in flight: a late one must not end the next turn.
func (r *promptRun) end() {
	if r.runsOn {
		return
	}
	s, t := r.s, r.t
	s.mu.Lock()
	t.ending = true
	s.mu.Unlock()
	t.interrupting.Wait()
	s.mu.Lock()
	s.endTurnLocked(t)
	s.mu.Unlock()
}

// resume checks, once the prompt holds its turn, that the session is
// still open (a suspended one the proxy resumes itself when the turn
// reaches it) and sets send's session. When it reports stop, the turn is
// not sent (unsent: nothing to interrupt) and the prompt answers
// cancelled: cancelled or closed meanwhile.
func (r *promptRun) resume(send *protocol.SessionSend) (stop bool, resp sdk.PromptResponse, err error) {
	s, t := r.s, r.t
	send.Session, err = s.live()
	s.mu.Lock()
	stopped := s.cancelled || s.closing // during the resume: nothing sent, nothing to interrupt
	if err != nil || stopped {
		t.unsent = true
	}
	s.mu.Unlock()
	switch {
	case errors.Is(err, errClosing) || err == nil && stopped:
		close(t.sent)
		return true, cancelled, nil
	case err != nil:
		close(t.sent)
		return true, sdk.PromptResponse{}, err
	}
	return false, sdk.PromptResponse{}, nil
}

// wait waits for the sent turn's end and answers the prompt: its stop
// reason; cancelled when it was interrupted, given up on (runsOn), or the
// session closed; an error when the turn ended in one or claude, the
// editor or the connection went.
func (r *promptRun) wait() (sdk.PromptResponse, error) {
	a, s, t := r.a, r.s, r.t
	var res *Result
	for res == nil {
		select {
		case res = <-t.result:
			if res == nil { // the session ended
				s.mu.Lock()
				closing := s.closing
				s.mu.Unlock()
				if closing {
					return cancelled, nil
				}
				return sdk.PromptResponse{}, sdk.NewInternalError(map[string]any{"error": "the session ended during the turn"})
			}
		case <-t.gaveUp:
			r.runsOn = s.runsOn(t)
			return cancelled, nil
		case <-a.conn.Done(): // the editor is gone
			a.interrupt(s)
			select { // the turn's result follows the interrupt: its updates come first
			case <-t.result:
			case <-t.gaveUp:
				r.runsOn = s.runsOn(t)
			case <-a.ctx.Done():
			case <-a.b.Done():
			}
			return cancelled, nil
		case <-a.ctx.Done():
			return cancelled, nil
		case <-a.b.Done():
			return sdk.PromptResponse{}, sdk.NewInternalError(map[string]any{"error": "session/prompt: the connection to ccproxy ended during the turn"})
		}
	}
	s.mu.Lock()
	interrupted := s.cancelled
	s.mu.Unlock()
	if interrupted {
		return cancelled, nil
	}
	if res.IsError {
		return sdk.PromptResponse{}, sdk.NewInternalError(map[string]any{"error": res.Text, "subtype": res.Subtype})
	}
	return sdk.PromptResponse{StopReason: res.Stop, Usage: res.Usage}, nil
}

// interrupt interrupts s's running turn, unless it is being interrupted
// (again after a failed interrupt). If that fails, the turn's prompt gives
// up waiting (gaveUp).
func (a *Agent) interrupt(s *session) {
	s.mu.Lock()
	t := s.turn
	if t == nil || t.ending || s.cancelled && !s.abandoned {
		s.mu.Unlock()
		return
	}
	s.cancelled = true
	t.interrupting.Add(1)
	s.mu.Unlock()
	defer t.interrupting.Done()
	select { // before the turn's session/send, the interrupt would find nothing to interrupt
	case <-t.sent:
	case <-a.ctx.Done():
		return
	}
	s.mu.Lock()
	unsent, id := t.unsent, s.id
	s.mu.Unlock()
	if unsent {
		return
	}
	ctx, cancel := context.WithTimeout(a.ctx, closeTimeout)
	defer cancel()
	err := a.b.Request(ctx, protocol.TypeSessionInterrupt, &protocol.SessionInterrupt{Session: id}, nil)
	if err == nil {
		return
	}
	if a.ctx.Err() != nil { // the agent is closing: its sessions go
		a.log.Debug("interrupt not sent: the agent is closing", "session", id)
		return
	}
	a.log.Warn("interrupting: the turn's prompt answers cancelled; the session takes no prompt until the turn ends", "session", id, "err", err)
	s.mu.Lock()
	if s.turn == t && !s.abandoned {
		s.abandoned = true
		close(t.gaveUp)
	}
	s.mu.Unlock()
}

// Cancel interrupts the session's running turn. The guard, in order,
// cancelled the prompts sent before it that have not begun their turn.
func (a *Agent) Cancel(_ context.Context, p sdk.CancelNotification) error {
	s, err := a.session(p.SessionId)
	if err != nil {
		return err
	}
	a.interrupt(s) // the prompts before it were cancelled by the guard (order)
	return nil
}

// order is the guard's hook, called with each message before the SDK gets
// it, in the order the editor sent them. It counts the session/prompt
// requests the SDK will hand to Prompt (those its own decoding and
// validation accept), and holds a session/cancel until every one of them
// has reached Prompt: the SDK runs requests in goroutines of their own
// but notifications in order, so a cancel sent right after a prompt could
// otherwise find no prompt to cancel and be lost.
func (a *Agent) order(line []byte) (code int, msg string) {
	switch gjson.GetBytes(line, "method").Str {
	case sdk.AgentMethodSessionPrompt:
		if !gjson.GetBytes(line, "id").Exists() {
			return 0, ""
		}
		// The SDK reads a block of a type it does not know as an empty text
		// block: refused here, where the type is still there to name.
		for i, b := range gjson.GetBytes(line, "params.prompt").Array() {
			switch t := b.Get("type").Str; t {
			case "text", "image", "audio", "resource_link", "resource":
			default:
				return -32602, fmt.Sprintf("Invalid params: prompt[%d]: unknown content block type %q (text, image, resource_link and resource are taken)", i, t)
			}
		}
		var m struct {
			Params sdk.PromptRequest `json:"params"`
		}
		if json.Unmarshal(line, &m) != nil || m.Params.Validate() != nil {
			return 0, ""
		}
		if s := a.lookup(string(m.Params.SessionId)); s != nil {
			s.mu.Lock()
			s.receiveLocked()
			s.mu.Unlock()
		}
	case sdk.AgentMethodSessionCancel:
		s := a.lookup(gjson.GetBytes(line, "params.sessionId").Str)
		if s == nil {
			return 0, ""
		}
		bound := time.NewTimer(closeTimeout) // a safety bound: Prompt is reached at once
		defer bound.Stop()
		for {
			// Once every prompt sent before this cancel has its number (and
			// none sent after it has one yet), those up to here are
			// cancelled (the running one by Cancel's interrupt).
			s.mu.Lock()
			behind := s.cancelBeforeLocked()
			s.mu.Unlock()
			if !behind {
				return 0, ""
			}
			select {
			case <-s.entered:
			case <-bound.C:
				a.log.Warn("session/cancel passed on before an earlier session/prompt reached the agent", "session", s.acpID)
				s.mu.Lock()
				s.resyncLocked() // in step again: that prompt never came
				s.mu.Unlock()
			case <-a.ctx.Done():
				return 0, ""
			}
		}
	}
	return 0, ""
}
