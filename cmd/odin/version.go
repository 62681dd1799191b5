package main

import (
	"fmt"
	"io"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/odin-code/odin/internal/versionflag"
)

// versionString is Odin's version: the one set at link time, else the
// module version Go recorded (go install module@version), else "dev".
func versionString() string {
	if versionflag.Version != "" {
		return versionflag.Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// versionLine is what `odin --version` and `odin version` print; with a
// version set at link time the binary answers `odin --version` before
// main (versionflag).
func versionLine() string { return versionflag.Line(versionString()) }

func newVersionCmd(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print Odin's version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprint(stdout, versionLine())
			return err
		},
	}
}
