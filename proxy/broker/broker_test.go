package broker

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/ccproxy/ccproxy/protocol"
)

// AskUserQuestion and ExitPlanMode are told apart from tool uses; questions
// that do not parse stay a tool use.
func TestClassifyPermission(t *testing.T) {
	for _, tc := range []struct {
		tool, input, kind string
		questions         int
		plan              string
	}{
		{"Bash", `{"command":"ls"}`, protocol.PermissionKindTool, 0, ""},
		{"mcp__s__t", `{}`, protocol.PermissionKindTool, 0, ""},
		{"AskUserQuestion", `{"questions":[{"question":"Q?","header":"H","options":[{"label":"A"},{"label":"B","description":"b"}],"multiSelect":true}]}`, protocol.PermissionKindQuestion, 1, ""},
		{"AskUserQuestion", `{"questions":[]}`, protocol.PermissionKindTool, 0, ""},
		{"AskUserQuestion", `{"questions":[{"question":"Q?","options":[{"label":""}]}]}`, protocol.PermissionKindTool, 0, ""},
		{"AskUserQuestion", `{"questions":"nope"}`, protocol.PermissionKindTool, 0, ""},
		{"ExitPlanMode", `{}`, protocol.PermissionKindPlan, 0, ""},
		{"ExitPlanMode", `{"plan":"1. A"}`, protocol.PermissionKindPlan, 0, "1. A"},
	} {
		pr := protocol.PermissionRequest{Session: "s-x", RequestID: "r", ToolName: tc.tool, Input: json.RawMessage(tc.input)}
		classifyPermission(&pr)
		if pr.Kind != tc.kind || len(pr.Questions) != tc.questions || pr.Plan != tc.plan {
			t.Errorf("%s %s: kind %q, %d questions, plan %q", tc.tool, tc.input, pr.Kind, len(pr.Questions), pr.Plan)
		}
		if err := pr.Validate(); err != nil {
			t.Errorf("%s %s: %v", tc.tool, tc.input, err)
		}
	}
}

// The answer claude gets: answers added to the question's input as the CLI
// expects them; "always" echoes the CLI's localSettings suggestions, or
// makes one for the tool; answers and always only where they belong.
func TestPermissionAnswer(t *testing.T) {
	question := &permission{kind: protocol.PermissionKindQuestion, tool: "AskUserQuestion", input: json.RawMessage(`{"questions":[{"question":"Which color?","options":[{"label":"Red"}]}]}`)}
	resp, err := permissionAnswer(question, &protocol.PermissionRespond{Behavior: "allow", Answers: map[string]string{"Which color?": "Red"}}, "")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(resp)
	if string(b) != `{"behavior":"allow","updatedInput":{"questions":[{"question":"Which color?","options":[{"label":"Red"}]}],"answers":{"Which color?":"Red"}}}` {
		t.Errorf("question answer %s", b)
	}
	// Answers whose keys are not the questions asked, or none: claude would
	// read "the user did not answer"; refused, naming the key.
	for _, tc := range []struct {
		answers map[string]string
		want    string
	}{
		{map[string]string{"Wrong question?": "Red"}, `permission/respond: data.answers: "Wrong question?" is not a question asked; the questions are "Which color?"`},
		{map[string]string{"Which color?": "Red", "Extra?": "x"}, `"Extra?" is not a question asked`},
		{map[string]string{}, `permission/respond: data.answers: empty; answer the questions asked ("Which color?")`},
	} {
		_, err := permissionAnswer(question, &protocol.PermissionRespond{Behavior: "allow", Answers: tc.answers}, "")
		var pe *protocol.Error
		if !errors.As(err, &pe) || pe.Code != protocol.CodeBadRequest || !strings.Contains(pe.Message, tc.want) ||
			pe.Details == nil || len(pe.Details.Fields) != 1 || pe.Details.Fields[0].Path != "data.answers" {
			t.Errorf("answers %v: %v, want bad_request on data.answers containing %q", tc.answers, err, tc.want)
		}
	}
	if _, err := permissionAnswer(question, &protocol.PermissionRespond{Behavior: "allow", Always: true}, ""); protocol.CodeOf(err) != protocol.CodeBadRequest {
		t.Errorf("always for a question: %v", err)
	}

	tool := &permission{kind: protocol.PermissionKindTool, tool: "mcp__s__t", input: json.RawMessage(`{"x":1}`),
		suggestions: json.RawMessage(`[{"type":"addRules","rules":[{"toolName":"mcp__s__t"}],"behavior":"allow","destination":"localSettings"},{"type":"setMode","mode":"acceptEdits","destination":"session"}]`)}
	if _, err := permissionAnswer(tool, &protocol.PermissionRespond{Behavior: "allow", Answers: map[string]string{"q": "a"}}, ""); protocol.CodeOf(err) != protocol.CodeBadRequest || !strings.Contains(err.Error(), "only for a question") {
		t.Errorf("answers for a tool: %v", err)
	}
	resp, _ = permissionAnswer(tool, &protocol.PermissionRespond{Behavior: "allow", Always: true}, "")
	b, _ = json.Marshal(resp)
	if string(b) != `{"behavior":"allow","updatedInput":{"x":1},"updatedPermissions":[{"type":"addRules","rules":[{"toolName":"mcp__s__t"}],"behavior":"allow","destination":"localSettings"}]}` {
		t.Errorf("always with suggestions %s", b)
	}
	// Rules the proxy wrote itself: claude applies them to the session only.
	resp, _ = permissionAnswer(tool, &protocol.PermissionRespond{Behavior: "allow", Always: true}, destSession)
	b, _ = json.Marshal(resp)
	if string(b) != `{"behavior":"allow","updatedInput":{"x":1},"updatedPermissions":[{"type":"addRules","rules":[{"toolName":"mcp__s__t"}],"behavior":"allow","destination":"session"}]}` {
		t.Errorf("always, recorded by the proxy %s", b)
	}
	tool.suggestions = nil
	resp, _ = permissionAnswer(tool, &protocol.PermissionRespond{Behavior: "allow", Always: true, UpdatedInput: json.RawMessage(`{"x":2}`)}, "")
	b, _ = json.Marshal(resp)
	if string(b) != `{"behavior":"allow","updatedInput":{"x":2},"updatedPermissions":[{"behavior":"allow","destination":"localSettings","rules":[{"toolName":"mcp__s__t"}],"type":"addRules"}]}` {
		t.Errorf("always without suggestions %s", b)
	}
	resp, _ = permissionAnswer(tool, &protocol.PermissionRespond{Behavior: "allow"}, destSession)
	if _, ok := resp["updatedPermissions"]; ok {
		t.Error("updatedPermissions without always")
	}
}
