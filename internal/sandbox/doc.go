// Package sandbox confines the file writes of a command to chosen
// directories with Linux Landlock, so that a command the policy allowed (or
// the user approved) still cannot write outside the project and the
// temporary and cache directories, whatever it turns out to do.
//
// Landlock restricts the calling thread and what it executes, and Go cannot
// run code between fork and exec, so the confinement is applied by the
// current binary re-executed as a small helper: Command builds an exec.Cmd
// that starts os.Executable() with a marker argument, and Main, called first
// thing in main (and in TestMain), recognises the marker, restricts its
// thread and execs the real command in place. Reads and execution are not
// restricted; only writes, removals, renames and creations are.
//
// Where Landlock is missing (other systems, old kernels, containers that
// filter the syscalls) Probe says why and Command returns the command
// unconfined together with that status, so the caller can report it.
package sandbox
