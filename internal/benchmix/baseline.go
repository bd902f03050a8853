package benchmix

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Baseline normalizes the straightforward way, for comparison: it decodes
// each line with encoding/json into map[string]any, flattens the tool
// results and annotates MCP tools as ccproxy does (images become a
// placeholder and a stripped attachment), and re-encodes the line. It is
// not safe for concurrent use.
type Baseline struct {
	tools map[string][2]string
}

// Normalize returns the normalized line.
func (bl *Baseline) Normalize(line []byte) []byte {
	var ev map[string]any
	if err := json.Unmarshal(line, &ev); err != nil {
		out, _ := json.Marshal(map[string]any{"type": "ccproxy", "subtype": "noise", "text": string(line)})
		return out
	}
	if bl.tools == nil {
		bl.tools = map[string][2]string{}
	}
	switch ev["type"] {
	case "assistant":
		msg, _ := ev["message"].(map[string]any)
		blocks, _ := msg["content"].([]any)
		for _, bk := range blocks {
			blk, _ := bk.(map[string]any)
			name, _ := blk["name"].(string)
			if blk["type"] == "tool_use" && strings.HasPrefix(name, "mcp__") {
				srv, tool, _ := strings.Cut(name[5:], "__")
				blk["mcp"] = map[string]any{"server": srv, "tool": tool}
				id, _ := blk["id"].(string)
				bl.tools[id] = [2]string{srv, tool}
			}
		}
	case "stream_event":
		inner, _ := ev["event"].(map[string]any)
		blk, _ := inner["content_block"].(map[string]any)
		name, _ := blk["name"].(string)
		if inner["type"] == "content_block_start" && blk["type"] == "tool_use" && strings.HasPrefix(name, "mcp__") {
			srv, tool, _ := strings.Cut(name[5:], "__")
			blk["mcp"] = map[string]any{"server": srv, "tool": tool}
			id, _ := blk["id"].(string)
			bl.tools[id] = [2]string{srv, tool}
		}
	case "user":
		msg, _ := ev["message"].(map[string]any)
		blocks, _ := msg["content"].([]any)
		for _, bk := range blocks {
			blk, _ := bk.(map[string]any)
			if blk["type"] != "tool_result" {
				continue
			}
			if arr, ok := blk["content"].([]any); ok {
				text, atts := baselineFlatten(arr)
				blk["content"] = text
				if len(atts) > 0 {
					blk["attachments"] = atts
				}
			}
			id, _ := blk["tool_use_id"].(string)
			if ref, ok := bl.tools[id]; ok {
				blk["mcp"] = map[string]any{"server": ref[0], "tool": ref[1]}
			}
		}
		switch tur := ev["tool_use_result"].(type) {
		case []any:
			text, atts := baselineFlatten(tur)
			m := map[string]any{"content": text}
			if len(atts) > 0 {
				m["attachments"] = atts
			}
			ev["tool_use_result"] = m
		case map[string]any:
			if arr, ok := tur["content"].([]any); ok {
				text, atts := baselineFlatten(arr)
				tur["content"] = text
				if len(atts) > 0 {
					tur["attachments"] = atts
				}
			}
		}
	}
	out, err := json.Marshal(ev)
	if err != nil {
		panic(err)
	}
	return out
}

func baselineFlatten(arr []any) (string, []any) {
	var parts []string
	var atts []any
	for _, el := range arr {
		blk, _ := el.(map[string]any)
		switch blk["type"] {
		case "text":
			s, _ := blk["text"].(string)
			parts = append(parts, s)
		case "image":
			src, _ := blk["source"].(map[string]any)
			data, _ := src["data"].(string)
			dec, _ := base64.StdEncoding.DecodeString(data)
			sum := sha256.Sum256(dec)
			mt, _ := src["media_type"].(string)
			parts = append(parts, fmt.Sprintf("[image %s %s]", mt, formatSize(len(dec))))
			atts = append(atts, map[string]any{"kind": "image", "mediaType": mt, "size": len(dec), "sha256": hex.EncodeToString(sum[:])})
		}
	}
	return strings.Join(parts, "\n"), atts
}

// formatSize spells sizes as stream.FormatSize does (this package may not
// import stream: stream's tests import it).
func formatSize(n int) string {
	switch {
	case n < 1024:
		return strconv.Itoa(n) + " B"
	case n < 1024*1024:
		return strconv.FormatFloat(float64(n)/1024, 'f', 1, 64) + " KiB"
	}
	return strconv.FormatFloat(float64(n)/(1024*1024), 'f', 1, 64) + " MiB"
}
