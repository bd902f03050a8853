package webui_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/webui"
)

// stubPush is a push the stub backend sends.
type stubPush struct {
	typ  string
	data protocol.Data
}

// stubRaw is data the stub sends as it is (a reply's data or a push's),
// for messages of a protocol addition that package protocol does not have
// yet.
type stubRaw json.RawMessage

func (stubRaw) Validate() error                { return nil }
func (r stubRaw) MarshalJSON() ([]byte, error) { return r, nil }

// stubErr, returned by answer as a reply's data, makes the reply that
// error.
type stubErr struct{ err *protocol.Error }

func (stubErr) Validate() error { return nil }

// stubClose, as a push's type, makes the stub close the connection there.
const stubClose = "stub/close"

// stubBackend serves the embedded web UI and, at /v1/ws, a stand-in for
// the proxy, for browser tests of what the UI renders and sends (the real
// proxy is under test elsewhere). On each connection it sends hello with
// caps (none when caps is nil) and the pushes of answer(nil); then it
// replies to every request with what answer returns — nil data is an
// empty success, a stubErr an error reply, and session/list gets no
// sessions unless answer says otherwise — followed by the pushes answer
// returned (a stubClose push closes the connection).
func stubBackend(t *testing.T, caps []string, answer func(f *protocol.Frame) (protocol.Data, []stubPush)) *httptest.Server {
	t.Helper()
	return stubBackendFiles(t, caps, answer, nil)
}

// stubBackendFiles is stubBackend also serving files: path -> handler.
func stubBackendFiles(t *testing.T, caps []string, answer func(f *protocol.Frame) (protocol.Data, []stubPush), files map[string]http.HandlerFunc) *httptest.Server {
	t.Helper()
	up := websocket.Upgrader{Subprotocols: []string{protocol.Subprotocol}}
	mux := http.NewServeMux()
	mux.Handle("/", http.FileServerFS(webui.FS()))
	for path, h := range files {
		mux.HandleFunc(path, h)
	}
	mux.HandleFunc("/v1/ws", func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		push := func(ps []stubPush) bool {
			for _, p := range ps {
				if p.typ == stubClose {
					return false
				}
				if raw, ok := p.data.(stubRaw); ok { // a type this package does not know yet
					c.WriteJSON(map[string]any{"type": p.typ, "data": json.RawMessage(raw)})
					continue
				}
				f, err := protocol.NewPush(p.typ, p.data)
				if err != nil {
					t.Errorf("push %s: %v", p.typ, err)
					return false
				}
				c.WriteJSON(f)
			}
			return true
		}
		if caps != nil && !push([]stubPush{{protocol.TypeHello, protocol.Hello{
			Protocol: protocol.Version, Server: protocol.Software{Name: "ccproxy", Version: "test"},
			Capabilities: caps,
			Limits:       protocol.Limits{MaxFrameBytes: 1 << 20, SendQueueFrames: 64, ReplayBytes: 1 << 20},
		}}}) {
			return
		}
		if _, first := answer(nil); !push(first) {
			return
		}
		for {
			_, msg, err := c.ReadMessage()
			if err != nil {
				return
			}
			f, err := protocol.ParseFrame(msg)
			if err != nil {
				continue
			}
			data, after := answer(&f)
			if e, ok := data.(stubErr); ok {
				c.WriteJSON(protocol.NewErrorReply(f.ID, e.err))
				if !push(after) {
					return
				}
				continue
			}
			if data == nil {
				data = protocol.Empty{}
				if f.Type == protocol.TypeSessionList {
					data = protocol.SessionListResult{Sessions: []protocol.SessionInfo{}}
				}
			}
			reply, err := protocol.NewReply(f.ID, data)
			if err != nil {
				t.Errorf("reply to %s: %v", f.Type, err)
				return
			}
			c.WriteJSON(reply)
			if !push(after) {
				return
			}
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}
