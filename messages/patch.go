package messages

// Isolation is where a specialist writes: in the session's project (the
// default) or in a private git worktree whose changes come back as a Patch.
type Isolation string

// Isolation kinds.
const (
	IsolationNone     Isolation = ""
	IsolationWorktree Isolation = "worktree"
)

// Patch is what an isolated specialist changed in its worktree, against
// the tree it started from. Each file carries its whole base and result
// content rather than a unified diff: the bytes stay exact (CRLF, no final
// newline, binary), and the node applying it needs nothing but the patch
// for a 3-way merge, whatever repository or machine it was made in.
type Patch struct {
	// Base names what the worktree started from: the commit, plus "+dirty"
	// when the session's uncommitted changes were copied in.
	Base  string      `json:"base"`
	Files []PatchFile `json:"files"`
	// Skipped are paths changed in the worktree that a patch cannot carry
	// (symbolic links, submodules, files over the size limit), with why.
	Skipped []string `json:"skipped,omitempty"`
}

// PatchFile is one changed file. Path is slash-separated and relative to
// the project root.
type PatchFile struct {
	Path string `json:"path"`
	// Op is add, modify or delete.
	Op string `json:"op"`
	// Base is the content the specialist started from (nil for add), New
	// its content at the end (nil for delete).
	Base []byte `json:"base,omitempty"`
	New  []byte `json:"new,omitempty"`
	// Exec is set when the result is executable.
	Exec bool `json:"exec,omitempty"`
}

// Patch file operations.
const (
	PatchAdd    = "add"
	PatchModify = "modify"
	PatchDelete = "delete"
)

// PatchConflict is why an isolated specialist's patch was not applied:
// the files where the project changed in a way that cannot be merged with
// the specialist's change. Nothing of the patch was applied.
type PatchConflict struct {
	Files []string `json:"files"`
}
