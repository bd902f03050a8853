package proxy

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/internal/testkit/mcptest"
	"github.com/ccproxy/ccproxy/mcpconfig/calllog"
	"github.com/ccproxy/ccproxy/mcpconfig/probe"
	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/proxy/mcphub"
	"github.com/ccproxy/ccproxy/proxy/toolfiles"
)

// probeSource is a fake mcphub.Source whose configurations carry the resolved
// configuration (mcphub.Config.Resolved), as mcphub.ConfigSource's do, but without
// a Watcher: set writes the files of an mcpEnv and resolves them at once.
// User servers (~/.claude.json) are active unless disabled; project
// servers (.mcp.json, an untrusted workspace) await approval.
type probeSource struct {
	t   testing.TB
	env *mcpEnv
	ch  chan struct{}

	mu  sync.Mutex
	cur *mcphub.Config
}

func newProbeSource(t testing.TB, user, project map[string]any, disabled ...string) *probeSource {
	t.Helper()
	s := &probeSource{t: t, env: newMCPEnv(t), ch: make(chan struct{}, 1)}
	s.set(user, project, disabled...)
	return s
}

// set rewrites the configuration files, resolves them and signals a change.
func (s *probeSource) set(user, project map[string]any, disabled ...string) {
	s.t.Helper()
	cfg := s.env.Resolve(s.t, user, project, disabled...)
	cur := mcphub.Convert(cfg)
	dir := s.env.FilesDir
	cur.Spawn = func() ([]string, func(), error) {
		f, err := cfg.MCPConfigFile(dir)
		if err != nil {
			return nil, nil, err
		}
		args := f.Args()
		if tools := cfg.AllowedTools(); len(tools) > 0 {
			args = append(append(args, "--allowedTools"), tools...)
		}
		return args, func() { f.Close() }, nil
	}
	s.mu.Lock()
	s.cur = cur
	s.mu.Unlock()
	select {
	case s.ch <- struct{}{}:
	default:
	}
}

func (s *probeSource) Current() *mcphub.Config {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur
}

func (s *probeSource) Changes() <-chan struct{} { return s.ch }

func (s *probeSource) Approve(name string) (string, error) {
	return "", protocol.Errorf(protocol.CodeBadRequest, "the test source records no approvals")
}

func (s *probeSource) Reject(name string) (string, error) { return s.Approve(name) }

// probeOpts are the prober's options in tests: a short probe timeout for
// the server that hangs, and a short grace for stdio servers.
func probeOpts() probe.ProberOptions {
	return probe.ProberOptions{Timeout: 2 * time.Second, CallTimeout: 5 * time.Minute, Grace: 100 * time.Millisecond,
		Env: func(string) (string, bool) { return "", false }}
}

// refusedURL is an http URL on a loopback port nothing listens on.
func refusedURL(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/mcp"
}

// authServer answers every request with 401.
func authServer(t *testing.T) string {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="test"`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// brokenServers are servers that fail, each in its own way.
func brokenServers(t *testing.T) map[string]any {
	return map[string]any{
		"missing": map[string]any{"command": filepath.Join(t.TempDir(), "no-such-command")},
		"refused": map[string]any{"type": "http", "url": refusedURL(t)},
		"exits":   map[string]any{"command": "sh", "args": []any{"-c", "echo boom-on-stderr >&2; exit 3"}},
		"hangs":   map[string]any{"command": "sleep", "args": []any{"30"}},
		"auth":    map[string]any{"type": "http", "url": authServer(t)},
		"ws":      map[string]any{"type": "ws", "url": "ws://127.0.0.1:1/mcp"},
	}
}

func merge(ms ...map[string]any) map[string]any {
	out := map[string]any{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

func helloCaps(t *testing.T, c *wsClient) []string {
	t.Helper()
	var hello protocol.Hello
	c.waitPush(0, protocol.TypeHello, &hello, nil)
	return hello.Capabilities
}

func probeResultOf(rs []protocol.ProbeResult, name string) *protocol.ProbeResult {
	for i := range rs {
		if rs[i].Name == name {
			return &rs[i]
		}
	}
	return nil
}

func callLog(t *testing.T, c *wsClient, data map[string]any) []protocol.LogEntry {
	t.Helper()
	var r protocol.MCPLogResult
	mustUnmarshal(t, c.do(protocol.TypeMCPLog, data), &r)
	if r.Entries == nil {
		t.Fatal("mcp/log: entries missing")
	}
	return r.Entries
}

// Without a resolved configuration and a call log the four requests are
// not offered: unknown_type, and hello does not announce them.
func TestMCPCallsNotWired(t *testing.T) {
	ts := startServer(t, Options{MCPOptions: MCPOptions{MCP: newTestSource(t, map[string]string{"alpha": `{"command":"a","args":[]}`})}})
	c := ts.dial(t)
	for _, cp := range []string{protocol.CapMCPProbe, protocol.CapMCPTools, protocol.CapMCPCall, protocol.CapMCPLog} {
		if slices.Contains(helloCaps(t, c), cp) {
			t.Errorf("hello offers %s, which is not wired", cp)
		}
	}
	for typ, data := range map[string]map[string]any{
		protocol.TypeMCPProbe: {},
		protocol.TypeMCPTools: {"name": "alpha"},
		protocol.TypeMCPCall:  {"name": "alpha", "tool": "x", "arguments": map[string]any{}},
		protocol.TypeMCPLog:   {},
	} {
		if e := c.doErr(typ, data); e.Code != protocol.CodeUnknownType {
			t.Errorf("%s: %+v, want unknown_type", typ, e)
		}
	}
}

// mcp/probe, mcp/tools, mcp/call and mcp/log against the go-sdk test
// server (streamable HTTP) and servers failing in every way the SPEC
// names; probe results change mcp/status; direct calls go to the call log.
func TestMCPProbeToolsCall(t *testing.T) {
	good := mcptest.ServeHTTP(t)
	src := newProbeSource(t,
		merge(brokenServers(t), map[string]any{
			"good": map[string]any{"type": "http", "url": good.URL},
			"off":  map[string]any{"type": "http", "url": good.URL},
		}),
		map[string]any{"waiting": map[string]any{"type": "http", "url": good.URL}},
		"off")
	logDir := t.TempDir()
	ts := startServer(t, Options{Project: src.env.Project, MCPOptions: MCPOptions{MCP: src, MCPProbe: probeOpts(), CallLogDir: logDir}})
	c := ts.dial(t)
	caps := helloCaps(t, c)
	for _, cp := range []string{protocol.CapMCPProbe, protocol.CapMCPTools, protocol.CapMCPCall, protocol.CapMCPLog} {
		if !slices.Contains(caps, cp) {
			t.Errorf("hello does not offer %s: %v", cp, caps)
		}
	}
	from := c.count()
	c.do(protocol.TypeMCPSubscribe, map[string]any{})
	st, _ := waitStatus(c, from, "first status", func(protocol.MCPStatus) bool { return true })
	if g := statusOf(st, "good"); g == nil || g.Status != protocol.MCPPending || g.Origin != protocol.OriginConfig {
		t.Errorf("before any probe (AutoProbe is off): %+v", g)
	}

	// mcp/probe of everything.
	from = c.count()
	var pr protocol.MCPProbeResult
	mustUnmarshal(t, c.do(protocol.TypeMCPProbe, map[string]any{}), &pr)
	names := []string{}
	for _, r := range pr.Results {
		names = append(names, r.Name)
	}
	if want := []string{"auth", "exits", "good", "hangs", "missing", "off", "refused", "waiting", "ws"}; !slices.Equal(names, want) {
		t.Fatalf("probe results for %v, want %v", names, want)
	}
	if g := probeResultOf(pr.Results, "good"); !g.OK || g.Status != protocol.MCPConnected || g.ServerInfo == nil || g.ServerInfo.Name != mcptest.ServerName ||
		g.ToolCount != int64(len(mcptest.ToolNames)) || g.ProbedAt.IsZero() {
		t.Errorf("good: %+v", g)
	}
	for name, want := range map[string]struct{ code, status string }{
		"missing": {protocol.ProbeCommandNotFound, protocol.MCPFailed},
		"refused": {protocol.ProbeConnectionRefused, protocol.MCPFailed},
		"exits":   {protocol.ProbeProcessExited, protocol.MCPFailed},
		"hangs":   {protocol.ProbeTimeout, protocol.MCPFailed},
		"auth":    {protocol.ProbeAuthRequired, ""},
		"ws":      {protocol.ProbeTransportUnsupported, protocol.MCPFailed},
		"waiting": {protocol.ProbeNotActive, protocol.MCPAwaitingApproval},
		"off":     {protocol.ProbeNotActive, protocol.MCPDisabled},
	} {
		r := probeResultOf(pr.Results, name)
		if r.OK || r.Error == nil || r.Error.Code != want.code || (want.status != "" && r.Status != want.status) {
			t.Errorf("%s: %+v, want %s (%s)", name, r, want.code, want.status)
		}
	}
	if r := probeResultOf(pr.Results, "exits"); r.Error == nil || !strings.Contains(r.Error.StderrTail, "boom-on-stderr") {
		t.Errorf("exits: no stderr tail: %+v", r.Error)
	}

	// The results are observations: in mcp/status before the reply.
	st, _ = waitStatus(c, from, "probe results", func(st protocol.MCPStatus) bool {
		g := statusOf(st, "good")
		return g != nil && g.Status == protocol.MCPConnected
	})
	if g := statusOf(st, "good"); g.Origin != protocol.OriginProbe || g.ToolCount == nil || *g.ToolCount != int64(len(mcptest.ToolNames)) ||
		g.ServerInfo == nil || g.ServerInfo.Name != mcptest.ServerName || g.ObservedAt.IsZero() || g.Transport != "http" {
		t.Errorf("good after the probe: %+v", g)
	}
	if m := statusOf(st, "missing"); m.Status != protocol.MCPFailed || m.Origin != protocol.OriginProbe || m.ErrorCode != protocol.ProbeCommandNotFound || m.Error == "" {
		t.Errorf("missing after the probe: %+v", m)
	}
	for name, want := range map[string]string{"waiting": protocol.MCPAwaitingApproval, "off": protocol.MCPDisabled} {
		if s := statusOf(st, name); s.Status != want || s.Origin != protocol.OriginConfig || s.ErrorCode != "" {
			t.Errorf("%s after the probe: %+v (config first)", name, s)
		}
	}
	var hst protocol.MCPStatus
	_, body := httpGet(t, "GET", ts.url+"/v1/mcp/status", http.Header{"Authorization": {"Bearer " + testToken}})
	mustUnmarshal(t, body, &hst)
	if g := statusOf(hst, "good"); g == nil || g.Origin != protocol.OriginProbe {
		t.Errorf("GET /v1/mcp/status after the probe: %s", body)
	}

	// mcp/probe of one server.
	mustUnmarshal(t, c.do(protocol.TypeMCPProbe, map[string]any{"name": "good"}), &pr)
	if len(pr.Results) != 1 || !pr.Results[0].OK {
		t.Errorf("probe good: %+v", pr)
	}

	// mcp/tools: the parameter tree of echo.
	var tr protocol.MCPToolsResult
	mustUnmarshal(t, c.do(protocol.TypeMCPTools, map[string]any{"name": "good"}), &tr)
	if tr.Server != "good" || len(tr.Tools) != len(mcptest.ToolNames) {
		t.Fatalf("tools of good: %d tools, server %q", len(tr.Tools), tr.Server)
	}
	var echo *protocol.Tool
	for i := range tr.Tools {
		if tr.Tools[i].Name == mcptest.ToolEcho {
			echo = &tr.Tools[i]
		}
	}
	if echo == nil || len(echo.Parameters) == 0 || echo.Parameters[0].Name != "message" || !echo.Parameters[0].Required || !json.Valid(echo.InputSchema) {
		t.Errorf("echo: %+v", echo)
	}

	// mcp/call: text, an error result, an image whose blob is served.
	var cr protocol.MCPCallResult
	mustUnmarshal(t, c.do(protocol.TypeMCPCall, map[string]any{"name": "good", "tool": mcptest.ToolEcho, "arguments": map[string]any{"message": "hi", "mode": "upper"}}), &cr)
	if cr.Server != "good" || cr.Tool != mcptest.ToolEcho || cr.IsError || !strings.HasPrefix(cr.Content, "HI\nreceived: ") || cr.DurationMs < 0 {
		t.Errorf("echo call: %+v", cr)
	}
	mustUnmarshal(t, c.do(protocol.TypeMCPCall, map[string]any{"name": "good", "tool": mcptest.ToolIsError, "arguments": map[string]any{}}), &cr)
	if !cr.IsError || !strings.Contains(cr.Content, mcptest.IsErrorText) {
		t.Errorf("is_error call: %+v", cr)
	}
	mustUnmarshal(t, c.do(protocol.TypeMCPCall, map[string]any{"name": "good", "tool": mcptest.ToolImage, "arguments": map[string]any{}}), &cr)
	if len(cr.Attachments) != 1 || cr.Attachments[0].URL == "" || cr.Attachments[0].Data != "" || !strings.Contains(cr.Content, "[image image/png") {
		t.Fatalf("image call: %+v", cr)
	}
	resp, blob := httpGet(t, "GET", ts.url+cr.Attachments[0].URL, http.Header{"Authorization": {"Bearer " + testToken}})
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/png" || !bytes.Equal(blob, mcptest.SmallPNG()) {
		t.Errorf("the image's blob: %s %s %d bytes", resp.Status, resp.Header.Get("Content-Type"), len(blob))
	}

	// Every error code of the four requests.
	for _, tc := range []struct {
		typ   string
		data  map[string]any
		code  protocol.Code
		probe string // details.probeCode
	}{
		{protocol.TypeMCPProbe, map[string]any{"name": "nope"}, protocol.CodeMCPServerNotFound, protocol.ProbeServerNotFound},
		{protocol.TypeMCPTools, map[string]any{"name": "nope"}, protocol.CodeMCPServerNotFound, protocol.ProbeServerNotFound},
		{protocol.TypeMCPTools, map[string]any{"name": "waiting"}, protocol.CodeMCPNotActive, protocol.ProbeNotActive},
		{protocol.TypeMCPTools, map[string]any{"name": "off"}, protocol.CodeMCPNotActive, protocol.ProbeNotActive},
		{protocol.TypeMCPTools, map[string]any{"name": "missing"}, protocol.CodeMCPCommandNotFound, protocol.ProbeCommandNotFound},
		{protocol.TypeMCPTools, map[string]any{"name": "refused"}, protocol.CodeMCPConnectionRefused, protocol.ProbeConnectionRefused},
		{protocol.TypeMCPTools, map[string]any{"name": "exits"}, protocol.CodeMCPProcessExited, protocol.ProbeProcessExited},
		{protocol.TypeMCPTools, map[string]any{"name": "hangs"}, protocol.CodeMCPTimeout, protocol.ProbeTimeout},
		{protocol.TypeMCPTools, map[string]any{"name": "auth"}, protocol.CodeMCPAuthRequired, protocol.ProbeAuthRequired},
		{protocol.TypeMCPTools, map[string]any{"name": "ws"}, protocol.CodeMCPTransportUnsupported, protocol.ProbeTransportUnsupported},
		{protocol.TypeMCPCall, map[string]any{"name": "nope", "tool": "echo", "arguments": map[string]any{}}, protocol.CodeMCPServerNotFound, protocol.ProbeServerNotFound},
		{protocol.TypeMCPCall, map[string]any{"name": "waiting", "tool": "echo", "arguments": map[string]any{}}, protocol.CodeMCPNotActive, protocol.ProbeNotActive},
		{protocol.TypeMCPCall, map[string]any{"name": "missing", "tool": "echo", "arguments": map[string]any{}}, protocol.CodeMCPCommandNotFound, protocol.ProbeCommandNotFound},
		{protocol.TypeMCPCall, map[string]any{"name": "exits", "tool": "echo", "arguments": map[string]any{}}, protocol.CodeMCPProcessExited, protocol.ProbeProcessExited},
		{protocol.TypeMCPCall, map[string]any{"name": "good", "tool": "no_such_tool", "arguments": map[string]any{}}, protocol.CodeMCPToolNotFound, ""},
	} {
		e := c.doErr(tc.typ, tc.data)
		if e.Code != tc.code || !strings.HasPrefix(e.Message, tc.typ+": ") {
			t.Errorf("%s %v: %+v, want %s", tc.typ, tc.data, e, tc.code)
			continue
		}
		if tc.probe != "" && (e.Details == nil || e.Details.ProbeCode != tc.probe) {
			t.Errorf("%s %v: details %+v, want probeCode %s", tc.typ, tc.data, e.Details, tc.probe)
		}
		if tc.code == protocol.CodeMCPProcessExited && !strings.Contains(e.Details.StderrTail, "boom-on-stderr") {
			t.Errorf("%s %v: no stderr tail in %+v", tc.typ, tc.data, e.Details)
		}
	}
	e := c.doErr(protocol.TypeMCPCall, map[string]any{"name": "good", "tool": mcptest.ToolEcho, "arguments": map[string]any{"mode": "loud", "repeat": 9}})
	if e.Code != protocol.CodeMCPInvalidArguments || e.Details == nil {
		t.Fatalf("invalid arguments: %+v", e)
	}
	got := map[string]string{}
	for _, f := range e.Details.Fields {
		got[f.Path] = f.Code
		if f.Message == "" {
			t.Errorf("field %s without a message", f.Path)
		}
	}
	if want := map[string]string{"message": probe.ParamRequired, "mode": probe.ParamEnumInvalid, "repeat": probe.ParamConstraintViolated}; !equalMaps(got, want) {
		t.Errorf("fields %v, want %v", got, want)
	}

	// The call log has the three calls that got a result, nothing else.
	entries := callLog(t, c, map[string]any{})
	var tools []string
	for _, e := range entries {
		tools = append(tools, e.Tool)
		if e.Kind != protocol.LogKindDirect || e.Server != "good" || e.Session != "" || e.Input != nil || e.Output != nil || e.DurationMs == nil || e.ResultBytes <= 0 || e.Time.IsZero() {
			t.Errorf("entry %+v", e)
		}
	}
	if want := []string{mcptest.ToolEcho, mcptest.ToolIsError, mcptest.ToolImage}; !slices.Equal(tools, want) {
		t.Errorf("logged calls %v, want %v", tools, want)
	}
	if !entries[1].IsError || entries[0].IsError {
		t.Errorf("isError of the entries: %+v", entries)
	}
	if img := entries[2]; img.ResultBytes < int64(len(mcptest.SmallPNG())) {
		t.Errorf("the image call's resultBytes %d does not count the image (%d bytes)", img.ResultBytes, len(mcptest.SmallPNG()))
	}
	files, _ := os.ReadDir(logDir)
	if len(files) != 1 || !strings.HasSuffix(files[0].Name(), ".jsonl") {
		t.Errorf("call log directory holds %v", files)
	}
	if e := c.doErr(protocol.TypeMCPLog, map[string]any{"limit": 0}); e.Code != protocol.CodeBadRequest {
		t.Errorf("limit 0: %+v", e)
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// With AutoProbe the proxy probes active servers at start and, after a
// configuration change, those whose definition is new or changed: the
// status knows them before any session runs.
func TestMCPAutoProbe(t *testing.T) {
	good := mcptest.ServeHTTP(t)
	missing := filepath.Join(t.TempDir(), "no-such-command")
	src := newProbeSource(t, map[string]any{
		"good":    map[string]any{"type": "http", "url": good.URL},
		"missing": map[string]any{"command": missing},
	}, map[string]any{"waiting": map[string]any{"type": "http", "url": good.URL}})
	ts := startServer(t, Options{Project: src.env.Project, MCPOptions: MCPOptions{MCP: src, MCPProbe: probeOpts(), AutoProbe: true}})
	c := ts.dial(t)
	c.do(protocol.TypeMCPSubscribe, map[string]any{})
	st, _ := waitStatus(c, 0, "good and missing probed", func(st protocol.MCPStatus) bool {
		g, m := statusOf(st, "good"), statusOf(st, "missing")
		return g != nil && m != nil && g.Origin == protocol.OriginProbe && m.Origin == protocol.OriginProbe
	})
	g := *statusOf(st, "good")
	if g.Status != protocol.MCPConnected || g.ToolCount == nil || *g.ToolCount != int64(len(mcptest.ToolNames)) {
		t.Errorf("good: %+v", g)
	}
	if m := statusOf(st, "missing"); m.Status != protocol.MCPFailed || m.ErrorCode != protocol.ProbeCommandNotFound {
		t.Errorf("missing: %+v", m)
	}
	if w := statusOf(st, "waiting"); w.Status != protocol.MCPAwaitingApproval || w.Origin != protocol.OriginConfig {
		t.Errorf("waiting: %+v", w)
	}

	// missing gets a working definition and good2 is added; good is left alone.
	from := c.count()
	src.set(map[string]any{
		"good":    map[string]any{"type": "http", "url": good.URL},
		"missing": map[string]any{"type": "http", "url": good.URL},
		"good2":   map[string]any{"type": "http", "url": good.URL},
	}, nil)
	st, _ = waitStatus(c, from, "missing and good2 connected", func(st protocol.MCPStatus) bool {
		m, g2 := statusOf(st, "missing"), statusOf(st, "good2")
		return m != nil && g2 != nil && m.Status == protocol.MCPConnected && g2.Status == protocol.MCPConnected
	})
	if m := statusOf(st, "missing"); m.Origin != protocol.OriginProbe || m.ErrorCode != "" || m.Error != "" {
		t.Errorf("missing after the change: %+v", m)
	}
	if g2 := statusOf(st, "good"); !g2.ObservedAt.Equal(g.ObservedAt) {
		t.Errorf("good was probed again although its definition did not change: %v then %v", g.ObservedAt, g2.ObservedAt)
	}
}

// toolResultSize is what the call log counts as a tool_result's size: its
// text and the decoded bytes of its attachments.
func toolResultSize(t *testing.T, evs []protocol.SessionEvent, id string) int64 {
	t.Helper()
	for _, tr := range toolResults(t, evs) {
		if tr.ToolUseID != id {
			continue
		}
		var text string
		mustUnmarshal(t, tr.Content, &text)
		n := int64(len(text))
		for _, a := range tr.Attachments {
			n += a.Size
		}
		return n
	}
	t.Fatalf("no tool_result for %s", id)
	return 0
}

// Every session's MCP tool calls (tool_use paired with tool_result) go to
// the call log with the direct calls; mcp/log filters by server and limit;
// inputs and outputs are kept only with CallLogIO.
func TestMCPCallLog(t *testing.T) {
	good := mcptest.ServeHTTP(t)
	for _, withIO := range []bool{false, true} {
		name := "without IO"
		if withIO {
			name = "with IO"
		}
		t.Run(name, func(t *testing.T) {
			src := newProbeSource(t, map[string]any{
				"testmcp": map[string]any{"type": "http", "url": good.URL},
				"other":   map[string]any{"type": "http", "url": good.URL},
			}, nil)
			ts := startServer(t, Options{Project: src.env.Project, MCPOptions: MCPOptions{MCP: src, MCPProbe: probeOpts(), CallLogDir: t.TempDir(), CallLogIO: withIO}})
			c := ts.dial(t)
			s := c.create(nil)
			// The fake calls mcp__testmcp__image and gets an image back.
			evs := c.turn(s, "image")
			size := toolResultSize(t, evs, "toolu_img")
			c.turn(s, "plain text, no tool")
			entries := callLog(t, c, map[string]any{})
			if len(entries) != 1 {
				t.Fatalf("after the session's turns: %+v", entries)
			}
			se := entries[0]
			if se.Kind != protocol.LogKindSession || se.Session != s || se.Server != "testmcp" || se.Tool != "image" || se.ToolUseID != "toolu_img" ||
				se.IsError || se.DurationMs == nil || *se.DurationMs < 0 || se.ResultBytes != size || se.Time.IsZero() {
				t.Errorf("session entry %+v (want resultBytes %d)", se, size)
			}
			if withIO {
				if string(se.Input) != "{}" || se.Output == nil || !strings.HasPrefix(*se.Output, "a picture") {
					t.Errorf("with IO: input %s, output %v", se.Input, se.Output)
				}
			} else if se.Input != nil || se.Output != nil {
				t.Errorf("without IO: input %s, output %v", se.Input, se.Output)
			}

			for _, call := range []struct {
				server, tool string
				args         map[string]any
			}{
				{"testmcp", mcptest.ToolText, map[string]any{}},
				{"other", mcptest.ToolText, map[string]any{}},
				{"other", mcptest.ToolEcho, map[string]any{"message": "logged"}},
				{"other", mcptest.ToolIsError, map[string]any{}},
			} {
				c.do(protocol.TypeMCPCall, map[string]any{"name": call.server, "tool": call.tool, "arguments": call.args})
			}
			type key struct{ kind, server, tool string }
			keys := func(es []protocol.LogEntry) []key {
				var out []key
				for _, e := range es {
					out = append(out, key{e.Kind, e.Server, e.Tool})
				}
				return out
			}
			for _, tc := range []struct {
				data map[string]any
				want []key
			}{
				{map[string]any{}, []key{{"session", "testmcp", "image"}, {"direct", "testmcp", "text"}, {"direct", "other", "text"}, {"direct", "other", "echo"}, {"direct", "other", "is_error"}}},
				{map[string]any{"server": "testmcp"}, []key{{"session", "testmcp", "image"}, {"direct", "testmcp", "text"}}},
				{map[string]any{"server": "other", "limit": 2}, []key{{"direct", "other", "echo"}, {"direct", "other", "is_error"}}},
				{map[string]any{"limit": 1}, []key{{"direct", "other", "is_error"}}},
				{map[string]any{"server": "nobody"}, nil},
			} {
				if got := keys(callLog(t, c, tc.data)); !slices.Equal(got, tc.want) {
					t.Errorf("mcp/log %v: %v, want %v", tc.data, got, tc.want)
				}
			}
			last := callLog(t, c, map[string]any{"server": "other", "limit": 2})
			echo := last[0]
			if !last[1].IsError || echo.IsError {
				t.Errorf("isError: %+v", last)
			}
			if withIO {
				if !strings.Contains(string(echo.Input), `"message":"logged"`) || echo.Output == nil || !strings.HasPrefix(*echo.Output, "logged\n") {
					t.Errorf("direct call with IO: input %s, output %v", echo.Input, echo.Output)
				}
			} else if echo.Input != nil || echo.Output != nil {
				t.Errorf("direct call without IO: input %s, output %v", echo.Input, echo.Output)
			}
		})
	}
}

// MaxMCPRequests bounds the requests running at once (limit_exceeded
// beyond); shutting down cancels a call in progress instead of waiting
// for it.
func TestMCPRequestsBoundAndCancelled(t *testing.T) {
	good := mcptest.ServeHTTP(t)
	src := newProbeSource(t, map[string]any{"good": map[string]any{"type": "http", "url": good.URL}}, nil)
	ts := startServer(t, Options{Project: src.env.Project, MCPOptions: MCPOptions{MCP: src, MCPProbe: probeOpts(), CallLogDir: t.TempDir(), MaxMCPRequests: 1}})
	c := ts.dial(t)
	// A call of two minutes (the test's wait limit is one): the proxy
	// must not wait for it when it shuts down.
	slow := c.send(protocol.TypeMCPCall, map[string]any{"name": "good", "tool": mcptest.ToolSlow, "arguments": map[string]any{"ms": 120000}})
	if e := c.doErr(protocol.TypeMCPLog, map[string]any{}); e.Code != protocol.CodeLimitExceeded || !strings.Contains(e.Message, "1 MCP requests") {
		t.Errorf("a second request while one runs: %+v", e)
	}
	if err := ts.stop(); err != nil {
		t.Fatal(err)
	}
	f := c.reply(slow)
	if f.OK == nil || *f.OK || f.Error == nil || f.Error.Code != protocol.CodeShuttingDown {
		t.Errorf("the slow call's reply: %s", f.raw)
	}
}

// End to end: the real CLI, npm server-everything and the go-sdk test
// server over stdio. The proxy probes both at start (no session yet);
// mcp/probe, mcp/tools and mcp/call work against them (an image result's
// blob is served over HTTP); a session turn that calls an MCP tool and the
// direct calls are in mcp/log.
func TestE2EMCPProbeToolsCallLog(t *testing.T) {
	t.Parallel()
	e := startE2E(t, Options{MCPOptions: MCPOptions{AutoProbe: true, CallLogDir: t.TempDir()}})
	c := e.dial(t)
	caps := helloCaps(t, c)
	for _, cp := range []string{protocol.CapMCPProbe, protocol.CapMCPTools, protocol.CapMCPCall, protocol.CapMCPLog} {
		if !slices.Contains(caps, cp) {
			t.Errorf("hello does not offer %s: %v", cp, caps)
		}
	}
	c.do(protocol.TypeMCPSubscribe, map[string]any{})
	st, _ := waitStatus(c, 0, "both servers probed at start", func(st protocol.MCPStatus) bool {
		a, b := statusOf(st, "everything"), statusOf(st, "testmcp")
		return a != nil && b != nil && a.Origin == protocol.OriginProbe && b.Origin == protocol.OriginProbe
	})
	for _, name := range []string{"everything", "testmcp"} {
		if s := statusOf(st, name); s.Status != protocol.MCPConnected || s.ToolCount == nil || *s.ToolCount == 0 || s.ServerInfo == nil {
			t.Errorf("%s after the start-up probe: %+v", name, s)
		}
	}

	var pr protocol.MCPProbeResult
	mustUnmarshal(t, c.do(protocol.TypeMCPProbe, map[string]any{}), &pr)
	if len(pr.Results) != 2 || !pr.Results[0].OK || !pr.Results[1].OK || pr.Results[1].ServerInfo.Name != mcptest.ServerName {
		t.Errorf("mcp/probe: %+v", pr)
	}

	var tr protocol.MCPToolsResult
	mustUnmarshal(t, c.do(protocol.TypeMCPTools, map[string]any{"name": "everything"}), &tr)
	params := map[string][]protocol.Parameter{}
	for _, tool := range tr.Tools {
		params[tool.Name] = tool.Parameters
	}
	if sum := params["get-sum"]; len(sum) != 2 || sum[0].Name != "a" || sum[0].Type != "number" || !sum[0].Required || sum[1].Name != "b" {
		t.Errorf("get-sum parameters: %+v", sum)
	}

	var cr protocol.MCPCallResult
	mustUnmarshal(t, c.do(protocol.TypeMCPCall, map[string]any{"name": "everything", "tool": "get-tiny-image", "arguments": map[string]any{}}), &cr)
	if len(cr.Attachments) != 1 || cr.Attachments[0].URL != toolfiles.BlobPath+cr.Attachments[0].SHA256 {
		t.Fatalf("get-tiny-image: %+v", cr)
	}
	a := cr.Attachments[0]
	resp, body := httpGet(t, "GET", e.url+a.URL, http.Header{"Authorization": {"Bearer " + testToken}})
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/png" || int64(len(body)) != a.Size || !bytes.HasPrefix(body, []byte("\x89PNG")) {
		t.Errorf("the image's blob: %s %s %d bytes (want %d)", resp.Status, resp.Header.Get("Content-Type"), len(body), a.Size)
	}
	mustUnmarshal(t, c.do(protocol.TypeMCPCall, map[string]any{"name": "everything", "tool": "get-sum", "arguments": map[string]any{"a": 2, "b": 3}}), &cr)
	if cr.IsError || !strings.Contains(cr.Content, "5") {
		t.Errorf("get-sum: %+v", cr)
	}
	if e := c.doErr(protocol.TypeMCPCall, map[string]any{"name": "everything", "tool": "get-sum", "arguments": map[string]any{"a": "two"}}); e.Code != protocol.CodeMCPInvalidArguments || e.Details == nil || len(e.Details.Fields) != 2 {
		t.Errorf("get-sum with bad arguments: %+v", e)
	}
	mustUnmarshal(t, c.do(protocol.TypeMCPCall, map[string]any{"name": "testmcp", "tool": mcptest.ToolText, "arguments": map[string]any{}}), &cr)
	if cr.Content != mcptest.OneText {
		t.Errorf("testmcp text: %+v", cr)
	}

	// A turn in which the CLI calls an MCP tool.
	s := c.create(nil)
	evs := c.turn(s, "a TINY image")
	trs := toolResults(t, evs)
	if len(trs) != 1 || trs[0].MCP == nil || trs[0].MCP.Tool != "get-tiny-image" {
		t.Fatalf("tool results of the turn: %+v", trs)
	}
	size := toolResultSize(t, evs, trs[0].ToolUseID)

	entries := callLog(t, c, map[string]any{"server": "everything"})
	var kinds []string
	for _, en := range entries {
		kinds = append(kinds, en.Kind+" "+en.Tool)
	}
	if want := []string{"direct get-tiny-image", "direct get-sum", "session get-tiny-image"}; !slices.Equal(kinds, want) {
		t.Fatalf("mcp/log everything: %v, want %v", kinds, want)
	}
	se := entries[2]
	if se.Session != s || se.ToolUseID != trs[0].ToolUseID || se.DurationMs == nil || se.ResultBytes != size || se.IsError || se.Input != nil || se.Output != nil {
		t.Errorf("the session's entry %+v (want resultBytes %d)", se, size)
	}
	if all := callLog(t, c, map[string]any{}); len(all) != 4 || all[2].Server != "testmcp" {
		t.Errorf("mcp/log: %+v", all)
	}

	// The session's report, newer than the probes, wins.
	waitStatus(c, 0, "everything reported by the session", func(st protocol.MCPStatus) bool {
		a := statusOf(st, "everything")
		return a != nil && a.Origin == protocol.OriginSession && a.Status == protocol.MCPConnected
	})
}

// The call log holds no secret of ccproxy's environment: a direct call's
// arguments and output are masked before they are written (the file on
// disk), and mcp/log masks what it reads (an entry written before the
// secret was known, here by an earlier process).
func TestMCPCallLogMasksEnvSecrets(t *testing.T) {
	const secret = "log-secret-Hq7Zt2Vw9Kx4"
	t.Setenv("CCPROXY_TEST_LOG_TOKEN", secret)
	good := mcptest.ServeHTTP(t)
	src := newProbeSource(t, map[string]any{"testmcp": map[string]any{"type": "http", "url": good.URL}}, nil)
	dir := t.TempDir()
	path := calllog.ProjectFile(dir, src.env.Project)
	old, err := calllog.Open(path, calllog.Options{StoreIO: true})
	if err != nil {
		t.Fatal(err)
	}
	out := "earlier output with " + secret
	if err := old.Append(calllog.Entry{Time: time.Now(), Kind: calllog.KindDirect, Server: "testmcp", Tool: "echo",
		Input: json.RawMessage(`{"message":"` + secret + `"}`), Output: &out}); err != nil {
		t.Fatal(err)
	}
	old.Close()
	ts := startServer(t, Options{Project: src.env.Project, MCPOptions: MCPOptions{MCP: src, MCPProbe: probeOpts(), CallLogDir: dir, CallLogIO: true}})
	c := ts.dial(t)
	c.do(protocol.TypeMCPCall, map[string]any{"name": "testmcp", "tool": mcptest.ToolEcho, "arguments": map[string]any{"message": "now " + secret}})
	entries := callLog(t, c, map[string]any{})
	if len(entries) != 2 {
		t.Fatalf("mcp/log: %d entries, want 2", len(entries))
	}
	for _, e := range entries {
		b, _ := json.Marshal(e)
		if strings.Contains(string(b), secret) || !strings.Contains(string(e.Input), "***") || e.Output == nil || !strings.Contains(*e.Output, "***") {
			t.Errorf("mcp/log entry not masked: %s", b)
		}
	}
	ts.stop() // the call log closed
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), secret); n != 2 { // the earlier entry's input and output, as they were written
		t.Errorf("the call log file holds the secret %d times, want 2 (the earlier entry's only): %s", n, b)
	}
}
