package proxy

// The models part of a Session: what claude offers and runs is kept by a
// models.State (package proxy/models), guarded by Session.mu; this file
// has session/setModel (claude's set_model control request) and
// session/setPermissionMode (set_permission_mode; the mode is kept by the
// broker, package proxy/broker). Both are reported in session/state,
// pushed through Session.pushStateLocked. sessionModels.setMu serializes
// Session.setModel (taken before Session.mu, held across the control
// request). Measured on the real CLI 2.1.329: docs/CLI-NOTES.md
// ("set_model").

import (
	"cmp"
	"context"
	"errors"
	"sync"

	"github.com/tidwall/gjson"

	"github.com/ccproxy/ccproxy/internal/textutil"
	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/proxy/models"
)

// sessionModels is the models part of a session: its models.State
// (guarded by Session.mu) and the lock of Session.setModel.
type sessionModels struct {
	setMu sync.Mutex // serializes Session.setModel (taken before Session.mu)
	models.State
}

// setModel switches the session's model with claude's set_model control
// request, for the next turns. Claude's refusal is a cli_error with its
// message. While the session restarts (or is suspended: it resumes) there
// is no claude to ask: the model is kept for the new process, which is
// launched with it. models.setMu
// serializes the calls, so the session's model is the last one claude
// answered. Subscribers get session/state with the new model.
func (s *Session) setModel(ctx context.Context, model string) (protocol.SessionSetModelResult, error) {
	const what = "session/setModel"
	s.models.setMu.Lock()
	defer s.models.setMu.Unlock()
	s.mu.Lock()
	switch {
	case s.proc.gone():
		s.mu.Unlock()
		return protocol.SessionSetModelResult{}, protocol.Errorf(protocol.CodeSessionExited, "%s: session %s has exited", what, s.id)
	case s.restarts.active:
		defer s.mu.Unlock()
		if s.models.Choose(model, "") {
			s.pushStateLocked("")
		}
		s.suspend.WakeLocked() // a suspended session resumes, with model
		return protocol.SessionSetModelResult{Model: model}, nil
	}
	s.mu.Unlock()
	resp, err := s.controlWait(ctx, "set_model", map[string]any{"model": model})
	if err != nil {
		var ce *cliError
		if errors.As(err, &ce) {
			return protocol.SessionSetModelResult{}, protocol.Errorf(protocol.CodeCLIError, "%s: claude refused model %q: %s", what, model, textutil.Truncate(ce.Msg, 500))
		}
		return protocol.SessionSetModelResult{}, controlError(what, err)
	}
	resolved := gjson.GetBytes(resp, "model").String()
	if !models.ValidValue(resolved) {
		resolved = ""
	}
	s.mu.Lock()
	if s.models.Choose(model, resolved) {
		s.pushStateLocked("")
	}
	s.mu.Unlock()
	s.log.Info("model set", "model", model, "resolved", resolved)
	return protocol.SessionSetModelResult{Model: model, ResolvedModel: resolved}, nil
}

// setPermissionMode switches the session's permission mode with claude's
// set_permission_mode control request. Claude's refusal (bypassPermissions
// when the session was not started in it, or as root) is a cli_error with
// claude's message. While the session restarts there is no claude to ask:
// the mode is kept for the new process, which starts in it
// (--permission-mode, claudeArgs), and the proxy answers as claude would:
// the launch flag takes every mode but bypassPermissions, which claude
// takes only when launched in it (the new process is launched in the
// session's current mode) and never as root, so bypassPermissions is a
// cli_error unless the session is in it already. Subscribers get
// session/state with the new mode.
func (s *Session) setPermissionMode(ctx context.Context, mode string) (string, error) {
	const what = "session/setPermissionMode"
	s.mu.Lock()
	switch {
	case s.proc.gone():
		s.mu.Unlock()
		return "", protocol.Errorf(protocol.CodeSessionExited, "%s: session %s has exited", what, s.id)
	case s.restarts.active:
		defer s.mu.Unlock()
		if mode == protocol.PermissionModeBypass && s.broker.Mode() != protocol.PermissionModeBypass {
			return "", protocol.Errorf(protocol.CodeCLIError, "%s: claude refused mode %q: the session is restarting and its new claude is launched in mode %q; claude takes bypassPermissions only when launched with it (and never as root)", what, mode, cmp.Or(s.broker.Mode(), protocol.PermissionModeDefault))
		}
		if s.broker.SetMode(mode) {
			s.pushStateLocked("")
		}
		s.suspend.WakeLocked() // a suspended session resumes, in mode
		return mode, nil
	}
	s.mu.Unlock()
	resp, err := s.controlWait(ctx, "set_permission_mode", map[string]any{"mode": mode})
	if err != nil {
		var ce *cliError
		if errors.As(err, &ce) {
			return "", protocol.Errorf(protocol.CodeCLIError, "%s: claude refused mode %q: %s", what, mode, textutil.Truncate(ce.Msg, 500))
		}
		return "", controlError(what, err)
	}
	got := gjson.GetBytes(resp, "mode").String()
	if got == "" {
		got = mode
	}
	s.mu.Lock()
	if s.broker.SetMode(got) {
		s.pushStateLocked("")
	}
	s.mu.Unlock()
	s.log.Info("permission mode set", "mode", got)
	return got, nil
}
