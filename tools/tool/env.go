package tool

import (
	"context"
	"crypto/sha256"
	"errors"
	"io/fs"
	"sync"
	"time"
)

// Access is the kind of access a tool asks for on a path.
type Access string

// Path accesses.
const (
	AccessRead  Access = "read"
	AccessWrite Access = "write"
)

// PathGuard resolves and authorises the paths tools touch. Implementations
// clean the path, make it absolute against the project root, resolve
// symlinks (for a file that does not exist yet, its nearest existing
// parent) and check the result component-wise against the allowed roots.
type PathGuard interface {
	// Resolve returns the resolved absolute path or an error whose text is
	// fit for the model. Errors that implement interface{ Denied() bool }
	// are permission denials.
	Resolve(ctx context.Context, path string, access Access) (string, error)
}

// IsDenied reports whether err is a permission denial.
func IsDenied(err error) bool {
	var d interface{ Denied() bool }
	return errors.As(err, &d) && d.Denied()
}

// ReadDeny is the read deny list (readdeny.Rules implements it): the
// files whose contents the model never sees, credentials and .env files.
// Tools that read or list paths consult it after the PathGuard.
type ReadDeny interface {
	// Check reports the rule that denies reading path (absolute), testing
	// it as given and with its symlinks resolved.
	Check(path string) (rule string, denied bool)
	// Hides reports whether a walk should leave out the entry at path, of
	// type typ, whose parent directory the walk admitted already.
	Hides(path string, typ fs.FileMode) bool
}

// SmallModel is the cheap model tools use to summarise (ContextSummarizer,
// WebFetch).
type SmallModel interface {
	Complete(ctx context.Context, system, user string) (string, error)
}

// Env is the per-call environment of a tool: who is calling, where, and
// with which state. An Env belongs to one agent instance; its ReadState is
// that agent's own.
type Env struct {
	// Root is the project root: absolute, cleaned and symlink-resolved.
	Root string
	// Agent is the calling agent's name ("orchestrator", "code", ...).
	Agent string
	// AgentID identifies the agent instance (a task ID for specialists).
	AgentID string
	// SessionID is the session the call belongs to.
	SessionID string
	// Mode is the mode of the message being processed (ask, plan, edit).
	Mode string
	// Reads records what this agent has read; write tools consult it.
	Reads *ReadState
	// Guard authorises paths. Required for every tool that takes a path.
	Guard PathGuard
	// DenyRead, when set, is the read deny list: file tools refuse its
	// paths (reading and editing) and walks leave them out.
	DenyRead ReadDeny
	// BeforeWrite, when set, is called with the resolved path before a tool
	// changes or creates a file, so the file can be checkpointed first. An
	// error aborts the write.
	BeforeWrite func(path string) error
	// IntendWrite, when set, is called after BeforeWrite with the content
	// about to be written, so the checkpoint knows Odin's after-state even
	// if the process dies between the write and the end of the turn. An
	// error aborts the write.
	IntendWrite func(path string, content []byte) error
	// BeforeCommand, when set, is called before a command runs with the
	// root it runs in, so the workspace can be checkpointed first (a
	// command may change any file); the after function it returns (nil:
	// nothing to do) is called once the command is over, also when it
	// failed, to record what it changed, and returns the files it changed
	// (absolute; no directories), which the call reports as its Files.
	// An error aborts the command.
	BeforeCommand func(ctx context.Context, root string) (after func(context.Context) (changed []string, err error), err error)
	// Small is the small model, for tools that summarise.
	Small SmallModel
	// Publish, when set, receives progress events of long-running tools.
	Publish func(event any)
	// Locks, when set, serializes writes to the same file across the
	// agents of a session (parallel specialists): a write tool holds the
	// path's lock from its freshness check to its write.
	Locks *PathLocks
	// Editor, when set, is the editor Odin runs in (ACP's fs methods):
	// the file tools read text files and write files through its buffers,
	// after the Guard has authorised the path.
	Editor Editor
	// ReadOnlyCommands runs the agent's commands with the project
	// read-only, whatever the mode: an agent confined to some files (Test
	// writes test files only) writes them through the write tools, whose
	// guard enforces the confinement, never through a command.
	ReadOnlyCommands bool
	// Done, when set, is closed when the agent run ends: state a tool keeps
	// for the run (ShellSession's shell, Python's interpreter) goes with
	// it. Nil means the state lives until the tool set is closed.
	Done <-chan struct{}
}

// Editor reads and writes text files through an editor's buffers (the
// Agent Client Protocol's fs/read_text_file and fs/write_text_file), so
// that the model sees the user's unsaved edits and the editor shows Odin's
// changes in the buffers the user has open. Paths are absolute and
// already authorised. A read error makes the caller fall back to the disk
// (a file the editor cannot open is still on disk); a write error fails
// the write, except ErrEditorDeclined, which sends it to the disk.
type Editor interface {
	ReadTextFile(ctx context.Context, path string) (string, error)
	WriteTextFile(ctx context.Context, path, content string) error
}

// ErrEditorDeclined is an Editor's answer for a write it does not handle
// (the client offers no write method, or cannot write empty content): the
// tool writes the disk itself.
var ErrEditorDeclined = errors.New("tools: the editor does not handle this write")

// PathLocks hands out one mutex per path. Share one per session; the zero
// value is ready to use.
type PathLocks struct {
	m sync.Map // path → *sync.Mutex
}

// Lock locks path and returns its unlock function.
func (l *PathLocks) Lock(path string) (unlock func()) {
	mu, _ := l.m.LoadOrStore(path, new(sync.Mutex))
	mu.(*sync.Mutex).Lock()
	return mu.(*sync.Mutex).Unlock
}

// LockPath locks path when the Env has Locks, else does nothing.
func (e *Env) LockPath(path string) (unlock func()) {
	if e == nil || e.Locks == nil {
		return func() {}
	}
	return e.Locks.Lock(path)
}

// FileStamp is what an agent saw when it read a file.
type FileStamp struct {
	Hash    [sha256.Size]byte
	ModTime time.Time
	Size    int64
}

// StampOf computes the stamp of content read at modTime.
func StampOf(content []byte, modTime time.Time) FileStamp {
	return FileStamp{Hash: sha256.Sum256(content), ModTime: modTime, Size: int64(len(content))}
}

// ReadState records the files an agent has read, so writes can require a
// fresh read. It is safe for concurrent use.
type ReadState struct {
	mu    sync.Mutex
	files map[string]FileStamp
}

// NewReadState returns an empty ReadState.
func NewReadState() *ReadState { return &ReadState{files: map[string]FileStamp{}} }

// Record notes that path (resolved, absolute) was read with stamp.
func (r *ReadState) Record(path string, stamp FileStamp) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.files[path] = stamp
}

// Get returns the stamp recorded for path.
func (r *ReadState) Get(path string) (FileStamp, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.files[path]
	return s, ok
}

// Forget removes path, e.g. after the agent itself rewrote it and recorded
// the new stamp elsewhere.
func (r *ReadState) Forget(path string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.files, path)
}
