package protocol

import (
	"encoding/json"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// eventDefsJSON defines what a normalized stream-json event (SessionEvent's
// Event) looks like. This package never decodes events (they are copied byte
// for byte); their shape is package stream's contract, checked by the
// schemas and by stream's tests. Having no Go type to derive them from, they
// are the one hand-written part of defs.json.
const eventDefsJSON = `
{
  "NormalizedEvent": {
    "type": "object",
    "required": [
      "type"
    ],
    "properties": {
      "type": {
        "type": "string",
        "minLength": 1
      }
    },
    "description": "One stream-json event of the Claude Code CLI after normalization by package stream. Unknown types and members pass through untouched. Control protocol lines are never forwarded.",
    "allOf": [
      {
        "if": {
          "type": "object",
          "properties": {
            "type": {
              "enum": [
                "user",
                "assistant"
              ]
            }
          }
        },
        "then": {
          "type": "object",
          "properties": {
            "message": {
              "$ref": "defs.json#/$defs/NormalizedMessage"
            },
            "tool_use_result": {
              "$ref": "defs.json#/$defs/NormalizedToolUseResult"
            }
          }
        }
      },
      {
        "if": {
          "type": "object",
          "properties": {
            "type": {
              "const": "ccproxy"
            }
          }
        },
        "then": {
          "$ref": "defs.json#/$defs/CcproxyEvent"
        }
      },
      {
        "if": {
          "type": "object",
          "properties": {
            "type": {
              "enum": [
                "control_request",
                "control_response",
                "control_cancel_request"
              ]
            }
          }
        },
        "then": {"not": {}, "errorMessage": "control protocol events are never forwarded"}
      }
    ]
  },
  "NormalizedMessage": {
    "type": "object",
    "properties": {
      "content": {
        "anyOf": [
          {
            "type": "string"
          },
          {
            "type": "array",
            "items": {
              "$ref": "defs.json#/$defs/ContentBlock"
            }
          }
        ]
      }
    },
    "description": "An Anthropic message; its content is a string or blocks."
  },
  "ContentBlock": {
    "type": "object",
    "required": [
      "type"
    ],
    "properties": {
      "type": {
        "type": "string",
        "minLength": 1
      }
    },
    "allOf": [
      {
        "if": {
          "type": "object",
          "properties": {
            "type": {
              "const": "tool_result"
            }
          }
        },
        "then": {
          "$ref": "defs.json#/$defs/ToolResultBlock"
        }
      },
      {
        "if": {
          "type": "object",
          "properties": {
            "type": {
              "const": "tool_use"
            }
          }
        },
        "then": {
          "$ref": "defs.json#/$defs/ToolUseBlock"
        }
      }
    ]
  },
  "ToolResultBlock": {
    "type": "object",
    "required": [
      "type",
      "tool_use_id",
      "content"
    ],
    "properties": {
      "tool_use_id": {
        "type": "string",
        "minLength": 1
      },
      "content": {
        "type": "string",
        "description": "Always a string after normalization: every text part, in order, joined with \\n; each non-text part leaves a placeholder such as [image image/png 3.9 KiB]."
      },
      "is_error": {
        "type": "boolean"
      },
      "attachments": {
        "type": "array",
        "items": {
          "$ref": "defs.json#/$defs/Attachment"
        }
      },
      "mcp": {
        "$ref": "defs.json#/$defs/McpRef"
      }
    }
  },
  "ToolUseBlock": {
    "type": "object",
    "required": [
      "type",
      "id",
      "name",
      "input"
    ],
    "properties": {
      "id": {
        "type": "string",
        "minLength": 1
      },
      "name": {
        "type": "string",
        "minLength": 1
      },
      "input": {
        "type": "object"
      },
      "mcp": {
        "$ref": "defs.json#/$defs/McpRef"
      }
    }
  },
  "NormalizedToolUseResult": {
    "description": "The CLI's side copy of a tool result, normalized: an array of content blocks becomes {content: text, attachments?}; an object's content array becomes text; anything else (strings such as \"Error: ...\", built-in tools' result objects) is left as it was.",
    "if": {
      "type": "object"
    },
    "then": {
      "type": "object",
      "properties": {
        "attachments": {
          "type": "array",
          "items": {
            "$ref": "defs.json#/$defs/Attachment"
          }
        }
      }
    }
  },
  "CcproxyEvent": {
    "type": "object",
    "required": [
      "type",
      "subtype"
    ],
    "properties": {
      "type": {
        "const": "ccproxy"
      },
      "subtype": {
        "type": "string",
        "minLength": 1
      }
    },
    "description": "A synthetic event made by ccproxy. Unknown subtypes may appear; ignore them.",
    "allOf": [
      {
        "if": {
          "type": "object",
          "properties": {
            "subtype": {
              "const": "oversized_line"
            }
          }
        },
        "then": {
          "type": "object",
          "required": [
            "bytes",
            "preview"
          ],
          "properties": {
            "bytes": {
              "type": "integer",
              "minimum": 0,
              "description": "Length of the dropped line."
            },
            "limit": {
              "type": "integer",
              "minimum": 0,
              "description": "The line length cap."
            },
            "preview": {
              "type": "string",
              "description": "Its first 256 bytes."
            }
          }
        }
      },
      {
        "if": {
          "type": "object",
          "properties": {
            "subtype": {
              "const": "noise"
            }
          }
        },
        "then": {
          "type": "object",
          "required": [
            "text"
          ],
          "properties": {
            "text": {
              "type": "string",
              "description": "A line that was not a JSON object, capped at 4 KiB."
            },
            "truncated": {
              "type": "boolean"
            },
            "bytes": {
              "type": "integer",
              "minimum": 0,
              "description": "Length of the whole line, when truncated."
            }
          }
        }
      }
    ]
  }
}`

// eventDefs returns the event definitions, parsed, their references to
// each other made with refPrefix.
func eventDefs(refPrefix string) map[string]*jsonschema.Schema {
	var defs map[string]*jsonschema.Schema
	src := strings.ReplaceAll(eventDefsJSON, `"defs.json#/$defs/`, `"`+refPrefix)
	if err := json.Unmarshal([]byte(src), &defs); err != nil {
		panic("protocol: eventDefsJSON: " + err.Error())
	}
	return defs
}
