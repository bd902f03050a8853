// Package proxy runs live Claude Code sessions for webviews.
//
// Each session is one long-lived `claude -p --input-format stream-json` process.
// Its stdout flows through package stream (read, classify, normalize), gets a
// sequence number and a place in a bounded replay log, and is fanned out to any
// number of websocket clients, each with a bounded send queue. Commands flow
// back: client frame -> validation -> JSON built by package stream -> the
// session's single stdin writer.
package proxy
