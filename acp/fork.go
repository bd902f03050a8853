package acp

import (
	"context"
	"encoding/json"
	"fmt"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ccproxy/ccproxy/protocol"
)

// UnstableForkSession is session/fork (ACP, unstable; offered in
// initialize as sessionCapabilities.fork): a new session that continues
// the conversation of sessionId as a new Claude session, the proxy's
// session/create {resume, fork} (claude --resume ID --fork-session). The
// original is left as it was: a session of this agent (open or suspended;
// its Claude session, once claude has said it) goes on as before, a
// stored Claude session (found as session/resume finds it, so only when
// the proxy serves its history) stays as it is on disk. Anything else is
// invalid params naming sessionId. The fork's ACP id is its ccproxy
// session id, as for session/new, and it starts in the default mode; its
// Claude session id is the new one claude reports at its first prompt.
func (a *Agent) UnstableForkSession(ctx context.Context, p sdk.UnstableForkSessionRequest) (sdk.UnstableForkSessionResponse, error) {
	const method = "session/fork"
	fail := func(err error) (sdk.UnstableForkSessionResponse, error) {
		return sdk.UnstableForkSessionResponse{}, err
	}
	if err := absCwd(method, p.Cwd); err != nil {
		return fail(err)
	}
	list, err := convertJSON[[]sdk.McpServer](p.McpServers)
	if err != nil {
		return fail(sdk.NewInvalidParams(map[string]any{"error": method + ": mcpServers: " + err.Error()}))
	}
	servers, err := clientServers(method, list)
	if err != nil {
		return fail(err)
	}
	var claudeID string
	switch s := a.lookup(string(p.SessionId)); {
	case s != nil:
		if claudeID = s.claudeSession(); claudeID == "" {
			return fail(sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("%s: sessionId: session %s has no conversation to fork yet (claude has not said its session id: send it a prompt first)", method, p.SessionId)}))
		}
	case !hasHistory(ctx, a.b):
		return fail(sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("%s: sessionId: %q is not a session of this agent (and the proxy serves no history to find a stored one in)", method, p.SessionId)}))
	default:
		if err := replayStored(ctx, a.b, a.conn, method, p.SessionId, p.Cwd, nil); err != nil {
			return fail(err)
		}
		claudeID = string(p.SessionId)
	}
	s, res, err := a.open(ctx, method, &protocol.SessionCreate{Cwd: p.Cwd, Resume: claudeID, Fork: true, MCPServers: servers}, "", nil)
	if err != nil {
		return fail(err)
	}
	a.log.Info("forked a session", "session", s.acpID, "from", p.SessionId, "claudeSession", claudeID)
	config, err := convertJSON[[]sdk.UnstableSessionConfigOption](s.answeredConfig())
	if err != nil { // the same JSON shape: not expected
		a.log.Error("session/fork: config options", "err", err)
	}
	return sdk.UnstableForkSessionResponse{SessionId: s.acpID, Modes: defaultModes(), ConfigOptions: config,
		Meta: mcpMeta(res.MCPServers)}, nil
}

// convertJSON turns v into a T of the same JSON shape (the SDK's unstable
// types and their stable twins).
func convertJSON[T any](v any) (T, error) {
	var out T
	b, err := json.Marshal(v)
	if err == nil {
		err = json.Unmarshal(b, &out)
	}
	return out, err
}
