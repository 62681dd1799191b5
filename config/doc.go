// Package config is odin.yaml as documented Go structs, its loading with the
// documented precedence (built-in defaults < user file < project file <
// ODIN_* environment < flags) and its validation. It is the only package
// that imports viper. The comments on the structs below are the user
// documentation of every key; odin.yaml at the repository root is the
// worked example and is loaded by a test.
package config
