// Package versionflag holds the version set at link time and answers
// `odin --version` with it before the rest of Odin's packages initialise.
//
// Go runs every linked package's initialisation before main: for Odin
// ~250 initialisers (openai-go registering its union types, protobuf
// descriptors and prometheus' registry through protoactor, SQLite's
// tables...), which were most of `odin --version`'s time and, through
// the page faults of code and data they touch, most of its memory. The
// linker orders initialisation by import path among the packages whose
// imports are done, so this package, importing only os (whose own
// imports sort early), runs before nearly all of them, and its init
// prints the version and exits when that is all the command line asks.
// It must not import more: strings, for one (and so runtime/debug), is
// scheduled after most third-party packages, and with it this package.
//
// Without a version set at link time (go install, go build) the version
// comes from the build information, which needs runtime/debug: then the
// init leaves `--version` to main, which prints the same line later.
//
// Only cmd/odin may import it: its init acts on the process's arguments.
package versionflag

import (
	"os"
	"runtime"
)

// Version is set at build time (make build does) with
// -ldflags "-X github.com/odin-code/odin/internal/versionflag.Version=v1.2.3".
var Version = ""

// Line is what `odin --version` and `odin version` print for version v.
func Line(v string) string {
	return "odin " + v + " (" + runtime.Version() + ", " + runtime.GOOS + "/" + runtime.GOARCH + ")\n"
}

// Asked reports whether args (the command line after the program name)
// ask for the version alone: --version, -v or version.
func Asked(args []string) bool {
	return len(args) == 1 && (args[0] == "--version" || args[0] == "-v" || args[0] == "version")
}

func init() {
	if Version == "" || !Asked(os.Args[1:]) {
		return
	}
	// A failed write is left to main, which reports it as every
	// command's errors are reported (and fails the same way).
	if _, err := os.Stdout.WriteString(Line(Version)); err == nil {
		os.Exit(0)
	}
}
