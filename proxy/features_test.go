package proxy

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ccproxy/ccproxy/internal/childproc"
	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/proxy/mcphub"
)

// allRequestTypes is every client -> proxy request type of the protocol.
var allRequestTypes = []string{
	protocol.TypeSessionCreate, protocol.TypeSessionSend, protocol.TypeSessionSubscribe,
	protocol.TypeSessionUnsubscribe, protocol.TypeSessionInterrupt, protocol.TypeSessionClose,
	protocol.TypeSessionList, protocol.TypeSessionSetMode, protocol.TypeSessionSetModel,
	protocol.TypePermissionRespond, protocol.TypeMCPSubscribe, protocol.TypeMCPUnsubscribe,
	protocol.TypeMCPApprove, protocol.TypeMCPReject, protocol.TypeMCPProbe, protocol.TypeMCPTools,
	protocol.TypeMCPCall, protocol.TypeMCPLog, protocol.TypeHistoryList, protocol.TypeHistoryRead,
	protocol.TypeMCPAdd, protocol.TypeMCPUpdate, protocol.TypeMCPRemove, protocol.TypeMCPTest,
	protocol.TypeMCPTrust, protocol.TypeMCPToggle, protocol.TypeMCPReconnect, protocol.TypeMCPLogin,
	protocol.TypeMCPLogout, protocol.TypeSessionFiles,
	protocol.TypeHistoryRename, protocol.TypeHistoryDelete, protocol.TypeHistoryRestore, protocol.TypeHistoryTrash, protocol.TypeHistoryExport,
	protocol.TypeSessionRewind,
	protocol.TypeHistorySearch,
}

// Every request type of the protocol has one entry in the feature table,
// whose handler takes the type the protocol decodes it into: dispatch
// never falls through to "unknown request type".
func TestFeatureTableCoversTheProtocol(t *testing.T) {
	s, err := New(Options{Token: testToken, Project: t.TempDir(), CLIOptions: CLIOptions{ClaudePath: fakeClaudePath}, ReplayOptions: ReplayOptions{SpoolDir: t.TempDir()}, HistoryOptions: HistoryOptions{HistoryHome: "-"}})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	caps := map[string]bool{}
	for _, f := range s.features {
		if caps[f.Capability] {
			t.Errorf("capability %s registered twice", f.Capability)
		}
		caps[f.Capability] = true
		for _, rt := range f.Types {
			seen[rt.Name]++
			d, ok := protocol.NewRequestData(rt.Name)
			if !ok {
				t.Errorf("%s (capability %s) is not a request type of the protocol", rt.Name, f.Capability)
				continue
			}
			if got := reflect.TypeOf(d); got != rt.Data {
				t.Errorf("%s: the handler takes %v, the protocol decodes %v", rt.Name, rt.Data, got)
			}
			if rt.Serve == nil {
				t.Errorf("%s: no handler", rt.Name)
			}
		}
	}
	for _, typ := range allRequestTypes {
		if seen[typ] != 1 {
			t.Errorf("%s has %d entries in the feature table, want 1", typ, seen[typ])
		}
	}
	if len(seen) != len(allRequestTypes) {
		t.Errorf("the table has %d request types, the protocol %d", len(seen), len(allRequestTypes))
	}
}

// For each combination of Options the tests use, hello's capabilities are
// what the proxy offered before the table (in the same order), and they,
// the offered request types and dispatch agree: a type is offered exactly
// when hello announces its capability (mcp/test also needs a prober); an
// offered type is dispatched to its handler (here: its data is decoded,
// and refused as not an object); an unoffered one gets unknown_type before
// its data is looked at.
func TestFeatureTableAgrees(t *testing.T) {
	base := []string{protocol.CapSessions, protocol.CapImages, protocol.CapPartialMessages,
		protocol.CapPermissions, protocol.CapBlobs, protocol.CapMCPStatus}
	live := []string{protocol.CapMCPApproval, protocol.CapMCPLive}
	if childproc.TerminalSupported {
		live = append(live, protocol.CapMCPAuth)
	}
	for _, tc := range []struct {
		name string
		opts func(t *testing.T) Options
		caps []string
	}{
		{"no history", func(t *testing.T) Options { return Options{HistoryOptions: HistoryOptions{HistoryHome: "-"}} }, base},
		{"history", func(t *testing.T) Options { return Options{HistoryOptions: HistoryOptions{HistoryHome: t.TempDir()}} },
			append(slices.Clone(base), protocol.CapHistory, protocol.CapHistorySearch, protocol.CapHistoryManage)},
		{"MCP source", func(t *testing.T) Options {
			return Options{MCPOptions: MCPOptions{MCP: newTestSource(t, map[string]string{"alpha": `{"command":"a","args":[]}`})}, HistoryOptions: HistoryOptions{HistoryHome: "-"}}
		}, slices.Concat(base, live)},
		{"MCP probes and call log", func(t *testing.T) Options {
			src := newProbeSource(t, map[string]any{}, nil)
			return Options{Project: src.env.Project, MCPOptions: MCPOptions{MCP: src, MCPProbe: probeOpts(), CallLogDir: t.TempDir()}, HistoryOptions: HistoryOptions{HistoryHome: "-"}}
		}, slices.Concat(base, live, []string{protocol.CapMCPProbe, protocol.CapMCPTools, protocol.CapMCPCall, protocol.CapMCPLog})},
		{"MCP manager", func(t *testing.T) Options {
			e := newMCPEnv(t)
			src, err := mcphub.NewConfigSource(e.Opts, e.FilesDir, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { src.Close() })
			return Options{Project: e.Project, MCPOptions: MCPOptions{MCP: src}, HistoryOptions: HistoryOptions{HistoryHome: t.TempDir()}}
		}, slices.Concat(base, live, []string{protocol.CapMCPProbe, protocol.CapMCPTools, protocol.CapMCPCall, protocol.CapHistory, protocol.CapHistorySearch, protocol.CapMCPManage, protocol.CapHistoryManage})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := startServer(t, tc.opts(t))
			c := ts.dial(t)
			caps := helloCaps(t, c)
			if want := append(slices.Clone(tc.caps), protocol.CapFiles); !slices.Equal(caps, want) { // files: always
				t.Errorf("hello capabilities %v, want %v", caps, want)
			}
			prober := ts.srv.calls.prober != nil
			for _, f := range ts.srv.features {
				announced := slices.Contains(caps, f.Capability)
				for _, rt := range f.Types {
					want := announced && (rt.Name != protocol.TypeMCPTest || prober)
					_, offered := ts.srv.features.Lookup(rt.Name)
					if offered != want {
						t.Errorf("%s: offered %v; hello announces %s: %v", rt.Name, offered, f.Capability, announced)
					}
					data, decodes := notDecodable(rt.Name)
					f := c.reply(c.send(rt.Name, data))
					var e protocol.Error
					if f.Error != nil {
						e = *f.Error
					}
					switch {
					case offered && decodes && e.Code == protocol.CodeUnknownType:
						t.Errorf("%s (offered, no data): %s, want it served", rt.Name, f.raw)
					case offered && !decodes && e.Code != protocol.CodeBadRequest:
						t.Errorf("%s (offered) with %v: %s, want bad_request from its decoding", rt.Name, data, f.raw)
					case !offered && (e.Code != protocol.CodeUnknownType || e.Message != `unknown request type "`+rt.Name+`" (see hello.capabilities)`):
						t.Errorf("%s (not offered): %s, want unknown_type", rt.Name, f.raw)
					}
				}
			}
		})
	}
}

// notDecodable returns data for a request of type typ that its decoding
// refuses (its first field an array), so that the request is not
// executed; for a type without fields, empty data (decodes: true).
func notDecodable(typ string) (data map[string]any, decodes bool) {
	d, _ := protocol.NewRequestData(typ)
	rt := reflect.TypeOf(d).Elem()
	for i := range rt.NumField() {
		if name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			return map[string]any{name: []any{}}, false
		}
	}
	return map[string]any{}, true
}
