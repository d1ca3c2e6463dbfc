package artifacts

import "time"

// Artifact is one file a step produced, as stored in the blob store.
type Artifact struct {
	// Name is the file's path relative to the step's work directory, with slashes.
	Name string `json:"name"`
	// Key is the blob key it is stored under.
	Key string `json:"key"`
	// Size is its length in bytes; SHA256 the hex digest of its content.
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// LiveOutput is the heartbeat detail of a running shell or agent step: the tail of its
// output (shell) or what it is doing (agent). It is bounded: at most activities.LiveTailLines
// lines of at most activities.LiveLineBytes each, activities.LiveTailBytes in all.
type LiveOutput struct {
	// Attempt is the attempt that sent it (1 for the first).
	Attempt int `json:"attempt"`
	// Lines are the last complete lines the attempt printed, stdout and stderr in the
	// order they came, oldest first.
	Lines []LiveLine `json:"lines,omitempty"`
	// Progress says what a step without output lines is doing, e.g. an agent step's
	// "waiting for provider anthropic (model claude-x), 12s".
	Progress string `json:"progress,omitempty"`
	// At is when the worker sent it.
	At time.Time `json:"at"`
}

// LiveLine is one line of a running step's output.
type LiveLine struct {
	// Seq numbers the attempt's lines from 1, so a reader of successive heartbeats prints
	// only the lines it has not seen.
	Seq int64 `json:"seq"`
	// Stream is "stdout" or "stderr".
	Stream string `json:"stream"`
	// Text is the line without its line break, valid UTF-8.
	Text string `json:"text"`
}
