package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"

	"github.com/ccproxy/ccproxy/mcpconfig"
	"github.com/ccproxy/ccproxy/stream"
)

// Tools connects to the server called name and returns its tools with
// their parameter trees (the data of an mcp/tools reply), in the server's
// order. inputSchema, outputSchema and annotations are the server's JSON
// as sent (key order kept). Errors are *Error: SERVER_NOT_FOUND,
// NOT_ACTIVE, or a connection failure.
func (p *Prober) Tools(ctx context.Context, cfg *mcpconfig.Config, name string) ([]Tool, error) {
	listed, err := p.ListTools(ctx, cfg, name)
	if err != nil {
		return nil, err
	}
	out := make([]Tool, len(listed))
	for i, t := range listed {
		out[i] = t.Tool
	}
	return out, nil
}

// ListedTool is a tool as ListTools returns it: what Tools returns, and the
// notes on its arguments that the parameter tree has no place for.
type ListedTool struct {
	Tool
	// Notes is ToolSchema.Notes of the tool's inputSchema: what the tree
	// cannot say about the arguments object as a whole.
	Notes []string
}

// ListTools is Tools with each tool's Notes, for a listing shown to people
// (`ccproxy mcp tools`).
func (p *Prober) ListTools(ctx context.Context, cfg *mcpconfig.Config, name string) ([]ListedTool, error) {
	s, err := activeServer(cfg, name)
	if err != nil {
		return nil, err
	}
	c, e := p.connect(ctx, s, p.dir(cfg))
	if e != nil {
		return nil, e
	}
	defer c.release()
	ss := c.ss
	tools, err := ss.listTools(c.ctx)
	if err != nil {
		return nil, ss.failure(c.ctx, "tools/list", err)
	}
	ss.close(true)
	out := make([]ListedTool, 0, len(tools))
	for _, t := range tools {
		info, schema, _ := ss.toolInfo(t)
		lt := ListedTool{Tool: info}
		if schema != nil {
			lt.Notes = schema.notes // the schema is not kept: no copy needed
		}
		out = append(out, lt)
	}
	return out, nil
}

// toolInfo converts a listed tool, preferring the raw JSON the server sent,
// and parses its inputSchema once: the tree is the tool's Parameters, and
// the schema is returned for Validate. When the schema cannot be read, the
// error says why, and so does the one "arguments" parameter.
func (ss *session) toolInfo(t *mcp.Tool) (Tool, *ToolSchema, error) {
	out := Tool{Name: t.Name, Title: toolTitle(t), Description: t.Description}
	if raw := ss.tap.get(t.Name); raw != nil {
		tool := gjson.ParseBytes(raw)
		out.InputSchema = rawMember(tool, "inputSchema")
		out.OutputSchema = rawMember(tool, "outputSchema")
		out.Annotations = rawMember(tool, "annotations")
	} else {
		out.InputSchema = marshalRaw(t.InputSchema)
		out.OutputSchema = marshalRaw(t.OutputSchema)
		if t.Annotations != nil {
			out.Annotations = marshalRaw(t.Annotations)
		}
	}
	if !gjson.ParseBytes(out.InputSchema).IsObject() {
		out.InputSchema = json.RawMessage(`{"type":"object"}`) // the MCP schema requires an object
	}
	if out.OutputSchema != nil && !gjson.ParseBytes(out.OutputSchema).IsObject() {
		out.OutputSchema = nil
	}
	if out.Annotations != nil && !gjson.ParseBytes(out.Annotations).IsObject() {
		out.Annotations = nil
	}
	schema, err := ParseToolSchema(out.InputSchema)
	if err != nil {
		out.Parameters = []Parameter{{Name: "arguments", Path: RootPath, Type: "any", Required: true, Unsupported: err.Error()}}
		return out, nil, err
	}
	// The tree is handed over, not copied (Parameters copies): this schema
	// is private to the caller, and Validate does not read the tree.
	out.Parameters = schema.params
	if len(schema.notes) > 0 {
		ss.p.log.Debug("mcp tool schema: not everything is shown", "server", ss.srv.Name, "tool", t.Name, "notes", strings.Join(schema.notes, "; "))
	}
	return out, schema, nil
}

func rawMember(v gjson.Result, key string) json.RawMessage {
	m := v.Get(key)
	if !m.Exists() || m.Type == gjson.Null {
		return nil
	}
	return json.RawMessage(m.Raw)
}

// scrubRaw scrubs the text of raw JSON: a secret inside a string becomes
// *** in it. Should the result not be JSON any more (a secret that spans
// JSON syntax), the value goes, rather than the secret.
func scrubRaw(sc interface{ Scrub(string) string }, raw json.RawMessage) json.RawMessage {
	if raw == nil {
		return nil
	}
	s := sc.Scrub(string(raw))
	if s == string(raw) {
		return raw
	}
	if !json.Valid([]byte(s)) {
		return nil
	}
	return json.RawMessage(s)
}

func marshalRaw(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil || string(b) == "null" {
		return nil
	}
	return b
}

// Call calls tool of the server called name directly, with args (a JSON
// object; empty means {}). The server must be active. The arguments are
// validated against the tool's inputSchema before anything is sent. The
// result is normalized exactly like a session tool_result (the content as
// text, binary parts as attachments per ProberOptions.Attachments);
// DurationMs is the time of the tools/call alone. A tool that fails is a
// result with IsError set, and so is a JSON-RPC error answer to
// tools/call (its content then reads "MCP error CODE: message", as claude
// shows it, with the server's configured secrets masked). Errors are *Error: SERVER_NOT_FOUND, NOT_ACTIVE,
// TOOL_NOT_FOUND, INVALID_ARGUMENTS (with Fields), or a connection failure
// (TIMEOUT after CallTimeout, PROCESS_EXITED when the server dies, ...).
func (p *Prober) Call(ctx context.Context, cfg *mcpconfig.Config, name, tool string, args json.RawMessage) (CallResult, error) {
	var zero CallResult
	s, err := activeServer(cfg, name)
	if err != nil {
		return zero, err
	}
	args = bytes.TrimSpace(args)
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}") // never null: go-sdk servers panic on null arguments
	}
	if !gjson.ValidBytes(args) || !gjson.ParseBytes(args).IsObject() {
		return zero, &Error{Code: CodeInvalidArguments, Status: StatusFailed,
			Message: fmt.Sprintf("invalid arguments for %s of server %q: they must be a JSON object", tool, name),
			Fields:  []FieldError{{Path: RootPath, Code: ParamInvalidType, Message: "must be a JSON object"}}}
	}
	c, e := p.connect(ctx, s, p.dir(cfg))
	if e != nil {
		return zero, e
	}
	defer c.release()
	ss := c.ss
	healthy := false
	defer func() { ss.close(healthy) }()
	tools, err := ss.listTools(c.ctx)
	if err != nil {
		return zero, ss.failure(c.ctx, "tools/list", err)
	}
	var found *mcp.Tool
	names := make([]string, 0, len(tools))
	for _, t := range tools {
		names = append(names, t.Name)
		if t.Name == tool {
			found = t
		}
	}
	if found == nil {
		healthy = true
		msg := fmt.Sprintf("server %q has no tool %q", name, tool)
		if len(names) > 0 {
			msg += " (its tools: " + truncateList(names, 30) + ")"
		}
		return zero, &Error{Code: CodeToolNotFound, Status: StatusFailed, Message: msg}
	}
	if _, schema, err := ss.toolInfo(found); err == nil {
		if fields := schema.Validate(args); len(fields) > 0 {
			healthy = true
			return zero, invalidArguments(name, tool, fields)
		}
	} else {
		p.log.Warn("mcp call: the tool's input schema cannot be read; arguments are not checked", "server", name, "tool", tool, "error", err)
	}

	callCtx, cancelCall := context.WithTimeout(ctx, p.opts.CallTimeout)
	defer cancelCall()
	t0 := time.Now()
	res, err := ss.cs.CallTool(callCtx, &mcp.CallToolParams{Name: tool, Arguments: args})
	dur := time.Since(t0)
	out := CallResult{Server: name, Tool: tool, DurationMs: ms(dur)}
	var rpc *jsonrpc.Error
	switch {
	case err != nil && errors.As(err, &rpc) && callCtx.Err() == nil:
		out.IsError = true
		out.Content = ss.scrub.Scrub(fmt.Sprintf("MCP error %d: %s", rpc.Code, rpc.Message)) // like every failure message
		healthy = true
		return out, nil
	case err != nil:
		return zero, ss.failure(callCtx, "tools/call", err)
	}
	healthy = true
	content, err := json.Marshal(res.Content)
	if err != nil || res.Content == nil {
		content = []byte("[]")
	}
	text, atts, err := stream.NormalizeToolResult(content, p.opts.Attachments)
	if err != nil {
		return zero, ss.errorf(CodeProtocolError, "reading the result of %s: %v", tool, err)
	}
	out.IsError = res.IsError
	// Every text the server wrote, not only an error's: a tool can print
	// its own environment (the everything server's get-env does), and a
	// frame never holds a configured secret (SPEC §10).
	out.Content = ss.scrub.Scrub(text)
	for _, a := range atts {
		out.Attachments = append(out.Attachments, Attachment{Kind: a.Kind, MediaType: a.MediaType, Size: int64(a.Size),
			SHA256: a.SHA256, URI: a.URI, URL: a.URL, Data: a.Data, Error: a.Error})
	}
	if res.StructuredContent != nil {
		out.StructuredContent = scrubRaw(ss.scrub, marshalRaw(res.StructuredContent))
	}
	return out, nil
}

// invalidArguments is the INVALID_ARGUMENTS failure for fields.
func invalidArguments(server, tool string, fields []FieldError) *Error {
	parts := make([]string, 0, len(fields))
	for _, f := range fields {
		parts = append(parts, f.Path+": "+f.Message)
	}
	return &Error{Code: CodeInvalidArguments, Status: StatusFailed, Fields: fields,
		Message: fmt.Sprintf("invalid arguments for tool %q of server %q: %s", tool, server, strings.Join(parts, "; "))}
}
