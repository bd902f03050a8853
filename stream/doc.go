// Package stream reads, classifies and normalizes the stream-json output of
// the Claude Code CLI, and builds the JSON that goes to its stdin. It is
// pure: bytes in, bytes out; no processes, no sockets, no goroutines.
//
// # Data flow
//
//	claude stdout ──► Reader ──► Normalizer ──► Event{Type, Subtype, SessionID, UUID, ParentToolUseID, JSON, Attachments}
//	                  lines ≤ cap    classify,
//	                  (else an       normalize
//	                  oversized_line
//	                  event)
//
// Reader splits the output into lines of any length up to a cap (default
// 64 MiB); a longer line is drained without being held and replaced by
// {"type":"ccproxy","subtype":"oversized_line","bytes":N,"limit":L,"preview":"…"}.
// Blank lines are skipped and "\r" trimmed.
//
// Normalizer turns each line into exactly one valid JSON object in valid
// UTF-8. A line that is not a JSON object becomes
// {"type":"ccproxy","subtype":"noise","text":"…"}. In user events every
// tool_result whose content is an array becomes plain text — all text parts
// in order, joined with "\n" — and every image, audio, blob or unknown part
// leaves a placeholder such as "[image image/png 1.2 KiB]" in the text and an
// entry in an "attachments" list on the block {kind, mediaType, size,
// sha256, uri?, data? | url?, error?}; tool_use_result gets the same
// treatment. tool_use and tool_result blocks of MCP tools, streamed tool_use
// starts and can_use_tool requests get "mcp":{"server","tool"}, taken from
// tool_use_meta, or from the server names of system/init (longest match, as
// names may hold "_" and "-"); the tool of a result is found from its
// tool_use_id in a bounded per-stream map. Attachment data stays inline,
// is stripped, or goes to a Sink that returns a URL (AttachmentMode).
//
// Everything else passes through byte for byte: a line needing no rewrite
// is returned as is, without a copy; a rewrite splices new values into the
// line at the offsets gjson reports, so untouched fields keep their exact
// bytes. Normalizing a normalized stream changes nothing.
//
// Long lines (64 KiB and more — base64 images, 5 MB texts) are read through
// a skeleton: one vectorized pass copies the line with its long plain
// strings replaced by "", gjson validates and navigates that copy, and a
// span table maps values and offsets back to the line (skeleton.go). This
// keeps the cost of a megabyte image near that of decoding and hashing it.
//
// UserTurn, ControlRequest, ControlSuccess and ControlError build the only
// lines ccproxy writes to the CLI's stdin: one JSON object and "\n" each.
//
// None of the types is safe for concurrent use; use one Reader and one
// Normalizer per stream.
package stream
