//go:build !linux

package sandbox

import "errors"

const unsupported = "Landlock is only available on Linux"

// Probe reports that Landlock is unavailable outside Linux.
func Probe() LandlockStatus { return LandlockStatus{Reason: unsupported} }

func restrict(*LandlockRules) error { return errors.New(unsupported) }
