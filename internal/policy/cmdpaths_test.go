package policy

import (
	"strings"
	"testing"
)

func TestPathCandidates(t *testing.T) {
	cases := map[string][]string{
		"main.go":          {"main.go"},
		"--file=/etc/x":    {"--file=/etc/x", "/etc/x"},
		"-f/etc/passwd":    {"-f/etc/passwd", "/etc/passwd"},
		"-C..":             {"-C..", ".."},
		"-t/":              {"-t/"},
		"-n5":              {"-n5"},
		"--exclude=vendor": {"--exclude=vendor", "vendor"},
		"--color":          {"--color"},
		"-I~/include":      {"-I~/include", "~/include"},
	}
	for in, want := range cases {
		got := pathCandidates(in)
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("pathCandidates(%q) = %q, want %q", in, got, want)
		}
	}
}
