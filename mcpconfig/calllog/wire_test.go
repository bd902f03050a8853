package calllog_test

import (
	"github.com/ccproxy/ccproxy/mcpconfig/calllog"
	"github.com/ccproxy/ccproxy/proxy/mcpcalls"
)

func init() { calllog.Wire.LogEntries = mcpcalls.LogEntries }
