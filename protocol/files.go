package protocol

// Bounds of session/files (SPEC §3): a reply lists at most
// MaxSessionFilesLimit paths; a query is at most MaxSessionFilesQuery bytes.
const (
	DefaultSessionFilesLimit = 50
	MaxSessionFilesLimit     = 200
	MaxSessionFilesQuery     = 256
)

// SessionFiles is the data of session/files: files and folders under a
// live session's working directory whose path matches Query, for `@`
// mentions in a composer. The proxy lists the directory itself: it
// honours .gitignore files, skips hidden entries, never leaves the
// directory (links that lead out are not listed) and stops at its bounds.
type SessionFiles struct {
	Session string `json:"session" schema:"ref=SessionId"`
	Query   string `json:"query,omitempty" jsonschema:"Matched case-insensitively against each path relative to the session's directory: a name starting with it first, then paths containing it, then paths holding its characters in order. Empty: everything, shallowest first." schema:"maxLength=256"`
	Limit   *int64 `json:"limit,omitempty" jsonschema:"Default 50." schema:"minimum=1,maximum=200"`
}

// SessionFilesResult is the data of the reply to session/files.
type SessionFilesResult struct {
	Files []FileEntry `json:"files" jsonschema:"The best matches first, at most limit."`
	// Truncated: the listing stopped at the proxy's bounds (entries looked
	// at, time) before it had seen the whole directory.
	Truncated bool `json:"truncated,omitempty" jsonschema:"The listing stopped at the proxy's bounds (entries looked at, or time) before it had seen the whole directory: a longer query finds more."`
}

// FileEntry is one path of a session/files reply.
type FileEntry struct {
	Path string `json:"path" jsonschema:"Relative to the session's directory, with / between names; a folder's ends in /." schema:"minLength=1"`
	Dir  bool   `json:"dir,omitempty" jsonschema:"A folder."`
}

func (d SessionFiles) Validate() error       { return validateValue(d) }
func (d SessionFilesResult) Validate() error { return validateValue(d) }
