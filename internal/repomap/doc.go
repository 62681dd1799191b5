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
// bindings), which compiles the grammars' C parsers with cgo. That route was
// weighed against the alternatives: a pure-Go tree-sitter runtime was not
// available from the module proxy, and hand-written extractors per language
// would be a second-rate parser to maintain. Measured costs: the first cold
// build compiles the grammars (about a minute of CPU; the build cache keeps
// them afterwards); the odin binary grows by 4.5 MB (96 to 100 MB); and
// because the grammars' C objects need the external linker, the binary's
// resident file-backed pages at startup grow by about 20 MB (the same
// growth as linking today's odin externally), while its anonymous memory
// and start time do not change. Built with CGO_ENABLED=0 or the
// no_treesitter tag, the package maps Go only and says how many other
// files it could not parse.
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
