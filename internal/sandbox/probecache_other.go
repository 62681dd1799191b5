//go:build !linux

package sandbox

// fileIdentity is unused where bubblewrap does not run: no record.
func fileIdentity(string) (string, bool) { return "", false }

// hostState is unused where bubblewrap does not run: no record.
func hostState() (string, bool) { return "", false }
