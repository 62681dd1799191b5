package config

import (
	"errors"
	"strconv"
	"strings"
)

// ErrInvalid is matched (errors.Is) by every *Error: the configuration
// could not be read or is not valid. Commands exit 2 on it.
var ErrInvalid = errors.New("invalid configuration")

// ErrNoProvider means no provider can serve a model: the provider has no
// API key and its base_url is OpenAI's, which needs one. ResolveModel wraps
// it with the model and provider in question; its text tells the user what
// to set.
var ErrNoProvider = errors.New("no usable model provider: export OPENAI_API_KEY to use OpenAI, " +
	"or OPENAI_BASE_URL to use a local OpenAI-compatible server (e.g. http://localhost:11434/v1 for Ollama), " +
	"or set providers.<name>.base_url and providers.<name>.api_key_env in odin.yaml")

// Problem is one thing wrong with the configuration.
type Problem struct {
	// Source is where the bad value came from: a config file ("odin.yaml"
	// for the project's, the full path for the user's), "env ODIN_MODE",
	// "env OPENAI_BASE_URL" or "flags". Empty for built-in defaults.
	Source string
	// Line is the line of a YAML syntax error in Source, else 0.
	Line int
	// Key is the dotted key, e.g. "agents.code.timeout"; empty for
	// problems with a whole file.
	Key string
	// Msg says what is wrong and, where it can, how to fix it.
	Msg string
}

// String renders the problem as "source:line: key: msg", leaving out the
// parts that are empty.
func (p Problem) String() string {
	var b strings.Builder
	if p.Source != "" {
		b.WriteString(p.Source)
		if p.Line > 0 {
			b.WriteString(":" + strconv.Itoa(p.Line))
		}
		b.WriteString(": ")
	}
	if p.Key != "" {
		b.WriteString(p.Key + ": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// Error is every problem found while loading or validating, one per line
// in its text. It matches ErrInvalid.
type Error struct {
	Problems []Problem
}

func (e *Error) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *Error) Is(target error) bool { return target == ErrInvalid }
