//go:build !linux

package sandbox

import "syscall"

// Outside Linux the helper cannot adopt orphans: only the process group
// is killed (by the caller).
func becomeReaper(int) error { return nil }

func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

func sessionAttr(syscall.Signal) *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

func signalTree(syscall.Signal) {}

func killTree() {}
