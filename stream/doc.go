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
// under the cap costs its length (an eighth more at most, below) plus one
// piece, not twice its length; the pieces never leave the Reader (the line
// it returns is on the heap).
//
// Buffers over 1 MiB (a long line's, a decoded attachment's) come from
// process-wide pools, eight sizes per doubling up to 128 MiB, so at most an
// eighth larger than asked (bigbuf.go, sync.Pool: safe from any
// goroutine), and go back when the line or attachment is done: a stream of
// images reuses a few buffers instead of allocating one per line, and what
// a burst leaves in the pools is let go within two garbage collections.
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
// (valid.go; strings checked eight bytes at a time, their UTF-8 too, so a
// valid line read without a skeleton is not scanned again for it) and that
// records, on the way, the members of the top-level object (and, for each
// whose value is an object, that object's first "type": a stream_event's
// event type without a second look), whether a raw "\r" stood between
// tokens (it is replaced by a space), and the extent of every object or
// array of 256 bytes or more (n.conts, in the order they open, so sorted by
// offset; at most one entry per 256 bytes of the line).
// The rest is read by a walker over the validated text (scan.go): it yields
// gjson.Result values, finds the end of a string with one scanner
// (stringEnd, shared with the skeleton), and steps over a recorded
// container at once (binary search by offset), so the several readings of
// a tool result (to find the message, its content, each block, each part)
// walk over its bytes about once. A block's type is read without a walk
// when it is its first member; a tool_result block's members are read in
// one pass; a value is made into a Result (which unescapes a string) only
// when its kind matters. A content array is flattened once per event:
// tool_use_result, which repeats the tool_result content byte for byte,
// reuses its text and attachments (including their JSON). A text part
// printed as the CLI prints it, {"type":"text","text":"…"}, is read straight
// from its token into the escaped text in one pass (appendTextToken: safe
// runs copied in bulk, the other characters written as
// gjson.AppendJSONString writes them, FuzzAppendTextToken compares them);
// the texts of an event share a buffer kept from event to event. Base64
// data is decoded and hashed a block at a time (for a Sink, into one
// buffer that it is then given whole), so each block is hashed while it is
// in the cache.
//
// What outlives a line is copied: the short ids of an event (uuid, session
// and parent ids, uncommon types) into shared 1 KiB blocks (keep), so most
// events allocate nothing; a kept id may hold its block in memory. An MCP
// tool's names and its "mcp" value are made once per tool (at most 1024
// remembered), as are the ids of the last 4096 tool_use blocks.
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
