// Package checkpoint snapshots files before a change set first writes them
// and restores them on undo. A Tracker belongs to one turn; it is safe for
// concurrent use because specialists write in parallel. Snapshots hold the
// content and mode of each file, and whether it existed at all, so undo
// can restore the original state byte for byte (deleting files the change
// set created). Before each write the content about to be written is
// recorded (IntendWrite), so after a crash undo can still tell a file in
// Odin's state from one in its before-state or one someone else changed.
// Restore reads and writes without following symbolic links, beneath the
// allowed roots, and refuses paths whose type changed. A symbolic link a
// command changed is recorded by its target and restored as a link, made
// in place (never written through).
package checkpoint
