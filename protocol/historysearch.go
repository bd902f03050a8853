package protocol

import (
	"encoding/json"
	"time"
)

// Bounds of history/search (SPEC §3, history/search).
const (
	DefaultHistorySearchLimit = 20
	MaxHistorySearchLimit     = 100
	maxHistorySearchQuery     = 256
	// MaxHistorySearchMatches is the most matches a hit carries.
	MaxHistorySearchMatches = 3
)

// Roles of a history/search match: what the matched text is.
const (
	SearchRoleUser      = "user"      // text the user typed
	SearchRoleAssistant = "assistant" // text of a reply
	SearchRoleTool      = "tool"      // a tool use: its name, then its input's values
)

// HistorySearch is the data of history/search: the past sessions whose
// conversation has every word of Query, newest first.
type HistorySearch struct {
	Query   string `json:"query" jsonschema:"Words to find, all of them, in any order, case and accents ignored; the last word also matches as the start of a word." schema:"minLength=1,maxLength=maxHistorySearchQuery"`
	Project string `json:"project,omitempty" jsonschema:"Only sessions of this project directory; default: every project." schema:"ref=ProjectDir"`
	Limit   *int64 `json:"limit,omitempty" jsonschema:"Sessions of the reply; default 20." schema:"minimum=1,maximum=MaxHistorySearchLimit"`
}

// HistorySearchResult is the data of the reply to history/search.
type HistorySearchResult struct {
	Hits []HistorySearchHit `json:"hits"`
	// More says more sessions matched than Limit.
	More bool `json:"more" jsonschema:"More sessions matched than the limit."`
	// Indexed counts the sessions the index holds (what was searched).
	Indexed int `json:"indexed" jsonschema:"Sessions searched (in the index)." schema:"minimum=0"`
}

// HistorySearchHit is one session that matched, with its newest matches.
type HistorySearchHit struct {
	ID      string               `json:"id" jsonschema:"What history/read and session/create's resume take." schema:"ref=ClaudeSessionId"`
	Project string               `json:"project" jsonschema:"The session's working directory; empty if none of its records says."`
	Title   string               `json:"title" jsonschema:"As history/list gives it."`
	Updated time.Time            `json:"updated" schema:"ref=Timestamp"`
	Matches []HistorySearchMatch `json:"matches" jsonschema:"The session's newest matches, newest first; at most 3." schema:"maxItems=MaxHistorySearchMatches"`
}

// HistorySearchMatch is one matching part of a record: a snippet of its
// text around the words found, and where they are in the snippet.
type HistorySearchMatch struct {
	UUID    string `json:"uuid,omitempty" jsonschema:"The record's uuid, as history/read's events carry it."`
	Role    string `json:"role" schema:"ref=SearchRole"`
	Time    string `json:"time,omitempty" jsonschema:"The record's timestamp, as written."`
	Snippet string `json:"snippet" jsonschema:"Text around the match (… where it was cut), secrets masked."`
	// Highlights are [start, end) offsets into Snippet, in UTF-16 code
	// units (JavaScript string indices), ascending, not overlapping.
	Highlights []HistorySearchSpan `json:"highlights" jsonschema:"Where the words found are in snippet: [start, end) in UTF-16 code units (JavaScript string indices), ascending."`
}

// HistorySearchSpan is a [Start, End) range of a snippet, in UTF-16 code
// units.
type HistorySearchSpan struct {
	Start int `json:"start" schema:"minimum=0"`
	End   int `json:"end" schema:"minimum=0"`
}

func (r HistorySearchResult) MarshalJSON() ([]byte, error) {
	type plain HistorySearchResult
	r.Hits = orEmpty(r.Hits)
	for i := range r.Hits {
		r.Hits[i].Matches = orEmpty(r.Hits[i].Matches)
		for j := range r.Hits[i].Matches {
			r.Hits[i].Matches[j].Highlights = orEmpty(r.Hits[i].Matches[j].Highlights)
		}
	}
	return json.Marshal(plain(r))
}

func (d HistorySearch) Validate() error       { return validateValue(d) }
func (d HistorySearchResult) Validate() error { return validateValue(d) }
