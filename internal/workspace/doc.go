// Package workspace knows where the project is: its root, how a path is
// resolved against it (symlinks included), whether a resolved path lies
// inside a directory (a component-wise test, never a string prefix), and
// which files the project's ignore rules exclude.
//
// Functions here are pure or read-only on the file system and safe for
// concurrent use.
package workspace
