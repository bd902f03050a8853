// Command rssbench measures `ccproxy serve` as it runs for real: a built
// ccproxy process, a stand-in claude (this program, re-executed), websocket
// clients, and the proxy's peak resident memory (VmHWM from /proc, read
// before it exits, so the stand-in's memory is not counted). Scenarios:
//
//	go run ./proxy/internal/rssbench                      # stream: 1 GiB realistic mix to 10 clients
//	go run ./proxy/internal/rssbench -size 200MiB -clients 3
//	go run ./proxy/internal/rssbench -scenario stalled    # 1,000 × 1 MiB events; one client reads, one never does
//	go run ./proxy/internal/rssbench -scenario exited     # 40 sessions answer 64 MiB each, exit, are never closed
//	go run ./proxy/internal/rssbench -scenario frames     # 10 connections each send 2 frames of 16 MiB at once
//	go run ./proxy/internal/rssbench -scenario all        # stalled, exited, frames (targets: 256, 384, 384 MiB)
//
// Reading clients check that they see every seq exactly once; a gap or a
// drop fails the run (a client dropped anyway reconnects with afterSeq
// and the drop is counted).
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gorilla/websocket"

	"github.com/ccproxy/ccproxy/internal/benchmix"
)

const token = "rssbench-token-0123456789abcdef"

var logLevel = "warn"

func main() {
	var err error
	if os.Getenv("RSSBENCH_FAKE_CLAUDE") == "1" {
		err = fakeClaude(os.Args[1:])
	} else {
		err = run()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "rssbench:", err)
		os.Exit(1)
	}
}

type sizeFlag int64

func (s *sizeFlag) String() string { return strconv.FormatInt(int64(*s), 10) }
func (s *sizeFlag) Set(v string) error {
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}} {
		if strings.HasSuffix(v, u.suffix) {
			v, mult = strings.TrimSuffix(v, u.suffix), u.m
			break
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return fmt.Errorf("want a size such as 1GiB or 200MB")
	}
	*s = sizeFlag(n * mult)
	return nil
}

var (
	bin     string
	absRoot string
	tmp     string
)

func run() error {
	size := sizeFlag(1 << 30)
	flag.Var(&size, "size", "bytes of stream-json the stand-in claude prints (scenario stream)")
	clients := flag.Int("clients", 10, "websocket clients (scenario stream)")
	scenario := flag.String("scenario", "stream", "stream, stalled, exited, frames or all")
	flag.StringVar(&bin, "bin", "", "ccproxy binary (default: go build ./cmd/ccproxy)")
	root := flag.String("root", ".", "module root (for testdata/transcripts and the build)")
	flag.StringVar(&logLevel, "log-level", logLevel, "ccproxy's --log-level")
	flag.Parse()
	var err error
	absRoot, err = filepath.Abs(*root)
	if err != nil {
		return err
	}
	tmp, err = os.MkdirTemp("", "rssbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if bin == "" {
		bin = filepath.Join(tmp, "ccproxy")
		build := exec.Command("go", "build", "-o", bin, "./cmd/ccproxy")
		build.Dir, build.Stdout, build.Stderr = absRoot, os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("go build: %w", err)
		}
	}
	switch *scenario {
	case "stream":
		return runStream(int64(size), *clients)
	case "stalled":
		return runStalled()
	case "exited":
		return runExited()
	case "frames":
		return runFrames()
	case "all":
		for _, f := range []func() error{runStalled, runExited, runFrames} {
			if err := f(); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("-scenario: want stream, stalled, exited, frames or all, got %q", *scenario)
}

// proxyProc is a running `ccproxy serve` with the stand-in claude.
type proxyProc struct {
	cmd *exec.Cmd
	ws  string
}

// startProxy starts ccproxy serve; mode and size tell the stand-in what
// to print for a user turn.
func startProxy(mode string, size int64, extra ...string) (*proxyProc, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	home, err := os.MkdirTemp(tmp, "home")
	if err != nil {
		return nil, err
	}
	args := []string{"serve", "--addr", "127.0.0.1:0", "--claude", self, "--project", tmp, "--log-level", logLevel}
	if help, _ := exec.Command(bin, "serve", "--help").CombinedOutput(); bytes.Contains(help, []byte("-spool-dir")) {
		args = append(args, "--spool-dir", filepath.Join(home, "spool")) // (an older ccproxy, measured for comparison, has none)
	}
	args = append(args, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "HOME="+home, "CCPROXY_TOKEN="+token, "RSSBENCH_FAKE_CLAUDE=1", "RSSBENCH_MODE="+mode,
		"RSSBENCH_SIZE="+strconv.FormatInt(size, 10), "RSSBENCH_ROOT="+absRoot)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		return nil, fmt.Errorf("reading ccproxy's first line: %w", err)
	}
	var first struct{ URL string }
	if err := json.Unmarshal([]byte(line), &first); err != nil {
		cmd.Process.Kill()
		return nil, fmt.Errorf("first line %q: %w", line, err)
	}
	return &proxyProc{cmd: cmd, ws: "ws" + strings.TrimPrefix(first.URL, "http") + "/v1/ws"}, nil
}

// stop reads the peak RSS, then stops ccproxy with SIGTERM.
func (p *proxyProc) stop() (hwm, rss int64, err error) {
	hwm, rss = procMem(p.cmd.Process.Pid)
	p.cmd.Process.Signal(syscall.SIGTERM)
	if err := p.cmd.Wait(); err != nil {
		return hwm, rss, fmt.Errorf("ccproxy after SIGTERM: %w", err)
	}
	return hwm, rss, nil
}

func (p *proxyProc) kill() { p.cmd.Process.Kill(); p.cmd.Wait() }

func verdict(peakKiB, targetMiB int64) string {
	if peakKiB < targetMiB<<10 {
		return fmt.Sprintf("< %d MiB: ok", targetMiB)
	}
	return fmt.Sprintf("OVER the %d MiB target", targetMiB)
}

func runStream(size int64, clients int) error {
	p, err := startProxy("mix", size)
	if err != nil {
		return err
	}
	defer p.kill()
	ws := p.ws
	ctl, err := dial(ws)
	if err != nil {
		return err
	}
	session, err := createSession(ctl)
	if err != nil {
		return err
	}
	readers := make([]*reader, clients)
	var wg sync.WaitGroup
	for i := range readers {
		readers[i] = &reader{url: ws, session: session}
		if err := readers[i].subscribe(); err != nil {
			return err
		}
	}
	start := time.Now()
	if err := request(ctl, "session/send", map[string]any{"session": session, "text": "stream"}); err != nil {
		return err
	}
	for _, r := range readers {
		wg.Add(1)
		go func() { defer wg.Done(); r.err = r.read() }()
	}
	wg.Wait()
	elapsed := time.Since(start)

	var events, delivered int64
	drops := 0
	for i, r := range readers {
		if r.err != nil {
			return fmt.Errorf("client %d: %w", i, r.err)
		}
		events, delivered, drops = r.last, delivered+r.bytes, drops+r.drops
	}
	hwm, rss, waitErr := p.stop()
	fmt.Printf("stream: input=%.0f MiB events=%d clients=%d delivered=%.0f MiB time=%.1fs input_rate=%.0f MiB/s drops=%d (no gap, no duplicate) peak_rss=%.1f MiB (rss at end %.1f MiB)\n",
		float64(size)/(1<<20), events, clients, float64(delivered)/(1<<20), elapsed.Seconds(),
		float64(size)/(1<<20)/elapsed.Seconds(), drops, float64(hwm)/1024, float64(rss)/1024)
	return waitErr
}

// runStalled: one turn of 1,000 events of 1 MiB; one client reads every
// event, another subscribed and never reads. Target: peak RSS < 256 MiB,
// the reading client sees every seq once.
func runStalled() error {
	const events = 1000
	p, err := startProxy("big", events)
	if err != nil {
		return err
	}
	defer p.kill()
	ctl, err := dial(p.ws)
	if err != nil {
		return err
	}
	session, err := createSession(ctl)
	if err != nil {
		return err
	}
	r := &reader{url: p.ws, session: session}
	if err := r.subscribe(); err != nil {
		return err
	}
	paused, err := dial(p.ws)
	if err != nil {
		return err
	}
	defer paused.Close()
	if err := request(paused, "session/subscribe", map[string]any{"session": session}); err != nil {
		return err
	}
	start := time.Now()
	if err := request(ctl, "session/send", map[string]any{"session": session, "text": "stream"}); err != nil {
		return err
	}
	err = r.read()
	elapsed := time.Since(start)
	hwm, _, stopErr := p.stop()
	if err != nil {
		return fmt.Errorf("reading client: %w", err)
	}
	fmt.Printf("stalled: 1 reading + 1 paused client, %d events of 1 MiB: reader got %d events (seq contiguous, no gap) drops=%d time=%.1fs peak_rss=%.1f MiB %s\n",
		events, r.last, r.drops, elapsed.Seconds(), float64(hwm)/1024, verdict(hwm, 256))
	return stopErr
}

// runExited: 40 sessions each answer one turn of 64 MiB, then their claude
// exits; none is closed. Target: peak RSS < 384 MiB.
func runExited() error {
	const sessions, size = 40, 64 << 20
	p, err := startProxy("exit", size, "--max-sessions", "64")
	if err != nil {
		return err
	}
	defer p.kill()
	ctl, err := dial(p.ws)
	if err != nil {
		return err
	}
	start := time.Now()
	var events int64
	for i := 0; i < sessions; i++ {
		session, err := createSession(ctl)
		if err != nil {
			return fmt.Errorf("session %d: %w", i+1, err)
		}
		r := &reader{url: p.ws, session: session}
		if err := r.subscribe(); err != nil {
			return err
		}
		if err := request(ctl, "session/send", map[string]any{"session": session, "text": "stream"}); err != nil {
			return err
		}
		if err := r.read(); err != nil {
			return fmt.Errorf("session %d: %w", i+1, err)
		}
		events += r.last
	}
	// Every session has exited (or is exiting): list them.
	d, err := requestData(ctl, "session/list", map[string]any{})
	if err != nil {
		return err
	}
	var list struct{ Sessions []struct{ State string } }
	json.Unmarshal(d, &list)
	elapsed := time.Since(start)
	hwm, rss, stopErr := p.stop()
	fmt.Printf("exited: %d sessions × %d MiB answered then exited, never closed (%d listed): events=%d time=%.1fs peak_rss=%.1f MiB (rss at end %.1f MiB) %s\n",
		sessions, size>>20, len(list.Sessions), events, elapsed.Seconds(), float64(hwm)/1024, float64(rss)/1024, verdict(hwm, 384))
	return stopErr
}

// runFrames: 10 connections each send 2 session/send frames of 16 MiB at
// once. Target: peak RSS < 384 MiB; frames beyond the inbound budget are
// refused (limit_exceeded) and counted.
func runFrames() error {
	const conns, perConn = 10, 2
	p, err := startProxy("small", 0)
	if err != nil {
		return err
	}
	defer p.kill()
	ctl, err := dial(p.ws)
	if err != nil {
		return err
	}
	session, err := createSession(ctl)
	if err != nil {
		return err
	}
	text := strings.Repeat("z", 16<<20-1024)
	var mu sync.Mutex
	ok, refused := 0, 0
	var firstErr error
	var wg sync.WaitGroup
	start := time.Now()
	for i := 0; i < conns; i++ {
		conn, err := dial(p.ws)
		if err != nil {
			return err
		}
		defer conn.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < perConn; j++ {
				b, _ := json.Marshal(map[string]any{"type": "session/send", "id": j + 1, "data": map[string]any{"session": session, "text": text}})
				if err := conn.WriteMessage(websocket.TextMessage, b); err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
					return
				}
			}
			for got := 0; got < perConn; {
				_, b, err := conn.ReadMessage()
				if err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
					return
				}
				var f struct {
					Type  string `json:"type"`
					OK    bool   `json:"ok"`
					Error struct{ Code string }
				}
				if json.Unmarshal(b, &f) != nil || f.Type != "reply" {
					continue
				}
				got++
				mu.Lock()
				switch {
				case f.OK:
					ok++
				case f.Error.Code == "limit_exceeded":
					refused++
				default:
					if firstErr == nil {
						firstErr = fmt.Errorf("reply %.200s", b)
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	hwm, _, stopErr := p.stop()
	if firstErr != nil {
		return fmt.Errorf("frames: %w", firstErr)
	}
	fmt.Printf("frames: %d connections × %d frames of 16 MiB at once: accepted=%d refused=%d (limit_exceeded) time=%.1fs peak_rss=%.1f MiB %s\n",
		conns, perConn, ok, refused, elapsed.Seconds(), float64(hwm)/1024, verdict(hwm, 384))
	return stopErr
}

// procMem reads VmHWM and VmRSS (KiB) of pid.
func procMem(pid int) (hwm, rss int64) {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			switch f[0] {
			case "VmHWM:":
				hwm = n
			case "VmRSS:":
				rss = n
			}
		}
	}
	return hwm, rss
}

func dial(url string) (*websocket.Conn, error) {
	conn, _, err := websocket.DefaultDialer.Dial(url, http.Header{"Authorization": {"Bearer " + token}})
	return conn, err
}

var (
	reqMu sync.Mutex
	reqID int
)

// request sends a request and reads until its reply (other frames are
// skipped), failing on an error reply.
func request(conn *websocket.Conn, typ string, data any) error {
	_, err := requestData(conn, typ, data)
	return err
}

func requestData(conn *websocket.Conn, typ string, data any) (json.RawMessage, error) {
	reqMu.Lock()
	reqID++
	id := reqID
	reqMu.Unlock()
	if err := conn.WriteJSON(map[string]any{"type": typ, "id": id, "data": data}); err != nil {
		return nil, err
	}
	for {
		_, b, err := conn.ReadMessage()
		if err != nil {
			return nil, err
		}
		var f struct {
			Type  string          `json:"type"`
			ID    int             `json:"id"`
			OK    bool            `json:"ok"`
			Data  json.RawMessage `json:"data"`
			Error json.RawMessage `json:"error"`
		}
		if bytes.HasPrefix(b, []byte(`{"type":"reply"`)) && json.Unmarshal(b, &f) == nil && f.ID == id {
			if !f.OK {
				return nil, fmt.Errorf("%s: %s", typ, f.Error)
			}
			return f.Data, nil
		}
	}
}

func createSession(conn *websocket.Conn) (string, error) {
	d, err := requestData(conn, "session/create", map[string]any{})
	if err != nil {
		return "", err
	}
	var r struct{ Session string }
	json.Unmarshal(d, &r)
	return r.Session, nil
}

// reader is one client: it reads every event until the result, checking
// that seqs follow each other, and reconnects (resuming after its last seq)
// when the proxy drops it as a slow consumer.
type reader struct {
	url, session string
	conn         *websocket.Conn
	last, bytes  int64
	drops        int
	err          error
}

var seqKey = []byte(`"seq":`)

func (r *reader) subscribe() error {
	conn, err := dial(r.url)
	if err != nil {
		return err
	}
	r.conn = conn
	return request(conn, "session/subscribe", map[string]any{"session": r.session, "afterSeq": r.last})
}

func (r *reader) read() error {
	defer func() { r.conn.Close() }()
	for {
		_, data, err := r.conn.ReadMessage()
		var ce *websocket.CloseError
		if errors.As(err, &ce) && ce.Code == websocket.ClosePolicyViolation {
			r.drops++
			if err := r.subscribe(); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("after seq %d: %w", r.last, err)
		}
		r.bytes += int64(len(data))
		if bytes.HasPrefix(data, []byte(`{"type":"session/gap"`)) {
			return fmt.Errorf("gap after seq %d: %s", r.last, data)
		}
		if !bytes.HasPrefix(data, []byte(`{"type":"session/event"`)) {
			continue
		}
		i := bytes.Index(data, seqKey)
		j := bytes.IndexByte(data[i:], ',')
		seq, err := strconv.ParseInt(string(data[i+len(seqKey):i+j]), 10, 64)
		if err != nil || seq != r.last+1 {
			return fmt.Errorf("seq %d after %d", seq, r.last)
		}
		r.last = seq
		if bytes.Contains(data, []byte(`"event":{"type":"result"`)) {
			return nil
		}
	}
}

// fakeClaude is the stand-in CLI: it answers --version and the control
// requests the proxy sends, and answers a user turn with the stream.
func fakeClaude(args []string) error {
	if len(args) == 1 && args[0] == "--version" {
		fmt.Println("2.1.329 (Claude Code)")
		return nil
	}
	size, _ := strconv.ParseInt(os.Getenv("RSSBENCH_SIZE"), 10, 64)
	mode := os.Getenv("RSSBENCH_MODE")
	mix, err := benchmix.New(filepath.Join(os.Getenv("RSSBENCH_ROOT"), "testdata", "transcripts"))
	if err != nil {
		return err
	}
	out := bufio.NewWriterSize(os.Stdout, 1<<20)
	emit := func(v any) {
		b, _ := json.Marshal(v)
		out.Write(append(b, '\n'))
		out.Flush()
	}
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	for {
		line, err := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var msg struct {
				Type      string `json:"type"`
				RequestID string `json:"request_id"`
				Request   struct {
					Subtype string `json:"subtype"`
				} `json:"request"`
			}
			if err := json.Unmarshal(line, &msg); err != nil {
				return fmt.Errorf("stand-in claude: bad input line: %w", err)
			}
			switch {
			case msg.Type == "control_request" && msg.Request.Subtype == "initialize":
				emit(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "success", "request_id": msg.RequestID, "response": map[string]any{}}})
			case msg.Type == "control_request" && msg.Request.Subtype == "mcp_status":
				emit(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "success", "request_id": msg.RequestID, "response": map[string]any{"mcpServers": []any{}}}})
			case msg.Type == "control_request":
				emit(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "error", "request_id": msg.RequestID, "error": "unsupported"}})
			case msg.Type == "user":
				switch mode {
				case "big": // size events of 1 MiB
					text := strings.Repeat("y", 1<<20-120)
					for i := int64(1); i <= size; i++ {
						fmt.Fprintf(out, `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"%s"}]},"n":%d}`+"\n", text, i)
					}
				case "small":
				default: // mix, exit: size bytes of the realistic mix
					if _, err := mix.WriteTo(out, size); err != nil {
						return err
					}
				}
				out.WriteString(`{"type":"result","subtype":"success","is_error":false,"result":"done"}` + "\n")
				out.Flush()
				if mode == "exit" {
					return nil
				}
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
