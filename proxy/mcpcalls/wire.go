package mcpcalls

import (
	"github.com/ccproxy/ccproxy/mcpconfig/calllog"
	"github.com/ccproxy/ccproxy/mcpconfig/probe"
	"github.com/ccproxy/ccproxy/protocol"
)

// The one place where what packages probe and calllog return becomes the
// webview protocol's types (SPEC §3, §8). `ccproxy mcp probe|tools|call`
// prints through these too, so its JSON is the protocol's.

// ProbeResults maps probe results to the protocol's; nil stays nil.
func ProbeResults(rs []probe.Result) []protocol.ProbeResult {
	if rs == nil {
		return nil
	}
	out := make([]protocol.ProbeResult, len(rs))
	for i, r := range rs {
		out[i] = ProbeResult(r)
	}
	return out
}

// ProbeResult maps one probe result to the protocol's.
func ProbeResult(r probe.Result) protocol.ProbeResult {
	out := protocol.ProbeResult{Name: r.Name, Scope: r.Scope, Transport: r.Transport, OK: r.OK, Status: r.Status,
		ProtocolVersion: r.ProtocolVersion, Capabilities: r.Capabilities, ToolCount: r.ToolCount,
		LatencyMs: protocol.Latency(r.LatencyMs), ProbedAt: r.ProbedAt}
	if r.Error != nil {
		out.Error = &protocol.ProbeError{Code: r.Error.Code, Message: r.Error.Message, StderrTail: r.Error.StderrTail}
	}
	if r.ServerInfo != nil {
		si := protocol.MCPServerInfo(*r.ServerInfo)
		out.ServerInfo = &si
	}
	out.Tools = convertAll(r.Tools, func(t probe.ToolSummary) protocol.ToolSummary { return protocol.ToolSummary(t) })
	out.Resources = convertAll(r.Resources, func(t probe.ResourceSummary) protocol.ResourceSummary { return protocol.ResourceSummary(t) })
	out.Prompts = convertAll(r.Prompts, func(t probe.PromptSummary) protocol.PromptSummary { return protocol.PromptSummary(t) })
	return out
}

// Tools maps tools with their parameter trees to the protocol's; nil
// stays nil.
func Tools(ts []probe.Tool) []protocol.Tool { return convertAll(ts, Tool) }

// Tool maps one tool to the protocol's.
func Tool(t probe.Tool) protocol.Tool {
	return protocol.Tool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema,
		OutputSchema: t.OutputSchema, Annotations: t.Annotations, Parameters: Parameters(t.Parameters)}
}

// Parameters maps a parameter tree to the protocol's; nil stays nil and
// empty stays empty (the JSON tells them apart).
func Parameters(ps []probe.Parameter) []protocol.Parameter { return convertAll(ps, Parameter) }

// Parameter maps one parameter and the tree under it.
func Parameter(p probe.Parameter) protocol.Parameter {
	out := protocol.Parameter{Name: p.Name, Path: p.Path, Type: p.Type, Description: p.Description, Required: p.Required,
		Nullable: p.Nullable, Default: p.Default, Enum: p.Enum, Minimum: p.Minimum, Maximum: p.Maximum,
		MinLength: p.MinLength, MaxLength: p.MaxLength, Pattern: p.Pattern, Format: p.Format, Unsupported: p.Unsupported,
		Properties: Parameters(p.Properties), AnyOf: Parameters(p.AnyOf), OneOf: Parameters(p.OneOf)}
	if p.Items != nil {
		it := Parameter(*p.Items)
		out.Items = &it
	}
	return out
}

// CallResult maps a tool call's result to the protocol's.
func CallResult(r probe.CallResult) protocol.MCPCallResult {
	return protocol.MCPCallResult{Server: r.Server, Tool: r.Tool, IsError: r.IsError, Content: r.Content,
		Attachments:       convertAll(r.Attachments, func(a probe.Attachment) protocol.Attachment { return protocol.Attachment(a) }),
		StructuredContent: r.StructuredContent, DurationMs: r.DurationMs}
}

// FieldErrors maps argument errors to the protocol's.
func FieldErrors(fs []probe.FieldError) []protocol.FieldError {
	return convertAll(fs, func(f probe.FieldError) protocol.FieldError { return protocol.FieldError(f) })
}

// Error is the error member of a reply for a failure of package probe:
// mcp_<code> with details.probeCode (and stderrTail), mcp_tool_not_found,
// or mcp_invalid_arguments with details.fields.
func Error(e *probe.Error) *protocol.Error {
	switch e.Code {
	case probe.CodeToolNotFound:
		return &protocol.Error{Code: protocol.CodeMCPToolNotFound, Message: e.Message}
	case probe.CodeInvalidArguments:
		return &protocol.Error{Code: protocol.CodeMCPInvalidArguments, Message: e.Message,
			Details: &protocol.ErrorDetails{Fields: FieldErrors(e.Fields)}}
	}
	return &protocol.Error{Code: protocol.MCPCode(e.Code), Message: e.Message,
		Details: &protocol.ErrorDetails{ProbeCode: e.Code, StderrTail: e.StderrTail}}
}

// LogEntries maps call log entries to the protocol's (the same fields);
// nil stays nil.
func LogEntries(es []calllog.Entry) []protocol.LogEntry {
	return convertAll(es, func(e calllog.Entry) protocol.LogEntry { return protocol.LogEntry(e) })
}

// convertAll maps each element of in with f; nil stays nil.
func convertAll[In, Out any](in []In, f func(In) Out) []Out {
	if in == nil {
		return nil
	}
	out := make([]Out, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}
