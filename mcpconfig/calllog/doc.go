// Package calllog keeps ccproxy's MCP call log: every MCP tool call seen in
// a session (a tool_use paired with its tool_result) and every direct call
// (mcp/call, a probe.CallResult), appended as JSON lines to a file per
// project, rotated by size, and read back as the last N entries, optionally
// of one server (the data of an mcp/log reply, mapped to the protocol's by
// package proxy/mcpcalls).
//
// # How data moves through it
//
//	session events (normalized by package stream)
//	  assistant tool_use with "mcp" ──▶ Pairer ──(pending, bounded)──┐
//	  user tool_result ───────────────▶ Pairer ──▶ Entry ────────────┤
//	mcp/call result ──▶ DirectEntry ──▶ Entry ───────────────────────┤
//	                                                                  ▼
//	                        Log.Append ──▶ FILE (JSON lines) ──rotate──▶ FILE.1 … FILE.Keep
//	                        Log.Last(n, server) ◀── FILE, FILE.1, … (newest first)
//
// An entry records the time the call ended, its kind (session or direct),
// the session, server, tool, tool_use id, whether it failed, its duration
// (when the start was seen) and the size of its result: the bytes of the
// normalized text plus the decoded bytes of its attachments. Inputs and
// outputs are kept only with Options.StoreIO, each capped at
// Options.MaxIOBytes.
//
// # Concurrency
//
// A Log is safe for concurrent use: Append and Last are serialized by a
// mutex, and Close is idempotent. One process should own a log file (two
// writers would race on rotation). A Pairer is not safe for concurrent
// use: keep one per session, fed by the goroutine that reads the session's
// events; it holds no goroutine and needs no Close.
package calllog
