//go:build unix

package probe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ccproxy/ccproxy/internal/childproc"
	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/internal/testkit/mcptest"
	"github.com/ccproxy/ccproxy/mcpconfig"
	"github.com/ccproxy/ccproxy/protocol"
)

// pids collects the process groups a Prober starts, so a test can check
// that none is left.
type pids struct {
	mu   sync.Mutex
	list []int
}

func (p *pids) add(pid int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.list = append(p.list, pid)
}

// track makes prober report its processes to a new pids.
func track(prober *Prober) *pids {
	p := &pids{}
	prober.onStart = p.add
	return p
}

// assertGone fails for every started process group that still has a live
// process. It does not wait: the Prober must have waited already.
func (p *pids) assertGone(t testing.TB, wantStarted int) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if wantStarted >= 0 && len(p.list) != wantStarted {
		t.Errorf("%d server processes were started, want %d", len(p.list), wantStarted)
	}
	for _, pid := range p.list {
		if left := testkit.GroupMembers(pid); len(left) > 0 {
			t.Errorf("process group %d still has live processes after the call returned: %v", pid, left)
			_ = testkit.KillGroup(pid, 5*time.Second)
		}
	}
}

// sseServer serves the test MCP server over the (2024-11-05) SSE transport.
func sseServer(t testing.TB) *httptest.Server {
	srv := mcptest.NewServer()
	ts := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	return ts
}

// TestProbeRealServers probes the npm reference servers and the go-sdk
// test server over stdio, streamable HTTP and SSE, all at once.
func TestProbeRealServers(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	httpSrv := mcptest.ServeHTTP(t)
	sse := sseServer(t)
	cfg := probeConfig(t, map[string]any{
		"everything": stdio(nodeBin(t, "mcp-server-everything")),
		"filesystem": stdio(nodeBin(t, "mcp-server-filesystem"), work),
		"memory": map[string]any{"command": nodeBin(t, "mcp-server-memory"), "args": []string{},
			"env": map[string]string{"MEMORY_FILE_PATH": filepath.Join(work, "memory.jsonl")}},
		"testmcp":      stdio(mcptest.Command(t)),
		"testmcp-http": map[string]any{"type": "http", "url": httpSrv.URL},
		"testmcp-sse":  map[string]any{"type": "sse", "url": sse.URL},
	}, nil)
	p := testProber(t, nil)
	started := track(p)
	results := p.ProbeAll(context.Background(), cfg)
	started.assertGone(t, 4)
	checkProbeShape(t, results...)

	want := map[string]struct {
		server string
		tools  []string // some of its tools
		count  int      // 0: not checked
	}{
		"everything":   {"mcp-servers/everything", []string{"echo", "get-sum", "get-tiny-image"}, 0},
		"filesystem":   {"secure-filesystem-server", []string{"read_text_file", "write_file", "list_directory"}, 0},
		"memory":       {"memory-server", []string{"create_entities", "read_graph"}, 9},
		"testmcp":      {mcptest.ServerName, mcptest.ToolNames, len(mcptest.ToolNames)},
		"testmcp-http": {mcptest.ServerName, mcptest.ToolNames, len(mcptest.ToolNames)},
		"testmcp-sse":  {mcptest.ServerName, mcptest.ToolNames, len(mcptest.ToolNames)},
	}
	if len(results) != len(want) {
		t.Fatalf("%d results, want %d", len(results), len(want))
	}
	for _, r := range results {
		w := want[r.Name]
		if !r.OK || r.Status != StatusConnected || r.Error != nil {
			t.Errorf("%s: ok=%v status=%s error=%+v", r.Name, r.OK, r.Status, r.Error)
			continue
		}
		if r.ServerInfo == nil || r.ServerInfo.Name != w.server {
			t.Errorf("%s: serverInfo %+v, want name %q", r.Name, r.ServerInfo, w.server)
		}
		if r.ProtocolVersion == "" || len(r.Capabilities) == 0 {
			t.Errorf("%s: protocolVersion %q, capabilities %s", r.Name, r.ProtocolVersion, r.Capabilities)
		}
		var names []string
		for _, tool := range r.Tools {
			names = append(names, tool.Name)
		}
		for _, n := range w.tools {
			if !slices.Contains(names, n) {
				t.Errorf("%s: tool %q missing from %v", r.Name, n, names)
			}
		}
		if w.count > 0 && int(r.ToolCount) != w.count {
			t.Errorf("%s: toolCount %d, want %d", r.Name, r.ToolCount, w.count)
		}
		l := r.LatencyMs
		if l.Total <= 0 || l.Initialize == nil || l.Tools == nil || *l.Initialize <= 0 || *l.Initialize > l.Total {
			t.Errorf("%s: latencies %+v", r.Name, l)
		}
		if r.Transport == "stdio" && l.Connect == nil {
			t.Errorf("%s: no connect latency", r.Name)
		}
		if r.Scope != "extra" || r.ProbedAt.IsZero() {
			t.Errorf("%s: scope %q probedAt %v", r.Name, r.Scope, r.ProbedAt)
		}
	}
	for _, r := range results {
		if strings.HasPrefix(r.Name, "testmcp") {
			var uris []string
			for _, res := range r.Resources {
				uris = append(uris, res.URI)
			}
			if !slices.Contains(uris, mcptest.ResourceTextURI) || r.LatencyMs.Resources == nil {
				t.Errorf("%s: resources %v", r.Name, uris)
			}
		}
		if r.Name == "everything" && (len(r.Prompts) == 0 || r.LatencyMs.Prompts == nil) {
			t.Errorf("everything: prompts %v", r.Prompts)
		}
	}
}

// authServer answers every MCP request with 401; meta says where (if
// anywhere) it publishes OAuth protected-resource metadata.
func authServer(t testing.TB, meta string) *httptest.Server {
	mux := http.NewServeMux()
	var ts *httptest.Server
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		h := `Bearer realm="mcp"`
		if meta == "header" {
			h += `, resource_metadata="` + ts.URL + `/meta/x"`
		}
		w.Header().Set("WWW-Authenticate", h)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	})
	doc := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"resource":%q,"authorization_servers":["https://auth.example"]}`, ts.URL+"/mcp")
	}
	switch meta {
	case "well-known":
		mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", doc)
	case "header":
		mux.HandleFunc("/meta/x", doc)
	}
	ts = httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts
}

// TestProbeFailures checks the code, status and message of every kind of
// failure, and that no process is left.
func TestProbeFailures(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String() + "/mcp"
	ln.Close()
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // then the server notices a client that hangs up
		<-r.Context().Done()
	}))
	t.Cleanup(hang.Close)
	notFound := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(notFound.Close)
	noMeta, wellKnown, header := authServer(t, ""), authServer(t, "well-known"), authServer(t, "header")
	sseAuth := authServer(t, "")

	cases := []struct {
		name    string
		def     map[string]any
		code    string
		status  string
		message string // a part of the message
		stderr  string // a part of the stderr tail
		procs   int    // server processes started
	}{
		{"command missing (path)", stdio("/nonexistent/dir/mcp-server"), CodeCommandNotFound, StatusFailed,
			`command "/nonexistent/dir/mcp-server" does not exist`, "", 0},
		{"command missing (PATH)", stdio("ccproxy-no-such-mcp-server"), CodeCommandNotFound, StatusFailed,
			`command "ccproxy-no-such-mcp-server" not found in ccproxy's PATH`, "", 0},
		{"command missing (env PATH)", map[string]any{"command": "ls", "args": []string{}, "env": map[string]string{"PATH": "/nonexistent"}},
			CodeCommandNotFound, StatusFailed, `not found in the PATH set in its env`, "", 0},
		{"hangs", fake(t, fakeHang, nil), CodeTimeout, StatusFailed, "no answer to initialize within 1.5s", "", 1},
		{"exits at once", fake(t, fakeExit, nil), CodeProcessExited, StatusFailed,
			"the server process exited with status 3 during initialize", fakeStderrLine, 1},
		{"logs to stdout", fake(t, fakeGarbage, nil), CodeProtocolError, StatusFailed,
			`not JSON-RPC to its stdout (servers must log to stderr): "Server listening on port 3000"`, "", 1},
		{"unknown protocol version", fake(t, fakeVersion, nil), CodeProtocolError, StatusFailed,
			`the server chose protocol version "1999-01-01", which this client does not speak`, "", 1},
		{"initialize refused", fake(t, fakeRPCError, nil), CodeProtocolError, StatusFailed,
			"initialize failed: the server answered error -32600: this server only talks to its own client", "", 1},
		{"child hangs too", fake(t, fakeSpawnHang, nil), CodeTimeout, StatusFailed, "no answer to initialize", "", 1},
		{"ws", map[string]any{"type": "ws", "url": "ws://127.0.0.1:1/mcp"}, CodeTransportUnsupported, StatusFailed,
			"the ws transport is not supported by the prober", "", 0},
		{"connection refused", map[string]any{"type": "http", "url": refused}, CodeConnectionRefused, StatusFailed,
			"connection refused by 127.0.0.1:", "", 0},
		{"sse connection refused", map[string]any{"type": "sse", "url": refused}, CodeConnectionRefused, StatusFailed,
			"connection refused by 127.0.0.1:", "", 0},
		{"http hangs", map[string]any{"type": "http", "url": hang.URL}, CodeTimeout, StatusFailed, "no answer to initialize within 1.5s", "", 0},
		{"http 404", map[string]any{"type": "http", "url": notFound.URL + "/mcp"}, CodeProtocolError, StatusFailed,
			"the server answered HTTP 404 Not Found to initialize", "", 0},
		{"401 without OAuth metadata", map[string]any{"type": "http", "url": noMeta.URL + "/mcp"}, CodeAuthRequired, StatusFailed,
			"answered HTTP 401 Unauthorized to initialize and publishes no OAuth metadata", "", 0},
		{"401 with OAuth metadata (well-known)", map[string]any{"type": "http", "url": wellKnown.URL + "/mcp"}, CodeAuthRequired, StatusNeedsAuth,
			"requires OAuth authorization (HTTP 401 Unauthorized; it publishes OAuth metadata)", "", 0},
		{"401 with OAuth metadata (WWW-Authenticate)", map[string]any{"type": "http", "url": header.URL + "/mcp"}, CodeAuthRequired, StatusNeedsAuth,
			"it publishes OAuth metadata", "", 0},
		{"sse 401", map[string]any{"type": "sse", "url": sseAuth.URL + "/mcp"}, CodeAuthRequired, StatusFailed,
			"publishes no OAuth metadata", "", 0},
		{"not an http url", map[string]any{"type": "http", "url": "ftp://x/y"}, CodeConnectionRefused, StatusFailed,
			"the url is not an http(s) URL", "", 0},
	}
	servers := map[string]any{}
	for i, c := range cases {
		servers[fmt.Sprintf("s%02d", i)] = c.def
	}
	cfg := probeConfig(t, servers, nil)
	p := testProber(t, func(o *ProberOptions) { o.Timeout = 1500 * time.Millisecond; o.Grace = 500 * time.Millisecond })
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			prober := *p // the same options, its own pid list
			prober.sem = make(chan struct{}, 4)
			if c.code != CodeTimeout {
				// Only the cases that must time out get the short timeout:
				// a loaded machine must not turn a quick failure into one.
				prober.opts.Timeout = time.Minute
			}
			started := track(&prober)
			start := time.Now()
			r, err := prober.Probe(context.Background(), cfg, fmt.Sprintf("s%02d", i))
			if err != nil {
				t.Fatal(err)
			}
			elapsed := time.Since(start)
			started.assertGone(t, c.procs)
			checkProbeShape(t, r)
			if r.OK || r.Error == nil {
				t.Fatalf("ok=%v error=%v", r.OK, r.Error)
			}
			if r.Error.Code != c.code || r.Status != c.status {
				t.Errorf("code %s status %s, want %s %s (message %q)", r.Error.Code, r.Status, c.code, c.status, r.Error.Message)
			}
			if !strings.Contains(r.Error.Message, c.message) {
				t.Errorf("message %q lacks %q", r.Error.Message, c.message)
			}
			if !strings.HasPrefix(r.Error.Message, fmt.Sprintf("server %q: ", r.Name)) {
				t.Errorf("message %q does not name the server", r.Error.Message)
			}
			if !strings.Contains(r.Error.StderrTail, c.stderr) {
				t.Errorf("stderr tail %q lacks %q", r.Error.StderrTail, c.stderr)
			}
			// A timeout is reported soon after it expires: the hung
			// processes are killed, not waited for.
			if limit := prober.opts.Timeout + 10*time.Second; elapsed > limit {
				t.Errorf("the probe took %v", elapsed)
			}
		})
	}
}

// TestProbeKillsTheWholeGroup: a server whose child outlives it, after a
// good probe: the child is killed too.
func TestProbeKillsTheWholeGroup(t *testing.T) {
	for _, mode := range []string{fakeSpawn, fakeSpawnHang} {
		t.Run(mode, func(t *testing.T) {
			pidFile := filepath.Join(t.TempDir(), "child.pid")
			cfg := probeConfig(t, map[string]any{"spawner": fake(t, mode, map[string]string{"FAKE_CHILD_PIDFILE": pidFile})}, nil)
			// The hanging server must time out (1 s); the good one gets a
			// timeout no loaded machine reaches.
			timeout := time.Second
			if mode == fakeSpawn {
				timeout = time.Minute
			}
			p := testProber(t, func(o *ProberOptions) { o.Timeout = timeout })
			started := track(p)
			r, err := p.Probe(context.Background(), cfg, "spawner")
			if err != nil {
				t.Fatal(err)
			}
			if r.OK != (mode == fakeSpawn) {
				t.Errorf("ok=%v error=%+v", r.OK, r.Error)
			}
			started.assertGone(t, 1)
			b, err := os.ReadFile(pidFile)
			if err != nil {
				t.Fatalf("the server did not start its child: %v", err)
			}
			child, _ := strconv.Atoi(string(b))
			if err := syscall.Kill(child, 0); !errors.Is(err, syscall.ESRCH) {
				if st, ok := childproc.ProcStat(child); ok && st.Live() {
					t.Errorf("the server's child %d is still alive (%v)", child, err)
				}
			}
		})
	}
}

func TestProbeNotActiveIsNotStarted(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "started")
	cfg := probeConfig(t, map[string]any{},
		map[string]any{"unapproved": fake(t, fakeMarker, map[string]string{"FAKE_MARKER": marker})})
	p := testProber(t, nil)
	started := track(p)
	results := p.ProbeAll(context.Background(), cfg)
	started.assertGone(t, 0)
	checkProbeShape(t, results...)
	if len(results) != 1 {
		t.Fatalf("results: %+v", results)
	}
	r := results[0]
	if r.OK || r.Status != StatusAwaitingApproval || r.Error == nil || r.Error.Code != CodeNotActive {
		t.Errorf("result %+v %+v", r, r.Error)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the unapproved server was started (%v)", err)
	}
	for _, call := range []func() error{
		func() error { _, err := p.Tools(context.Background(), cfg, "unapproved"); return err },
		func() error {
			_, err := p.Call(context.Background(), cfg, "unapproved", "text", nil)
			return err
		},
	} {
		var e *Error
		if err := call(); !errors.As(err, &e) || e.Code != CodeNotActive || e.ProtocolError().Code != protocol.CodeMCPNotActive {
			t.Errorf("err = %v, want NOT_ACTIVE", err)
		}
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the unapproved server was started (%v)", err)
	}
}

func TestProbeUnknownName(t *testing.T) {
	cfg := probeConfig(t, map[string]any{"a": stdio("/bin/true")}, nil)
	p := testProber(t, nil)
	_, err := p.Probe(context.Background(), cfg, "nope")
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeServerNotFound {
		t.Fatalf("err = %v", err)
	}
	if pe := e.ProtocolError(); pe.Code != protocol.CodeMCPServerNotFound || pe.Details.ProbeCode != CodeServerNotFound {
		t.Errorf("protocol error %+v", pe)
	}
	if !strings.Contains(e.Message, `no MCP server named "nope" is configured (configured: a)`) {
		t.Errorf("message %q", e.Message)
	}
}

// TestProbeFailureLatency: a failed probe reports the latency of the steps
// it got through, and the total.
func TestProbeFailureLatency(t *testing.T) {
	cfg := probeConfig(t, map[string]any{"listfail": fake(t, fakeListFail, nil), "exit": fake(t, fakeExit, nil)}, nil)
	p := testProber(t, nil)
	started := track(p)
	for _, r := range p.ProbeAll(context.Background(), cfg) {
		l := r.LatencyMs
		if r.OK || r.Error == nil || r.Error.Code != CodeProcessExited || l.Connect == nil || l.Total < *l.Connect || l.Tools != nil {
			t.Errorf("%s: ok=%v error %+v latency %+v", r.Name, r.OK, r.Error, l)
			continue
		}
		switch r.Name {
		case "listfail": // initialized, then died at tools/list
			if l.Initialize == nil || l.Total < *l.Connect+*l.Initialize || !strings.Contains(r.Error.Message, "during tools/list") {
				t.Errorf("listfail: latency %+v, message %q", l, r.Error.Message)
			}
		case "exit": // died during initialize
			if l.Initialize != nil {
				t.Errorf("exit: latency %+v", l)
			}
		}
	}
	started.assertGone(t, 2)
}

// TestProbeHidesSecrets: env values, header values and URL secrets never
// reach a message or a stderr tail.
func TestProbeHidesSecrets(t *testing.T) {
	const secret = "sk-live-0123456789abcdef"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	noMeta := authServer(t, "")
	cfg := probeConfig(t, map[string]any{
		"env":     fake(t, fakeSecret, map[string]string{"FAKE_SECRET": secret}),
		"query":   map[string]any{"type": "http", "url": "http://user:" + secret + "@" + addr + "/mcp?key=" + secret},
		"headers": map[string]any{"type": "http", "url": noMeta.URL + "/mcp", "headers": map[string]string{"Authorization": "Bearer " + secret}},
	}, nil)
	p := testProber(t, nil)
	for _, r := range p.ProbeAll(context.Background(), cfg) {
		b, _ := json.Marshal(r)
		if strings.Contains(string(b), secret) || strings.Contains(string(b), secret[3:]) {
			t.Errorf("%s: the secret leaks: %s", r.Name, b)
		}
		if r.Error == nil {
			t.Errorf("%s: no error", r.Name)
		}
		if r.Name == "env" && !strings.Contains(r.Error.StderrTail, "using token "+mcpconfig.Mask) {
			t.Errorf("env: stderr tail %q", r.Error.StderrTail)
		}
	}
}

func TestProberTimeoutsFromEnvironment(t *testing.T) {
	env := func(m map[string]string) mcpconfig.LookupFunc {
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	cases := []struct {
		env           map[string]string
		probe, call   time.Duration
		explicitProbe time.Duration
	}{
		{nil, DefaultProbeTimeout, DefaultCallTimeout, 0},
		{map[string]string{"MCP_TIMEOUT": "1234", "MCP_TOOL_TIMEOUT": "60000"}, 1234 * time.Millisecond, time.Minute, 0},
		{map[string]string{"MCP_TIMEOUT": "soon", "MCP_TOOL_TIMEOUT": "-5"}, DefaultProbeTimeout, DefaultCallTimeout, 0},
		{map[string]string{"MCP_TIMEOUT": "1234"}, 3 * time.Second, DefaultCallTimeout, 3 * time.Second},
	}
	for _, c := range cases {
		p := NewProber(ProberOptions{Env: env(c.env), Timeout: c.explicitProbe})
		if p.Timeout() != c.probe || p.CallTimeout() != c.call {
			t.Errorf("env %v: timeouts %v %v, want %v %v", c.env, p.Timeout(), p.CallTimeout(), c.probe, c.call)
		}
	}
}

// TestProbeConcurrencyBound: with a bound of 2, never more than 2 servers
// run at once.
func TestProbeConcurrencyBound(t *testing.T) {
	bin := mcptest.Command(t)
	servers := map[string]any{}
	for i := range 6 {
		servers[fmt.Sprintf("s%d", i)] = stdio(bin)
	}
	cfg := probeConfig(t, servers, nil)
	p := testProber(t, func(o *ProberOptions) { o.Concurrency = 2 })
	var mu sync.Mutex
	var live, peak int
	var all []int
	p.onStart = func(pid int) {
		mu.Lock()
		defer mu.Unlock()
		all = append(all, pid)
		live = 0
		for _, q := range all {
			if len(testkit.GroupMembers(q)) > 0 {
				live++
			}
		}
		peak = max(peak, live)
	}
	for _, r := range p.ProbeAll(context.Background(), cfg) {
		if !r.OK {
			t.Errorf("%s: %+v", r.Name, r.Error)
		}
	}
	if len(all) != 6 || peak > 2 {
		t.Errorf("started %d, peak of live servers %d (bound 2)", len(all), peak)
	}
}

// TestProberLeavesNoGoroutines: after probes, listings and calls of every
// kind (good, hung, crashed, refused) over every transport, the goroutines
// of the process are back to what they were.
func TestProberLeavesNoGoroutines(t *testing.T) {
	httpSrv, sse, noMeta := mcptest.ServeHTTP(t), sseServer(t), authServer(t, "")
	cfg := probeConfig(t, map[string]any{
		"stdio":   stdio(mcptest.Command(t)),
		"http":    map[string]any{"type": "http", "url": httpSrv.URL},
		"sse":     map[string]any{"type": "sse", "url": sse.URL},
		"hang":    fake(t, fakeHang, nil),
		"exit":    fake(t, fakeExit, nil),
		"garbage": fake(t, fakeGarbage, nil),
		"auth":    map[string]any{"type": "http", "url": noMeta.URL + "/mcp"},
	}, nil)
	// ProbeAll's results are not checked (the hanging server times out
	// quickly); the calls that must succeed get a timeout no loaded machine
	// reaches.
	p := testProber(t, func(o *ProberOptions) { o.Timeout = 500 * time.Millisecond })
	good := testProber(t, func(o *ProberOptions) { o.Timeout = time.Minute })
	round := func() {
		p.ProbeAll(context.Background(), cfg)
		for _, s := range []string{"stdio", "http", "sse"} {
			if _, err := good.Tools(context.Background(), cfg, s); err != nil {
				t.Error(err)
			}
			if _, err := good.Call(context.Background(), cfg, s, mcptest.ToolText, nil); err != nil {
				t.Error(err)
			}
		}
	}
	round() // the servers' own goroutines and idle connections settle
	settle := func(limit int) int {
		deadline := time.Now().Add(10 * time.Second)
		n := runtime.NumGoroutine()
		for n > limit && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond) // goroutines end asynchronously; nothing to wait on
			n = runtime.NumGoroutine()
		}
		return n
	}
	base := runtime.NumGoroutine()
	for range 3 {
		round()
	}
	if n := settle(base); n > base {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines after the calls, %d before:\n%s", n, base, buf[:runtime.Stack(buf, true)])
	}
}
