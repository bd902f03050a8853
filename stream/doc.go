// Package stream reads, classifies and normalizes the stream-json output of
// the Claude Code CLI. It is pure: bytes in, bytes out; no processes, no
// sockets.
package stream
