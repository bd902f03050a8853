package protocol

// For the external tests (package protocol_test): generate_ts_test.go,
// whose tsgen imports protocol.
var FirstDiffLine = firstDiffLine

const Regenerate = regenerate
