//go:build !linux

package sandbox

import "errors"

var errNoSeccomp = errors.New("seccomp is only available on Linux")

func seccompSupported() bool { return false }

func installSocketFilter(bool) error { return errNoSeccomp }

func bwrapFilter(bool) ([]byte, error) { return nil, errNoSeccomp }

func undumpable() error { return nil }
