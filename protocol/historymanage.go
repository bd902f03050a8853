package protocol

import (
	"encoding/json"
	"time"
)

// Managing the sessions the CLI keeps on disk (SPEC §3, history.manage):
// history/rename, history/delete, history/restore, history/trash and
// history/export.

// Bounds and values of the history.manage requests.
const (
	// MaxSessionTitleChars is the most characters of a title: what the CLI
	// keeps of one (rename_session cuts a longer title to 200).
	MaxSessionTitleChars = 200
	// TrashDays is how long a deleted session can be restored.
	TrashDays = 30

	ExportMarkdown = "markdown"
	ExportJSONL    = "jsonl"
)

// HistoryRename is the data of history/rename: give a session the title
// the CLI shows for it (a custom-title record in its file).
type HistoryRename struct {
	ID      string `json:"id" schema:"ref=ClaudeSessionId"`
	Project string `json:"project,omitempty" jsonschema:"The session's project directory: look only in its folder. Default: every project." schema:"ref=ProjectDir"`
	Title   string `json:"title" schema:"ref=SessionTitle"`
}

// HistoryRenameResult is the data of the reply to history/rename.
type HistoryRenameResult struct {
	ID    string `json:"id" schema:"ref=ClaudeSessionId"`
	Title string `json:"title" jsonschema:"The title as stored (surrounding spaces trimmed)."`
	Live  bool   `json:"live,omitempty" jsonschema:"The session's live claude renamed it (its rename_session request); otherwise the proxy appended the record."`
}

// HistoryDelete is the data of history/delete: move a session's files to
// the proxy's trash, restorable for TrashDays days.
type HistoryDelete struct {
	ID      string `json:"id" schema:"ref=ClaudeSessionId"`
	Project string `json:"project,omitempty" jsonschema:"The session's project directory: look only in its folder. Default: every project." schema:"ref=ProjectDir"`
}

// HistoryDeleteResult is the data of the reply to history/delete.
type HistoryDeleteResult struct {
	Trashed HistoryTrashEntry `json:"trashed"`
}

// HistoryTrashEntry is one deleted session in the trash.
type HistoryTrashEntry struct {
	ID      string    `json:"id" schema:"ref=ClaudeSessionId"`
	Project string    `json:"project" jsonschema:"The session's working directory (the cwd of its records); empty if none says."`
	Folder  string    `json:"folder" jsonschema:"The CLI's folder the files came from (under ~/.claude/projects); restore puts them back there."`
	Title   string    `json:"title" jsonschema:"The session's title when it was deleted."`
	Deleted time.Time `json:"deleted" schema:"ref=Timestamp"`
	Expires time.Time `json:"expires" jsonschema:"When the trash forgets it (deleted + 30 days)." schema:"ref=Timestamp"`
	Size    int64     `json:"size" jsonschema:"Bytes of its files." schema:"minimum=0"`
	Files   int       `json:"files" jsonschema:"How many files it holds (the session file, its subagents and tool results)." schema:"minimum=1"`
}

// HistoryRestore is the data of history/restore: put a deleted session's
// files back where they were.
type HistoryRestore struct {
	ID string `json:"id" schema:"ref=ClaudeSessionId"`
}

// HistoryRestoreResult is the data of the reply to history/restore.
type HistoryRestoreResult struct {
	Restored HistoryTrashEntry `json:"restored"`
}

// HistoryTrash is the data of history/trash: list the trash.
type HistoryTrash struct{}

// HistoryTrashResult is the data of the reply to history/trash: the
// deleted sessions that can be restored, most recently deleted first.
type HistoryTrashResult struct {
	Entries []HistoryTrashEntry `json:"entries"`
}

// HistoryExport is the data of history/export.
type HistoryExport struct {
	ID      string `json:"id" schema:"ref=ClaudeSessionId"`
	Project string `json:"project,omitempty" jsonschema:"The session's project directory: look only in its folder. Default: every project." schema:"ref=ProjectDir"`
	Format  string `json:"format" schema:"ref=ExportFormat"`
}

// HistoryExportResult is the data of the reply to history/export.
type HistoryExportResult struct {
	ID        string `json:"id" schema:"ref=ClaudeSessionId"`
	Format    string `json:"format" schema:"ref=ExportFormat"`
	Filename  string `json:"filename" jsonschema:"A file name to save it under (.md or .jsonl)." schema:"minLength=1"`
	Text      string `json:"text" jsonschema:"The export: Markdown, or the session file's lines (secrets masked)."`
	Truncated bool   `json:"truncated,omitempty" jsonschema:"The export was cut at a line to stay within the proxy's reply budget."`
}

// HistoryProject is one project of an all-projects history/list: every
// session of it is listed with this project (or folder, when its records
// name no cwd).
type HistoryProject struct {
	Project  string    `json:"project" jsonschema:"The project directory (the cwd its sessions' records name); empty when none does."`
	Folder   string    `json:"folder" jsonschema:"The CLI's folder for the project under ~/.claude/projects."`
	Sessions int       `json:"sessions" jsonschema:"Its sessions, over all pages." schema:"minimum=1"`
	Updated  time.Time `json:"updated" jsonschema:"Its newest session's updated." schema:"ref=Timestamp"`
}

func (r HistoryTrashResult) MarshalJSON() ([]byte, error) {
	type plain HistoryTrashResult
	r.Entries = orEmpty(r.Entries)
	return json.Marshal(plain(r))
}
