#!/bin/sh
# An MCP server that leaves claude's process group and session with setsid,
# never answers, and ignores SIGTERM, SIGHUP, SIGINT and stdin EOF.
exec setsid sh -c 'trap "" TERM HUP INT; exec sleep 1000001'
