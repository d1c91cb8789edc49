package fsquery

// The results of the filesystem tools (ops renders them; their details and
// structured content). Each has "content", the reference server's whole
// structured result: the text the model reads.

// TextResult is a filesystem operation whose result is text.
type TextResult struct {
	Path    string `json:"path,omitempty" jsonschema:"the path, relative to the workspace"`
	Content string `json:"content" jsonschema:"the result text"`
}

// ListResult is a directory listing.
type ListResult struct {
	Path    string  `json:"path" jsonschema:"the directory, relative to the workspace"`
	Entries []Entry `json:"entries" jsonschema:"the directory's entries"`
	Content string  `json:"content" jsonschema:"the listing as text"`
}

// SearchResult is the paths a search found.
type SearchResult struct {
	Matches []string `json:"matches" jsonschema:"the paths found"`
	Content string   `json:"content" jsonschema:"the paths, a line each"`
}

// MoveResult is a move or rename.
type MoveResult struct {
	Source      string `json:"source" jsonschema:"the path moved, relative to the workspace"`
	Destination string `json:"destination" jsonschema:"its new path"`
	Content     string `json:"content" jsonschema:"the result text"`
}

// AllowedResult names the directories the tools may touch.
type AllowedResult struct {
	Directories []string `json:"directories" jsonschema:"the directories"`
	Content     string   `json:"content" jsonschema:"the directories as text"`
}

// Output is what the reference filesystem server's tools declare as their
// structured result, and all that hunk's drop-in puts there.
type Output struct {
	Content string `json:"content" jsonschema:"the result text"`
}

// MediaOutput is read_media_file's structured result.
type MediaOutput struct {
	Content []MediaItem `json:"content" jsonschema:"the file as the one content block"`
}
