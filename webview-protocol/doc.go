// Package protocol is the contract between ccproxy and webviews: the Go side
// of the websocket protocol specified in SPEC.md (version Version, "1"),
// whose JSON Schemas (schema/), examples (examples/) and TypeScript types
// (ts/protocol.ts) live in this directory too. Tests keep the five in step.
//
// # Frames
//
// Every websocket text frame is one JSON object, a Frame:
//
//	{"type": T, "id"?: ID, "data": {...}}                            request or push
//	{"type": "reply", "id": ID, "ok": true, "data": {...}}           success reply
//	{"type": "reply", "id": ID, "ok": false, "error": {code, message}}
//
// Clients send requests (RequestTypes: session/create, session/send, ...,
// mcp/call); each carries an id and gets exactly one reply. The proxy sends
// replies and pushes (PushTypes: hello first, then session/event,
// permission/request, mcp/status, ...). Each type has a data struct here
// (SessionSend, SessionEvent, MCPStatus, ...), each request a result struct
// (SessionSubscribeResult, ...), and errors carry a stable Code.
//
// # How data moves through the package
//
// Inbound (proxy side), one client frame:
//
//	bytes --ParseFrame--> Frame (envelope checked; the id kept byte for byte)
//	      --DecodeRequest--> *SessionSend, *MCPCall, ... (shape and values checked)
//	      --the proxy acts--> NewReply(f.ID, result) or NewErrorReply(f.ID, err)
//
// Any rejection is an *Error whose message names the type, the field path
// and the problem ("session/send: data.images[0].mediaType: must be one of
// ..."), with the same list in Error.Details.Fields; ParseFrame returns the
// id it could read so the error reply still answers the right request
// (null otherwise). NewErrorReply sends an *Error as is and turns any other
// error into a generic internal error, so paths and secrets stay in logs.
//
// Outbound, NewPush validates data before encoding it, so the proxy never
// sends a frame its own schema would reject. Session events, the hot path,
// are framed by AppendSessionEvent, which copies the normalized event from
// package stream byte for byte: it is never decoded or re-encoded here.
//
// Go clients (tests, tools) use the mirror image: NewRequest to send,
// ParseFrame with DecodePush or DecodeResult to receive.
//
// # The npm package @ccproxy/client (ts/)
//
// ts/ is also an npm package: the TypeScript types (protocol.ts) and a
// small client (client.ts: typed requests, events exactly once across
// reconnects by resubscribing with afterSeq, session/gap, permission
// callbacks, blobs), built by tsc (tsconfig.build.json) into dist/, ESM
// with declarations and no runtime dependencies; package.json is the one
// place its version is written. Its Node tests (ts/test/) run against a
// real `ccproxy serve --demo`: TestClientPackage builds ccproxy, compiles
// the package with the TypeScript of scripts/test.sh, checks what
// `npm pack` would publish, compiles the READMEs' examples, and runs
// `node --test` with the `ws` package as the WebSocket.
//
// The package is pure: no I/O, no goroutines, no state beyond read-only
// tables; every function is safe for concurrent use.
package protocol
