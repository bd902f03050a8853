package proxy

// Benchmarks of the path claude stdout → stream → log → fan-out → websocket
// → client, with a realistic stream (internal/benchmix) and 10 real
// websocket clients (gorilla) on loopback. The session reads a pipe fed by
// the benchmark instead of a claude process; everything after the pipe is
// the proxy's normal code.
//
//	go test -run '^$' -bench . -benchtime 1x ./proxy
//	go test -run '^$' -bench Latency -benchtime 1x -latency-events 50000 ./proxy

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/ccproxy/ccproxy/internal/benchmix"
	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/proxy/claudecli"
	"github.com/ccproxy/ccproxy/stream"
)

// fanoutWindow is how far the Fanout producer may run ahead of the
// slowest client, in events: three quarters of a send queue.
const fanoutWindow = 768

var (
	fanoutBytes   = flag.Int64("fanout-bytes", 200<<20, "size of the stream in BenchmarkFanout")
	latencyEvents = flag.Int("latency-events", 25000, "events in BenchmarkLatency (at -latency-rate per second)")
	latencyRate   = flag.Int("latency-rate", 5000, "events per second in BenchmarkLatency")
	benchClients  = flag.Int("clients", 10, "websocket clients in the benchmarks")
)

// benchSession is a session whose "claude" is a pipe the benchmark writes.
type benchSession struct {
	sess *Session
	w    *os.File
	done chan struct{}
}

func newBenchSession(b testing.TB, ts *testServer) *benchSession {
	b.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	claudecli.EnlargePipe(r) // as claudecli.Start does for claude's stdout
	srv := ts.srv
	sess := srv.newSession(sessionConfig{cwd: srv.opts.Project})
	sess.state = protocol.StateIdle
	id := sess.id
	srv.mu.Lock()
	srv.sessions[id] = sess
	srv.mu.Unlock()
	bs := &benchSession{sess: sess, w: w, done: make(chan struct{})}
	go func() {
		// What a claudecli.Client's stdout goroutine does with each line.
		defer close(bs.done)
		defer r.Close()
		rd := stream.NewReader(r, srv.opts.MaxLineBytes)
		norm := stream.NewNormalizer(stream.Options{Attachments: stream.AttachSink, Sink: srv.blobs})
		var lines int
		for {
			line, err := rd.Next()
			if err != nil {
				return
			}
			if srv.lineRead != nil {
				srv.lineRead()
			}
			// As claudecli.Client does with Config.OnNormalized set.
			var ev stream.Event
			if lines++; lines%claudecli.NormalizeSampleEvery == 1 {
				t0 := time.Now()
				ev = norm.Normalize(line)
				srv.metrics.Normalized(time.Since(t0))
			} else {
				ev = norm.Normalize(line)
			}
			sess.onEvent(nil, &ev, nil)
		}
	}()
	b.Cleanup(func() {
		w.Close()
		<-bs.done
		srv.mu.Lock()
		delete(srv.sessions, id)
		srv.mu.Unlock()
		sess.mu.Lock()
		sess.proc.exited = true // nothing to close: there is no process
		close(sess.proc.final)
		sess.mu.Unlock()
	})
	return bs
}

// benchClient is a websocket client that records when each event arrived.
type benchClient struct {
	conn     *websocket.Conn
	arrived  []int64 // unix nanoseconds, by seq-1
	bytes    int64
	last     int64
	err      error
	done     chan struct{}
	progress *progress // told every 64 events
}

// progress lets the Fanout producer wait for the slowest client.
type progress struct {
	mu   sync.Mutex
	cond *sync.Cond
	seqs map[*benchClient]int64
}

func newProgress() *progress {
	p := &progress{seqs: map[*benchClient]int64{}}
	p.cond = sync.NewCond(&p.mu)
	return p
}

func (p *progress) set(c *benchClient, seq int64) {
	p.mu.Lock()
	p.seqs[c] = seq
	p.cond.Broadcast()
	p.mu.Unlock()
}

// waitMin waits until every client has seq >= min.
func (p *progress) waitMin(min int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		low := int64(-1)
		for _, s := range p.seqs {
			if low < 0 || s < low {
				low = s
			}
		}
		if low >= min {
			return
		}
		p.cond.Wait()
	}
}

var seqKey = []byte(`"seq":`)

// dialBench connects a client and subscribes it to session, which will
// send n events; it reports its progress to pr (if not nil). With timed,
// it notes each event's arrival time (BenchmarkLatency);
// without, it only counts (BenchmarkFanout, where a clock read per frame
// in ten clients would be a good part of what is measured). It reads each
// frame into a buffer it reuses, as an efficient client does, with a
// 64 KiB read buffer.
func dialBench(b testing.TB, ts *testServer, session string, n int, pr *progress, timed bool) *benchClient {
	b.Helper()
	d := websocket.Dialer{ReadBufferSize: 64 << 10, HandshakeTimeout: 45 * time.Second}
	conn, _, err := d.Dial(ts.wsURL(), http.Header{"Authorization": {"Bearer " + testToken}})
	if err != nil {
		b.Fatal(err)
	}
	c := &benchClient{conn: conn, done: make(chan struct{}), progress: pr}
	if timed {
		c.arrived = make([]int64, n)
	}
	if pr != nil {
		pr.set(c, 0)
	}
	req := fmt.Sprintf(`{"type":"session/subscribe","id":1,"data":{"session":%q}}`, session)
	if err := conn.WriteMessage(websocket.TextMessage, []byte(req)); err != nil {
		b.Fatal(err)
	}
	for { // hello, then the reply
		_, data, err := conn.ReadMessage()
		if err != nil {
			b.Fatal(err)
		}
		if bytes.HasPrefix(data, []byte(`{"type":"reply"`)) {
			break
		}
	}
	go c.read(int64(n))
	return c
}

// read reads frames until it has event n, noting the arrival time of each
// event and checking that seqs come in order, once each.
func (c *benchClient) read(n int64) {
	defer close(c.done)
	var buf bytes.Buffer
	for c.last < n {
		_, r, err := c.conn.NextReader()
		if err == nil {
			buf.Reset()
			_, err = buf.ReadFrom(r)
		}
		if err != nil {
			c.err = fmt.Errorf("after seq %d: %w", c.last, err)
			return
		}
		data := buf.Bytes()
		var now int64
		if c.arrived != nil {
			now = time.Now().UnixNano()
		}
		c.bytes += int64(len(data))
		if !bytes.HasPrefix(data, []byte(`{"type":"session/event"`)) {
			continue
		}
		i := bytes.Index(data, seqKey)
		j := bytes.IndexByte(data[i:], ',')
		seq, err := strconv.ParseInt(string(data[i+len(seqKey):i+j]), 10, 64)
		if err != nil || seq != c.last+1 {
			c.err = fmt.Errorf("seq %d after %d (%v)", seq, c.last, err)
			return
		}
		c.last = seq
		if c.arrived != nil {
			c.arrived[seq-1] = now
		}
		if c.progress != nil && (seq%64 == 0 || seq == n) {
			c.progress.set(c, seq)
		}
	}
	if c.progress != nil {
		c.progress.set(c, 1<<62) // finished or failed: never wait for it again
	}
}

func benchServer(b *testing.B) *testServer {
	return startServer(b, Options{Logger: nil})
}

func loadMix(b testing.TB) *benchmix.Mix {
	b.Helper()
	m, err := benchmix.New(filepath.Join("..", "testdata", "transcripts"))
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// BenchmarkFanout streams -fanout-bytes (200 MB) of realistic stream-json
// through one session to -clients (10) websocket clients, as fast as they
// take it: the producer (claude's stand-in) stays at most fanoutWindow
// events ahead of the slowest client, so no client is dropped and the
// figure is the rate the proxy sustains for all of them. (Without that
// window the proxy reads claude as fast as claude writes, by design, and
// the clients that cannot keep up catch up from the replay log.) MB/s is the input rate;
// fanout-MiB/s what the clients got in total.
func BenchmarkFanout(b *testing.B) {
	m := loadMix(b)
	lines := m.Lines(*fanoutBytes)
	var input int64
	for _, l := range lines {
		input += int64(len(l) + 1)
	}
	ts := benchServer(b)
	b.SetBytes(input)
	b.ReportAllocs()
	var delivered int64
	var elapsed time.Duration
	for range b.N {
		b.StopTimer()
		bs := newBenchSession(b, ts)
		pr := newProgress()
		clients := make([]*benchClient, *benchClients)
		for i := range clients {
			clients[i] = dialBench(b, ts, bs.sess.id, len(lines), pr, false)
		}
		b.StartTimer()
		start := time.Now()
		go func() {
			bw := newLineWriter(bs.w)
			for i, l := range lines {
				if i%64 == 0 {
					bw.flush()
					pr.waitMin(int64(i - fanoutWindow))
				}
				bw.write(l)
			}
			bw.flush()
		}()
		for _, c := range clients {
			<-c.done
			if c.err != nil {
				b.Fatalf("client: %v", c.err)
			}
			delivered += c.bytes
		}
		elapsed += time.Since(start)
		b.StopTimer()
		for _, c := range clients {
			c.conn.Close()
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(len(lines))*float64(b.N)/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(delivered)/(1<<20)/elapsed.Seconds(), "fanout-MiB/s")
	b.ReportMetric(float64(len(lines)), "events/op")
}

// lineWriter writes lines to the pipe in chunks, as a process does.
type lineWriter struct {
	w   io.Writer
	buf []byte
}

func newLineWriter(w io.Writer) *lineWriter { return &lineWriter{w: w, buf: make([]byte, 0, 64<<10)} }

func (lw *lineWriter) write(l []byte) {
	if len(lw.buf)+len(l)+1 > cap(lw.buf) {
		lw.flush()
	}
	if len(l)+1 > cap(lw.buf) {
		lw.w.Write(l)
		lw.w.Write([]byte{'\n'})
		return
	}
	lw.buf = append(append(lw.buf, l...), '\n')
}

func (lw *lineWriter) flush() {
	if len(lw.buf) > 0 {
		lw.w.Write(lw.buf)
		lw.buf = lw.buf[:0]
	}
}

// BenchmarkLatency writes the realistic stream at -latency-rate (5000)
// events per second, each line written on its own the moment it is due,
// and measures for every event and client the time from the moment the
// proxy has read its line (read-*) — and, stricter, from the moment the
// line was written to the pipe (write-*, which adds the time a line waits
// in the pipe behind a multi-megabyte one) — to the client's receipt of
// its frame: p50, p99 and max, in milliseconds.
func BenchmarkLatency(b *testing.B) {
	m := loadMix(b)
	var lines [][]byte
	for size := int64(1 << 20); len(lines) < *latencyEvents; size *= 2 {
		lines = m.Lines(size)
	}
	lines = lines[:*latencyEvents]
	ts := benchServer(b)
	interval := time.Second / time.Duration(*latencyRate)
	var fromRead, fromWrite []float64
	for range b.N {
		bs := newBenchSession(b, ts)
		clients := make([]*benchClient, *benchClients)
		for i := range clients {
			clients[i] = dialBench(b, ts, bs.sess.id, len(lines), nil, true)
		}
		read := make([]int64, len(lines))
		nread := 0
		ts.srv.lineRead = func() { // the stdout loop's goroutine: no race
			if nread < len(read) {
				read[nread] = time.Now().UnixNano()
				nread++
			}
		}
		written := make([]int64, len(lines))
		start := time.Now()
		go func() {
			for i, l := range lines {
				if d := time.Until(start.Add(time.Duration(i) * interval)); d > 0 {
					time.Sleep(d)
				}
				line := append(l[:len(l):len(l)], '\n')
				written[i] = time.Now().UnixNano()
				bs.w.Write(line)
			}
		}()
		for _, c := range clients {
			<-c.done
			if c.err != nil {
				b.Fatalf("client: %v", c.err)
			}
		}
		for _, c := range clients {
			for i, t := range c.arrived {
				fromRead = append(fromRead, float64(t-read[i])/1e6)
				fromWrite = append(fromWrite, float64(t-written[i])/1e6)
			}
			c.conn.Close()
		}
		ts.srv.lineRead = nil
	}
	for _, m := range []struct {
		name string
		v    []float64
	}{{"read", fromRead}, {"write", fromWrite}} {
		slices.Sort(m.v)
		pct := func(p float64) float64 { return m.v[int(p*float64(len(m.v)-1))] }
		b.ReportMetric(pct(0.50), m.name+"-p50-ms")
		b.ReportMetric(pct(0.99), m.name+"-p99-ms")
		b.ReportMetric(m.v[len(m.v)-1], m.name+"-max-ms")
	}
	b.ReportMetric(float64(len(lines)), "events/op")
}
