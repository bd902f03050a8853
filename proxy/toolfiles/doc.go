// Package toolfiles serves the files that tool results point to, over the
// proxy's HTTP: the attachments package stream takes out of tool results
// (images, audio, blobs), kept by sha256 in a store bounded in bytes
// (Blobs, at /v1/blobs/<sha256>, SPEC §9), and the files the Claude Code
// CLI saved in a Claude session's tool-results folder, which tool results
// mention as "saved to …/tool-results/NAME" (ToolResults, at
// /v1/tool-results/<claude session id>/<name>). Both are served with the
// same headers: their media type, no sniffing, a sandbox with nothing
// allowed, inline only for images and audio. The proxy mounts both behind
// its token check (proxy/remote's Gate); the package knows nothing of
// sessions.
//
// # Data flow
//
//	claude's tool result ─► stream.Normalizer ─► Blobs.PutAttachment (a copy; the least recently
//	  used evicted past the bound) ─► the URL in the event
//	GET /v1/blobs/<sha256> ─► Blobs.ServeHTTP
//	GET /v1/tool-results/<id>/<name> ─► ToolResults.ServeHTTP: the names checked, the file opened
//	  through an os.Root of <Home>/.claude/projects (no link leads out), a regular file only
//
// # Goroutines and locks
//
// None of its own; handlers run on the HTTP server's goroutines. Blobs.mu
// guards the store (a leaf: nothing is locked under it). ToolResults has
// no state.
package toolfiles
