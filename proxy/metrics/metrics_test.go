package metrics

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/proxy/claudecli"
)

// benchClients is the number of clients an event is fanned out to (as
// proxy's BenchmarkFanout's default -clients).
const benchClients = 10

// BenchmarkMetricsPerEvent is what the metrics add to one event fanned out
// to -clients clients: the sampled normalization timing, the event count,
// and one frame count per client, under the client's lock the write pump
// takes anyway (BenchmarkFanout's events/s gives the budget).
func BenchmarkMetricsPerEvent(b *testing.B) {
	m := New(func() State { return State{} }, nil)
	frame := make([]byte, 3000)
	var out struct{ frames, bytes int64 } // as wsconn.Conn counts a frame written
	lines := 0
	for b.Loop() {
		if lines++; lines%claudecli.NormalizeSampleEvery == 1 {
			t0 := time.Now()
			m.Normalized(time.Since(t0))
		}
		m.EventLogged(frame)
		for range benchClients {
			out.frames++
			out.bytes += int64(len(frame))
		}
	}
}

// The State read at a scrape becomes its series, an MCP status it does
// not know counts as other, and a label value it does not know too.
func TestStateSeries(t *testing.T) {
	m := New(func() State {
		return State{
			Sessions: map[string]int{protocol.StateIdle: 2, protocol.StateRunning: 1}, Clients: 3,
			PendingPermissions: map[string]int{protocol.PermissionKindPlan: 1}, PendingControls: 4,
			WS:           WS{InFrames: 5, InBytes: 50, OutFrames: 6, OutBytes: 60},
			ReplayMemory: 7, ReplayDisk: 8, ReplayMemoryLimit: 9, Inbound: 10,
			MCPStatus: []byte(`{"servers":[{"name":"a","status":"connected"},{"name":"b","status":"weird"}]}`),
		}
	}, nil)
	m.PermissionAsked("rm -rf /")
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body := rec.Body.String()
	for _, want := range []string{
		`ccproxy_sessions{state="idle"} 2`, `ccproxy_sessions{state="running"} 1`, `ccproxy_sessions{state="exited"} 0`,
		`ccproxy_clients 3`, `ccproxy_permission_requests_pending{kind="plan"} 1`, `ccproxy_control_requests_pending 4`,
		`ccproxy_ws_frames_total{direction="in"} 5`, `ccproxy_ws_bytes_total{direction="out"} 60`,
		`ccproxy_replay_log_bytes{where="disk"} 8`, `ccproxy_replay_log_memory_limit_bytes 9`, `ccproxy_inbound_bytes 10`,
		`ccproxy_mcp_servers{status="connected"} 1`, `ccproxy_mcp_servers{status="other"} 1`,
		`ccproxy_permission_requests_total{kind="other"} 1`,
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("no %s in\n%s", want, body)
		}
	}
	if strings.Contains(body, "weird") || strings.Contains(body, "rm -rf") {
		t.Errorf("an unbounded label value:\n%s", body)
	}
}
