// Command ccproxy is a daemon and toolbox that sits between chat UIs and the
// Claude Code CLI.
//
// main is tiny: it sets up signal handling and calls run(ctx, args, stdin,
// stdout, stderr), which parses the subcommand and its flags and returns an
// error; errors are printed once, in exitCode, which also decides the exit
// status (2 for usage errors, 1 for others).
//
// Subcommands:
//
//	normalize   claude stream-json on stdin -> normalized events on stdout
//	            (package stream), so `claude ... | ccproxy normalize` works.
//	mcp         MCP config resolution and inspection (package mcpconfig).
//	version     (also --version) the build's version, VCS revision and time,
//	            Go version and platform, and the Claude Code CLI found. The
//	            version is main.version when a release build stamped it
//	            (scripts/release.sh), else the module version in the build info.
package main
