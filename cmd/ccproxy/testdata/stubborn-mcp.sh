#!/bin/sh
# A minimal stdio MCP server (no tools) that ignores SIGTERM, SIGHUP, SIGINT
# and stdin EOF: after EOF it keeps running. Run as
#   sh stubborn-mcp.sh NAME            # stays in claude's process group
#   sh stubborn-mcp.sh NAME setsid     # leaves it (and the session) first
if [ "$2" = setsid ]; then
	exec setsid sh "$0" "$1"
fi
trap '' TERM HUP INT
while IFS= read -r line; do
	id=$(printf '%s\n' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
	[ -n "$id" ] || continue # a notification
	case "$line" in
	*'"method":"initialize"'*)
		v=$(printf '%s\n' "$line" | sed -n 's/.*"protocolVersion":"\([^"]*\)".*/\1/p')
		printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"%s","capabilities":{"tools":{}},"serverInfo":{"name":"%s","version":"1.0.0"}}}\n' "$id" "${v:-2025-06-18}" "$1"
		;;
	*'"method":"tools/list"'*)
		printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[]}}\n' "$id"
		;;
	*)
		printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}\n' "$id"
		;;
	esac
done
exec sleep 1000000 # stdin EOF: ignored
