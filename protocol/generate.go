package protocol

// The JSON Schemas (schema/*.json) and the TypeScript types
// (ts/protocol.gen.ts) are generated from the Go types of this package.
//go:generate go run ./internal/gen
