package probe_test

import (
	"github.com/ccproxy/ccproxy/mcpconfig/probe"
	"github.com/ccproxy/ccproxy/proxy/mcpcalls"
)

func init() {
	probe.Wire.Tools = mcpcalls.Tools
	probe.Wire.ProbeResults = mcpcalls.ProbeResults
	probe.Wire.CallResult = mcpcalls.CallResult
	probe.Wire.Error = mcpcalls.Error
}
