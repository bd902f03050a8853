package replay

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"

	"github.com/tidwall/gjson"
)

// notStarted is the error the replayer reports for MCP servers it is asked
// to add: it replays a recording and starts nothing.
const notStarted = "not started: this is a replay of a recorded Claude Code session (ccproxy replay-claude), which runs no MCP servers"

var permissionModes = []string{"default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"}

// control answers a control request from the host, as the CLI would.
func (s *session) control(in input) error {
	req := gjson.GetBytes(in.raw, "request")
	idv := gjson.GetBytes(in.raw, "request_id")
	if idv.Type != gjson.String || idv.String() == "" || !req.IsObject() {
		return fmt.Errorf("%w: stdin line %d: a control_request needs a request_id string and a request object", ErrBadInput, in.n)
	}
	id := idv.String()
	switch sub := req.Get("subtype").String(); sub {
	case "initialize":
		resp, ok := s.t.Recorded("initialize")
		if !ok {
			resp = []byte(`{"commands":[],"agents":[],"models":[],"output_style":"default","available_output_styles":["default"],"account":{}}`)
		}
		resp = setJSON(resp, "pid", os.Getpid())
		resp = setJSON(resp, "claude_code_version", CLIVersion)
		if err := s.reply(id, resp); err != nil {
			return err
		}
		if !s.initialized {
			s.initialized = true
			for _, raw := range s.t.prelude {
				if err := s.emit(raw); err != nil {
					return err
				}
			}
		}
		return nil
	case "interrupt":
		// As measured: a prompt waiting for an answer is withdrawn
		// first, then the response; the turn (if one plays) then ends
		// with its interrupted messages and result (session.stop).
		if s.playing {
			s.interrupted = true
			if s.pending != "" {
				if err := s.emitJSON(ordered{{"type", "control_cancel_request"}, {"request_id", s.pending}}); err != nil {
					return err
				}
				s.cancelled, s.pending, s.pendingLine = s.pendingLine, "", nil
			}
		}
		return s.reply(id, []byte(`{"still_queued":[]}`))
	case "mcp_status":
		return s.reply(id, s.mcpStatus())
	case "mcp_set_servers":
		servers := req.Get("servers")
		if !servers.IsObject() {
			return s.replyError(id, "mcp_set_servers: servers must be an object", "")
		}
		return s.reply(id, s.setServers(servers))
	case "mcp_reconnect", "mcp_toggle":
		name := req.Get("serverName").String()
		sv := s.server(name)
		if sv == nil {
			return s.replyError(id, "Server not found: "+name, "")
		}
		if sub == "mcp_toggle" {
			sv.disabled = !req.Get("enabled").Bool()
		}
		return s.reply(id, nil)
	case "set_model":
		model := req.Get("model").String()
		if model == "" {
			model = "default"
		}
		s.model = model
		// The CLI tells the conversation, then answers.
		text := "<local-command-stdout>Set model to `" + model + "`</local-command-stdout>"
		if err := s.emitJSON(ordered{{"type", "user"}, {"message", map[string]any{"role": "user", "content": text}},
			{"session_id", s.sessionID}, {"parent_tool_use_id", nil}, {"uuid", newUUID()}, {"timestamp", timestamp()},
			{"isReplay", true}}); err != nil {
			return err
		}
		return s.replyJSON(id, map[string]any{"model": model})
	case "set_permission_mode":
		mode := req.Get("mode").String()
		if !slices.Contains(permissionModes, mode) {
			return s.replyError(id, fmt.Sprintf("Invalid permission mode: %q", mode), "")
		}
		s.permissionMode = mode
		if err := s.replyJSON(id, map[string]any{"mode": mode}); err != nil {
			return err
		}
		return s.emitJSON(ordered{{"type", "system"}, {"subtype", "status"}, {"status", nil},
			{"permissionMode", mode}, {"uuid", newUUID()}, {"session_id", s.sessionID}})
	default:
		return s.replyError(id, "Unsupported control request subtype: "+sub, "unsupported_request")
	}
}

// reply sends a success control_response; resp nil means one without a
// response object (as the CLI answers mcp_reconnect and mcp_toggle).
func (s *session) reply(id string, resp []byte) error {
	r := ordered{{"subtype", "success"}, {"request_id", id}}
	if resp != nil {
		r = append(r, field{"response", json.RawMessage(resp)})
	}
	return s.emitJSON(ordered{{"type", "control_response"}, {"response", r}})
}

func (s *session) replyJSON(id string, v any) error {
	b, err := marshal(v)
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	return s.reply(id, b)
}

func (s *session) replyError(id, msg, code string) error {
	r := ordered{{"subtype", "error"}, {"request_id", id}, {"error", msg}}
	if code != "" {
		r = append(r, field{"error_code", code})
	}
	return s.emitJSON(ordered{{"type", "control_response"}, {"response", r}})
}

func (s *session) server(name string) *server {
	for _, sv := range s.servers {
		if sv.name == name {
			return sv
		}
	}
	return nil
}

func (sv *server) currentStatus() string {
	if sv.disabled {
		return "disabled"
	}
	return sv.status
}

// mcpStatus is the mcp_status response: the recorded entry of each
// recorded server (or one made from system/init), and a "failed" entry for
// each server added by mcp_set_servers.
func (s *session) mcpStatus() []byte {
	recorded := map[string][]byte{}
	if resp, ok := s.t.Recorded("mcp_status"); ok {
		gjson.GetBytes(resp, "mcpServers").ForEach(func(_, v gjson.Result) bool {
			recorded[v.Get("name").String()] = []byte(v.Raw)
			return true
		})
	}
	tools := gjson.GetBytes(s.t.Turns[0].lines[0].raw, "tools").Array()
	entries := make([]json.RawMessage, 0, len(s.servers))
	for _, sv := range s.servers {
		var e []byte
		switch {
		case !sv.recorded:
			typ := gjson.GetBytes(sv.config, "type").String()
			if typ == "" {
				typ = "stdio"
			}
			e, _ = marshal(ordered{{"name", sv.name}, {"status", "failed"}, {"error", notStarted},
				{"config", sv.config}, {"transport", typ}, {"scope", "dynamic"}, {"source", "dynamic"}})
		case recorded[sv.name] != nil:
			e = recorded[sv.name]
		default:
			var names []map[string]any
			prefix := "mcp__" + sv.name + "__"
			for _, t := range tools {
				if n := t.String(); len(n) > len(prefix) && n[:len(prefix)] == prefix {
					names = append(names, map[string]any{"name": n[len(prefix):]})
				}
			}
			e, _ = marshal(ordered{{"name", sv.name}, {"status", sv.status}, {"config", map[string]any{}},
				{"scope", sv.source}, {"source", sv.source}, {"tools", orEmptyMaps(names)}})
		}
		if sv.disabled {
			e = setJSON(e, "status", "disabled")
			for _, k := range []string{"tools", "serverInfo", "error"} {
				e = deleteKey(e, k)
			}
		}
		entries = append(entries, e)
	}
	b, _ := marshal(map[string]any{"mcpServers": entries})
	return b
}

// setServers applies mcp_set_servers. The recorded servers stay whatever
// the host sends: the recording needs them, and the replayer cannot start
// or stop anything. Servers of other names are added (and reported as
// failed: nothing is started) or removed, and the response says which.
func (s *session) setServers(servers gjson.Result) []byte {
	added, removed := []string{}, []string{}
	want := map[string]json.RawMessage{}
	servers.ForEach(func(k, v gjson.Result) bool {
		want[k.String()] = json.RawMessage(v.Raw)
		return true
	})
	kept := s.servers[:0:0]
	for _, sv := range s.servers {
		if cfg, ok := want[sv.name]; ok || sv.recorded {
			if !sv.recorded {
				sv.config = cfg
			}
			kept = append(kept, sv)
			continue
		}
		removed = append(removed, sv.name)
	}
	s.servers = kept
	names := make([]string, 0, len(want))
	for name := range want {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if s.server(name) == nil {
			s.servers = append(s.servers, &server{name: name, status: "failed", source: "dynamic", config: want[name]})
			added = append(added, name)
		}
	}
	b, _ := marshal(ordered{{"added", added}, {"removed", removed}, {"errors", map[string]string{}}})
	return b
}

func orEmptyMaps(v []map[string]any) []map[string]any {
	if v == nil {
		return []map[string]any{}
	}
	return v
}
