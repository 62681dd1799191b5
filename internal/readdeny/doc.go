// Package readdeny owns the read deny list: the files whose contents
// neither the model's file tools nor the commands Odin runs may see —
// credentials in the home directory, the project's .env files, Odin's own
// tokens, and whatever the user adds with permissions.deny_read.
//
// One Rules value answers for both sides: the tools ask Check (or Hides,
// while walking a tree) before they read or list a path, and the sandbox
// asks Existing for the denied paths present on disk, which it hides from
// every child (an empty tmpfs over a directory, /dev/null over a file).
//
// Patterns use gitignore syntax. "~/x" is anchored at the home directory,
// "/x" is an absolute path (not the project root, unlike .gitignore), "./x"
// is anchored at the project root, and any other pattern is a .gitignore
// line of the project root: one without a slash matches at any depth
// beneath it. A "!" pattern lifts the patterns before it; the last pattern
// that matches wins, and, as in git, nothing beneath a denied directory can
// be lifted. "x/**" is read as "x/": the directory is hidden as a whole.
//
// The order is: the defaults, the user's patterns (user config, ODIN_*
// variables, flags), the project's additions. A project may add patterns
// but never lift one: its "!" patterns are dropped (Dropped lists them).
//
// A Rules is immutable apart from the cache behind Existing, and safe for
// concurrent use.
package readdeny
