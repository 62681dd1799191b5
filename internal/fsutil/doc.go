// Package fsutil holds the file-writing primitives every part of Odin uses.
// Writes are atomic (a temporary file renamed over the target, so readers
// see the old or the new content and a crash never leaves a half-written
// file) and cannot be redirected: every operation opens its path relative
// to an allowed root without following a symbolic link in any component
// (openat2 with RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS on Linux, os.Root
// elsewhere), so a directory swapped for a symlink between a check and the
// write makes the write fail instead of landing outside the root.
// Temporary files are named .NAME.odin-PID-RANDOM.tmp so that leftovers of
// a killed writer can be recognised and removed.
package fsutil
