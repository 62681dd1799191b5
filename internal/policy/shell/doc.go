// Package shell evaluates shell syntax statically for the command policy:
// a word's value when it is known without running anything (Eval, Word),
// the printed form of a node (Print), and every place bash evaluates text
// as arithmetic, which is code (ArithContexts, each with examples that
// internal/policy's tests run, in bash too where it is installed). It
// parses with mvdan.cc/sh/v3/syntax and runs nothing.
package shell
