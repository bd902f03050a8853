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
//	acp         an Agent Client Protocol agent on stdin/stdout (package acp),
//	            over an in-process proxy.Server configured as serve would be,
//	            or a running serve (--connect).
//	normalize   claude stream-json on stdin -> normalized events on stdout
//	            (package stream), so `claude ... | ccproxy normalize` works.
//	serve       live sessions over a websocket (package proxy); on loopback,
//	            or anywhere over TLS (--tls-cert/--tls-key, --tls-self-signed:
//	            proxy.SelfSignedCert for the proxy.ServedHosts), the one-time
//	            login link also drawn as a QR code (qr.go, yeqown/go-qrcode,
//	            Unicode half blocks) on stderr.
//	mcp         MCP config resolution and inspection (package mcpconfig).
//	status      GET /v1/health of a running serve, printed on one screen;
//	            a self-signed server is trusted by its certificate's SHA-256.
//	login-url   POST /v1/login/code of a running serve (with the token): a new
//	            one-time login link for the web UI, printed (and with --qr
//	            drawn); same --url/--token-file/--tls-fingerprint as status.
//	version     (also --version) the build's version, VCS revision and time,
//	            Go version and platform, and the Claude Code CLI found. The
//	            version is main.version when a release build stamped it
//	            (scripts/release.sh), else the module version in the build info.
//
// At start, serve removes the private --mcp-config directories that killed
// ccproxy processes left (mcpconfig.RemoveStale). Every child ccproxy starts
// goes through childproc's guard, which on Linux is this binary re-executed:
// the package's init runs it before main (see internal/childproc).
package main
