package probe

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// paramsDir holds the tool schemas of the real servers the suite runs
// (captured by TestToolsRealServers with -update) and the parameter trees
// built from them (rewritten by TestParametersRealSchemas with -update).
const paramsDir = "../../testdata/mcpconfig/params"

// realServers are the servers whose schemas are kept in paramsDir.
var realServers = []string{"everything", "filesystem", "memory", "testmcp"}

// storedTool is one tool of a stored schema file.
type storedTool struct {
	Name        string          `json:"name"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

type storedParams struct {
	Name       string      `json:"name"`
	Parameters []Parameter `json:"parameters"`
	Notes      []string    `json:"notes,omitempty"`
}

func readStoredTools(t testing.TB, server string) []storedTool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(paramsDir, server+".tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tools []storedTool
	if err := json.Unmarshal(data, &tools); err != nil {
		t.Fatalf("%s.tools.json: %v", server, err)
	}
	return tools
}

// writeIndented writes v as indented JSON (raw messages keep their key
// order).
func writeIndented(t testing.TB, path string, v any) {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// paramsFor builds the stored form of the trees of tools.
func paramsFor(t testing.TB, tools []storedTool) []storedParams {
	t.Helper()
	var out []storedParams
	for _, tool := range tools {
		s, err := ParseToolSchema(tool.InputSchema)
		if err != nil {
			t.Fatalf("%s: %v", tool.Name, err)
		}
		ps := s.Parameters()
		checkParamShape(t, ps)
		out = append(out, storedParams{Name: tool.Name, Parameters: ps, Notes: s.Notes()})
	}
	return out
}

// TestParametersRealSchemas converts the schemas of the real servers'
// tools and compares the trees with the golden files.
func TestParametersRealSchemas(t *testing.T) {
	for _, server := range realServers {
		t.Run(server, func(t *testing.T) {
			got := paramsFor(t, readStoredTools(t, server))
			golden := filepath.Join(paramsDir, server+".params.json")
			if *update {
				writeIndented(t, golden, got)
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(got)
			if !sameJSON(t, string(b), string(want)) {
				t.Errorf("parameter trees differ from %s (run with -update to accept):\n%s", golden, b)
			}
		})
	}
}
