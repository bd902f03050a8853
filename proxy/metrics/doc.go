// Package metrics is the proxy's Prometheus metrics, served at GET
// /metrics (token required) from a registry of their own (never the
// global default one). It does not import package proxy: what it counts
// comes as plain values (a kind, a duration, an error, a claudecli.Exit,
// probe results), and what it reads at a scrape comes as a State from the
// function given to New.
//
// Two kinds. What is a state (sessions by state, clients, pending
// permission requests and control requests, replay-log bytes, inbound
// bytes, MCP servers by status, websocket frames and bytes) is read at
// scrape time (State, filled by the proxy's metricsState), so it cannot
// drift from the truth. What happens (events logged, drops, permission
// waits, control latency from claudecli.Config.OnControlDone, probes,
// exits and restarts, normalization time from
// claudecli.Config.OnNormalized, sampled 1 line in 64, failed spills) is
// counted where it happens by one-line calls to the methods of Metrics,
// which only do atomic adds (prometheus counters and histograms). Frames
// in and out are counted by each wsconn.Conn (out under its lock as the
// write pump takes them: no shared atomic per frame); a connection's
// counts are added to the proxy's WS totals when it is removed.
//
// Label values are bounded and never carry session ids, tool inputs or any
// text a client or claude chose: each label has a fixed set of values,
// anything else counts as "other".
//
// # Goroutines and locks
//
// None of its own. The counting methods take only the prometheus
// collectors' own locks, so they may be called with any lock of the proxy
// held (a session counts under Session.mu). A scrape (Handler) calls the
// State function on the HTTP server's goroutine; that function takes the
// proxy's locks in its lock order (proxy/doc.go). A nil *Metrics counts
// nothing.
package metrics
