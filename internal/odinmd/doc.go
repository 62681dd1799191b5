// Package odinmd assembles ODIN.md, the project context document, from the
// sections the Init agent generates. Generated sections sit between
// markers; everything outside them is hand-written and is kept untouched
// when the document is revised. It also measures the document against the
// token budget of seed 004 (target 2500–3600, hard cap 4800) and compacts
// it when it is over the cap.
package odinmd
