// Package repomap builds a structural map of a project's code — its types,
// functions, methods and their signatures — ranked by how much the rest of
// the code refers to them and cut to a token budget, so that a model sees
// the parts of an unfamiliar tree that matter most before it reads a file.
//
// # Parsing
//
// Go files are parsed with the standard library's go/parser: it is exact,
// needs no cgo and adds nothing to the binary. Python, JavaScript (and
// JSX), TypeScript (and TSX), Rust and Java are parsed with tree-sitter
// (github.com/tree-sitter/go-tree-sitter and the grammars' own Go
// bindings) — a pure-Go tree-sitter runtime was not available from the
// module proxy, and hand-written extractors per language would be a
// second-rate parser to maintain — but not inside odin: in odin-sitter
// (cmd/odin-sitter, package sitter), a parser process odin starts in its
// sandbox on first use and feeds each file's text over a pipe. Two reasons,
// both measured or argued: the grammars' C objects force the external
// linker, which made odin's resident pages at every start grow from 36 to
// 63 MB (`odin --version`), whatever the command; and a C parser fed
// untrusted files belongs in a confined process (no network, nothing
// writable, no secret), not in the one holding the user's keys. The cost
// is a process start on the first non-Go file of a session and a pipe
// round trip per file. Where odin-sitter is not found (beside the odin
// executable, on PATH, or $ODIN_SITTER), the map covers Go only and says
// how many other files it could not parse.
//
// # Ranking
//
// The ranking follows the idea Aider made popular: files are the nodes of a
// graph, a file that uses a name defined in another file gets an edge to it,
// weighted by how often it uses the name, and PageRank over that graph says
// which files matter; each file's rank is then shared among the definitions
// it points at. Names defined in many files (String, Close, __init__) weigh
// little, definitions in tests weigh little, and names the caller focuses
// on weigh more. The map shows the best-ranked definitions, grouped by file,
// as many as fit the budget.
//
// # Caching
//
// A Mapper keeps what it parsed, per file, keyed by the hash of the file's
// content, in memory and (with Options.CacheDir) in a cache file under
// Odin's state directory. A refresh reads and hashes every candidate file
// but parses only those whose hash changed. A Mapper is safe for concurrent
// use; refreshes are serialized.
package repomap
