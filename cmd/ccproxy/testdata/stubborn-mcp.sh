#!/bin/sh
# An MCP server that never answers and ignores SIGTERM, SIGHUP, SIGINT and
# stdin EOF (it never reads stdin); sleep inherits the ignored signals.
trap '' TERM HUP INT
exec sleep 1000000
