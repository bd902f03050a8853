// Package oauthmcp is test infrastructure: an MCP server on streamable HTTP
// that only answers requests bearing an access token, and a minimal OAuth 2.1
// authorization server of its own that issues those tokens. Both live on one
// loopback httptest server, so a test can run the real `claude mcp login`
// against it with no network.
//
// # Endpoints (all under Server.Base)
//
//	/mcp                                            the MCP endpoint (Server.URL): bearer check, then
//	                                                the go-sdk streamable handler; without a valid token
//	                                                401 + WWW-Authenticate: Bearer resource_metadata="…"
//	/.well-known/oauth-protected-resource[/mcp]     RFC 9728 protected-resource metadata
//	/.well-known/oauth-authorization-server         RFC 8414 authorization-server metadata
//	/register                                       RFC 7591 dynamic client registration (public clients:
//	                                                token_endpoint_auth_method "none")
//	/authorize                                      authorization code + PKCE (S256 only); it approves at
//	                                                once: 302 to the registered redirect_uri with code and
//	                                                state, so "opening" the URL is a plain GET that follows
//	                                                redirects
//	/token                                          grant_type authorization_code (checks client, redirect_uri,
//	                                                code_verifier) and refresh_token
//
// Codes are single-use and expire after a minute; access tokens last
// Options.TokenTTL. Every code and token issued is kept, so a test can assert that none of it leaked into a
// frame or a log (Server.Secrets), and Server.Revoke forgets the tokens so
// the next MCP request gets 401 again.
//
// # Concurrency
//
// The handlers run on the httptest server's goroutines; Server.mu guards the
// clients, codes, tokens and counters. Close (also a test cleanup of Serve)
// closes the httptest server, which waits for its handlers.
package oauthmcp
