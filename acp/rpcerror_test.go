package acp

import (
	"errors"
	"fmt"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ccproxy/ccproxy/protocol"
)

// A bad_request is invalid params also when Backend.Request wrapped it
// (its own validation of the frame it sends, "session/create: ...").
func TestRPCErrorWrappedBadRequest(t *testing.T) {
	err := rpcError("session/new", fmt.Errorf("session/create: %w", &protocol.Error{Code: protocol.CodeBadRequest, Message: "data.cwd: bad"}))
	var re *sdk.RequestError
	if !errors.As(err, &re) || re.Code != -32602 {
		t.Errorf("a wrapped bad_request: %v, want -32602", err)
	}
}
