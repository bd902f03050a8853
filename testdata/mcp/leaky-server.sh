#!/bin/sh
# leaky-server.sh: a stdio MCP server that leaks secrets, for the tests of
# ccproxy's scrubbing (mcpconfig.Secrets). It writes $LEAKY_TOKEN (give it
# in the server's "env") and $ANTHROPIC_API_KEY (inherited) on stderr and in
# its error messages:
#   LEAKY_MODE=fail  answers initialize with a JSON-RPC error naming them,
#                    then exits 1;
#   otherwise        serves the tools "leak" (a JSON-RPC error naming them),
#                    "leak_result" (an isError result naming them) and
#                    "crash" (writes them on stderr and exits 1 mid-call).
# It reads one JSON-RPC message per line and finds "id" and "method" with
# sed, which is enough for the compact JSON the MCP Go SDK writes.
secrets="token=$LEAKY_TOKEN apikey=$ANTHROPIC_API_KEY"
echo "leaky: starting with $secrets" >&2
reply() { printf '{"jsonrpc":"2.0","id":%s,%s}\n' "$1" "$2"; }
while IFS= read -r line; do
	id=$(printf '%s\n' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
	[ -n "$id" ] || continue # a notification
	case "$line" in
	*'"method":"initialize"'*)
		if [ "$LEAKY_MODE" = fail ]; then
			reply "$id" "\"error\":{\"code\":-32603,\"message\":\"upstream refused $secrets\"}"
			echo "leaky: fatal: upstream refused $secrets" >&2
			exit 1
		fi
		reply "$id" '"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"leaky","version":"1"}}' ;;
	*'"method":"tools/list"'*)
		reply "$id" '"result":{"tools":[{"name":"leak","inputSchema":{"type":"object"}},{"name":"leak_result","inputSchema":{"type":"object"}},{"name":"crash","inputSchema":{"type":"object"}}]}' ;;
	*'"method":"tools/call"'*'"name":"leak_result"'*)
		reply "$id" "\"result\":{\"isError\":true,\"content\":[{\"type\":\"text\",\"text\":\"refused $secrets\"}]}" ;;
	*'"method":"tools/call"'*'"name":"leak"'*)
		reply "$id" "\"error\":{\"code\":-32603,\"message\":\"upstream refused $secrets\"}" ;;
	*'"method":"tools/call"'*'"name":"crash"'*)
		echo "leaky: crashing with $secrets" >&2
		exit 1 ;;
	*'"method":"'*)
		reply "$id" '"error":{"code":-32601,"message":"method not found"}' ;;
	esac
done
