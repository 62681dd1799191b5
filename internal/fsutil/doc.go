// Package fsutil holds the one file-writing primitive every part of Odin
// uses: an atomic replacement, so that readers see the old or the new
// content and a crash or Ctrl-C never leaves a half-written file.
package fsutil
