//go:build !linux

package sandbox

func closeOwnProc() error { return nil }

func dropCapabilities() error { return nil }
