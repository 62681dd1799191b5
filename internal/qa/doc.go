// Package qa finds a project's quality checks (build, lint, test) and runs
// them. Checks come from odin.yaml (quality.build/lint/test), else from the
// Commands section of ODIN.md, else from the project's own files (go.mod,
// package.json, Cargo.toml, pyproject.toml, a Makefile). Commands the
// project writes itself (ODIN.md Commands, package.json scripts, Makefile
// recipes) are used only once the user trusts the project; TrustItems
// lists them. A check passes when its command exits 0; that is the QA
// gate's verdict.
//
// The same Runner formats and lints the files the Code specialist changed
// before it reports (Lint), and measures the changed packages' test
// coverage before and after a change (Coverage, on a copy of the project
// with the old files put back). Every command runs in the sandbox.
package qa
