//go:build !linux

package sandbox

import "errors"

const unsupported = "Landlock is only available on Linux"

// Probe reports that Landlock is unavailable outside Linux.
func Probe() Status { return Status{Reason: unsupported} }

func execConfined([]string, string, []string) error { return errors.New(unsupported) }
