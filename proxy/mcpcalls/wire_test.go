package mcpcalls

import (
	"testing"

	"github.com/ccproxy/ccproxy/mcpconfig/calllog"
	"github.com/ccproxy/ccproxy/mcpconfig/probe"
	"github.com/ccproxy/ccproxy/protocol"
)

// Packages probe and calllog spell the protocol's codes, statuses and
// kinds themselves: the mapping passes them through, so they must agree.
func TestWireConstantsAgree(t *testing.T) {
	for _, c := range [][2]string{
		{probe.CodeCommandNotFound, protocol.ProbeCommandNotFound},
		{probe.CodeServerNotFound, protocol.ProbeServerNotFound},
		{probe.CodeTimeout, protocol.ProbeTimeout},
		{probe.CodeConnectionRefused, protocol.ProbeConnectionRefused},
		{probe.CodeAuthRequired, protocol.ProbeAuthRequired},
		{probe.CodeProcessExited, protocol.ProbeProcessExited},
		{probe.CodeProtocolError, protocol.ProbeProtocolError},
		{probe.CodeTransportUnsupported, protocol.ProbeTransportUnsupported},
		{probe.CodeNotActive, protocol.ProbeNotActive},
		{probe.StatusConnected, protocol.MCPConnected},
		{probe.StatusFailed, protocol.MCPFailed},
		{probe.StatusNeedsAuth, protocol.MCPNeedsAuth},
		{probe.StatusDisabled, protocol.MCPDisabled},
		{probe.StatusAwaitingApproval, protocol.MCPAwaitingApproval},
		{probe.StatusRejected, protocol.MCPRejected},
		{calllog.KindSession, protocol.LogKindSession},
		{calllog.KindDirect, protocol.LogKindDirect},
	} {
		if c[0] != c[1] {
			t.Errorf("%q differs from the protocol's %q", c[0], c[1])
		}
	}
	// Every probe code maps to its own reply code, not to internal.
	for _, code := range []string{probe.CodeCommandNotFound, probe.CodeServerNotFound, probe.CodeTimeout,
		probe.CodeConnectionRefused, probe.CodeAuthRequired, probe.CodeProcessExited, probe.CodeProtocolError,
		probe.CodeTransportUnsupported, probe.CodeNotActive} {
		if e := Error(&probe.Error{Code: code, Message: "m"}); e.Code == protocol.CodeInternal || e.Details.ProbeCode != code {
			t.Errorf("%s maps to %+v", code, e)
		}
	}
}
