//go:build !linux

package sandbox

import "errors"

var errNoSeccomp = errors.New("seccomp is only available on Linux")

func seccompSupported() bool { return false }

// socketRule is seccomp_linux.go's; nothing reads it here.
type socketRule struct{ allowUnix, tcpOnly bool }

func installSocketFilter(socketRule) error { return errNoSeccomp }

func bwrapFilter(bool) ([]byte, error) { return nil, errNoSeccomp }

func undumpable() error { return nil }
