// Package fakeapi is a fake of the Anthropic Messages API on a loopback
// httptest server, scripted from Go, so that ccproxy's tests (and demos) can
// drive the real Claude Code CLI with no network.
//
// # How a request moves through it
//
// The CLI (pointed at the fake by Server.Env: ANTHROPIC_BASE_URL, a fake key,
// no retries, no nonessential traffic, a private HOME) POSTs
// /v1/messages?beta=true. The server reads the body (bounded), parses it into
// a Request (model, system, messages with their blocks, offered tools),
// records it (bounded; Requests, WaitFor), and asks the Responder for a
// Reply. A nil reply falls back to a short text, so side requests nobody
// scripted never hang the CLI. The reply becomes SSE — message_start, ping,
// content_block_start/delta/stop per block (text_delta, thinking_delta +
// signature_delta, input_json_delta), message_delta with the stop reason,
// message_stop — with texts cut into several deltas and an optional delay
// between events, or one JSON message for a non-streaming request, or a
// non-200 {"type":"error",...} answer. POST /v1/messages/count_tokens
// answers {"input_tokens":N}; anything else gets a 404 error, and is
// recorded, so a test can see what else the CLI asked for.
//
// # Scripting
//
// A Responder is a func(*Request) *Reply. OnText answers a prompt that
// contains a keyword, step by step as tool results come back (Request.Step);
// OnToolResults answers tool results (Summarize describes them
// deterministically); Sequence answers main-loop requests in order; First
// combines them:
//
//	srv := fakeapi.Start(t, fakeapi.First(
//		fakeapi.OnText("IMAGE", fakeapi.CallTool("mcp__testmcp__image", nil)),
//		fakeapi.OnToolResults(fakeapi.Summarize),
//	))
//	cmd.Env = srv.Env(home)
//
// What the real CLI 2.1.329 sends: the prompt arrives as the last text block
// of a user message that starts with <system-reminder> blocks; the messages
// may contain a role "system" entry; MCP tools are deferred (not among
// Request.Tools, which hold ToolSearch and a DeferredToolPlaceholder), yet a
// tool_use of an MCP tool is executed; several tool_use blocks in one reply
// come back as tool_results in one user message.
package fakeapi
