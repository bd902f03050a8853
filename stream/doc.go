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
// Blank lines are skipped and "\r" trimmed. Lines up to 1 MiB go in a kept
// buffer; a longer one goes in a buffer sized from the last long line, or
// in pieces of up to 16 MiB that are never copied while the line grows and
// are joined once when it ends. A line found over the cap is dropped
// without that copy, so it costs at most the cap plus one piece. On unix
// the pieces are anonymous mappings outside the Go heap (pieces_unix.go),
// each unmapped as soon as it is copied into the joined line, so a line
// under the cap costs its length plus one piece, not twice its length; the
// pieces never leave the Reader (the line it returns is on the heap).
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
// line at the offsets of the values it replaces, so untouched fields keep
// their exact bytes. Normalizing a normalized stream changes nothing.
// NormalizeTo writes the event to an io.Writer instead of returning it: a
// rewrite is written as its pieces — runs of the line, new values — with no
// buffer for the whole event; inline attachment data in the attachments
// JSON is a piece pointing into the line, not a copy. `ccproxy normalize`
// uses it, so a 100 MB image line costs about the line, not three times.
//
// # Reading a line once
//
// Each line is validated by a validator that gives gjson.Valid's answer
// (valid.go; strings checked eight bytes at a time) and that records, on
// the way, the members of the top-level object and the extent of every
// large object or array (the memo). The rest is read by a walker over the
// validated text (scan.go): it yields gjson.Result values, finds the end of
// a value with strings.IndexByte, and steps over a remembered container at
// once, so the several readings of a tool result (to find the message, its
// content, each block, each part) walk over its bytes about once. A content
// block's members are read in one pass. A content array is flattened once
// per event: tool_use_result, which repeats the tool_result content byte
// for byte, reuses its text and attachments (including their JSON). Text is
// escaped by an appender that copies safe runs in bulk and writes the same
// bytes as gjson.AppendJSONString (escape.go); a text part whose escapes
// would be written again is copied as it is. Base64 data is hashed a block
// at a time unless a Sink wants it whole.
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
// Normalizer per stream. Normalizer.Valid makes only the validation, the
// floor a Normalizer's cost is measured against (internal/benchmix).
package stream
