// Package protocol is the contract between ccproxy and webviews: the Go side
// of the websocket protocol specified in SPEC.md (version Version, "1"),
// whose JSON Schemas (schema/), examples (examples/) and TypeScript types
// (ts/) live in this directory too.
//
// # One source
//
// The Go data types (messages.go, history.go) are the source of the
// machine-readable contract. `go generate ./protocol` runs
// internal/gen, which writes
//
//	schema/*.json       SchemaFiles: jsonschema.For of each data type (schema.go),
//	                    with the descriptions of `jsonschema:"..."` field tags, the
//	                    constraints of `schema:"..."` tags (ref=, minLength=, ...),
//	                    the rules between fields of schemaRules methods (rules.go),
//	                    shared definitions and enums made from the Go constant
//	                    lists (validate.go), and the normalized-event definitions,
//	                    the one hand-written part (schema_events.go);
//	ts/protocol.gen.ts  json-schema-to-typescript run by internal/tsgen on its
//	                    Schema (internal/tsgen/schema.go), the same schemas
//	                    (SchemaOf, SharedSchemas) with every data type a
//	                    definition named as ts/protocol.ts exports it.
//
// Generated files are committed; TestGeneratedSchemasAreCurrent and
// TestGeneratedTypeScriptIsCurrent fail when they are stale.
//
// Validation at run time uses the same schemas: on first use (schemas, a
// sync.OnceValue) each data type's schema is generated and resolved with
// jsonschema-go; validating is then read-only. jsonschema-go gives the
// verdict; when it rejects, explain (validate.go) walks the schema and the
// value to name every problem with its path, preferring a schema's
// errorMessage. The few rules JSON Schema cannot state (a sort order, a
// count matching a list, firstSeq <= lastSeq+1) are checkSemantics methods.
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
// DecodeRequest checks the data against the type's schema, then decodes it
// (a number that does not fit the Go field is reported with its path), then
// checks the semantic rules. Any rejection is an *Error whose message names
// the type, the field path and the problem ("session/send:
// data.images[0].mediaType: must be one of ..."), with the same list in
// Error.Details.Fields; ParseFrame returns the
// id it could read so the error reply still answers the right request
// (null otherwise); of a frame the proxy discards unread (too large, or
// refused for memory) PeekID reads the id from its first bytes. Checks that
// need more than the frame (a directory that must exist, answers that must
// name the questions asked) report with FieldErrorf, in the same shape.
// NewErrorReply sends an *Error as is and turns any other
// error into a generic internal error, so paths and secrets stay in logs.
//
// Outbound, NewPush validates data (Data.Validate: its encoding against its
// schema) before encoding it, so the proxy never sends a frame its own
// schema would reject. Session events, the hot path,
// are framed by AppendSessionEvent, which copies the normalized event from
// package stream byte for byte: it is never decoded or re-encoded here.
//
// Go clients (tests, tools) use the mirror image: NewRequest to send,
// ParseFrame with DecodePush or DecodeResult to receive. Package client
// (client/) is the Go client built on them: a connection's dial, its
// requests, the hello and the pushes routed by session, and blob
// downloads; `ccproxy acp` and Go tests use it.
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
// tables, the compiled schemas (built once under sync.OnceValue, read only
// afterwards) and the patterns explain compiles (a sync.Map, which guards
// it; its keys are the patterns of the package's own schemas, a bounded
// set); every function is safe for concurrent use. (internal/gen
// and the tests run json2ts, a node program; the package itself never does.)
package protocol
