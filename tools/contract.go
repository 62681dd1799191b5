package tools

import (
	"github.com/odin-code/odin/tools/tool"
)

// The tool contract lives in package tool, a leaf that policy, the sandbox
// and adapters import without importing the implementations here; these
// aliases keep the tools package the one place callers name.
type (
	Class           = tool.Class
	Info            = tool.Info
	Result          = tool.Result
	Tool            = tool.Tool
	Handler[In any] = tool.Handler[In]
	Option          = tool.Option
	Access          = tool.Access
	PathGuard       = tool.PathGuard
	ReadDeny        = tool.ReadDeny
	SmallModel      = tool.SmallModel
	Env             = tool.Env
	Editor          = tool.Editor
	PathLocks       = tool.PathLocks
	FileStamp       = tool.FileStamp
	ReadState       = tool.ReadState
	Permission      = tool.Permission
	HookVerdict     = tool.HookVerdict
	HookRunner      = tool.HookRunner
	CallRef         = tool.CallRef
)

// Tool classes and path accesses.
const (
	ClassRead    = tool.ClassRead
	ClassWrite   = tool.ClassWrite
	ClassExecute = tool.ClassExecute
	ClassWeb     = tool.ClassWeb
	ClassSpawn   = tool.ClassSpawn
	ClassMCP     = tool.ClassMCP
	AccessRead   = tool.AccessRead
	AccessWrite  = tool.AccessWrite
)

// ErrUnknownTool is returned by Set.Run for a name the set does not hold.
var ErrUnknownTool = tool.ErrUnknownTool

// Errorf returns an error Result whose output is the formatted message.
func Errorf(format string, args ...any) Result { return tool.Errorf(format, args...) }

// WithCall returns ctx naming the tool call it runs for; see tool.WithCall.
var WithCall = tool.WithCall

// WithSchema lets a tool refine its derived schema before it is resolved.
var WithSchema = tool.WithSchema

// New builds a Tool whose input is In; see tool.New.
func New[In any](name string, class Class, description string, h Handler[In], opts ...Option) Tool {
	return tool.New(name, class, description, h, opts...)
}

// IsDenied reports whether err is a permission denial.
func IsDenied(err error) bool { return tool.IsDenied(err) }

// StampOf computes the stamp of content read at modTime.
var StampOf = tool.StampOf

// NewReadState returns an empty ReadState.
func NewReadState() *ReadState { return tool.NewReadState() }

// ErrEditorDeclined is tool.ErrEditorDeclined.
var ErrEditorDeclined = tool.ErrEditorDeclined
