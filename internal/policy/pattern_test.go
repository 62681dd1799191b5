package policy

import (
	"strings"
	"testing"
)

func TestPatternMatch(t *testing.T) {
	cases := []struct {
		pattern string
		argv    string // split at spaces; "|" separates words that contain spaces
		want    bool
	}{
		{"go test *", "go test", true},
		{"go test *", "go test ./...", true},
		{"go test *", "go test -run X ./pkg", true},
		{"go test *", "go vet ./...", false},
		{"go test *", "go", false},
		{"go test", "go test", true},
		{"go test", "go test ./...", false},
		{"git push*", "git push", true},
		{"git push*", "git push origin main", true},
		{"git push*", "git pushx", true},
		{"git push*", "git pull", false},
		{"git push*", "git", false},
		{"go * -v", "go test -v", true},
		{"go * -v", "go test ./x -v", false},
		{"go test ./...", "go test ./...", true},
		{"npm run ?uild", "npm run build", true},
		{"npm run [bt]*", "npm run test", true},
		{"npm run [bt]*", "npm run lint", false},
		{`echo \*`, "echo *", true},
		{`echo \*`, "echo x", false},
		{"rm -rf /*", "rm -rf /", true},
		{"rm -rf /*", "rm -rf /home/user", true},
		{"rm -rf /*", "rm -r /", false},
		{"*", "anything at all", true},
		{"grep *", "grep|a b|file", true},
		{"grep a", "grep|a b", false},
	}
	for _, c := range cases {
		p, err := ParsePattern(c.pattern)
		if err != nil {
			t.Fatalf("ParsePattern(%q): %v", c.pattern, err)
		}
		sep := " "
		if strings.Contains(c.argv, "|") {
			sep = "|"
		}
		argv := strings.Split(c.argv, sep)
		if got := p.Match(argv); got != c.want {
			t.Errorf("%q.Match(%q) = %v, want %v", c.pattern, argv, got, c.want)
		}
	}
}

func TestParsePatternErrors(t *testing.T) {
	for _, s := range []string{"", "   ", "go [z-a]", `go test\`} {
		if _, err := ParsePattern(s); err == nil {
			t.Errorf("ParsePattern(%q) succeeded, want an error", s)
		}
	}
}

func TestNewCommandsNamesBadPatternKey(t *testing.T) {
	g, err := NewGuard(t.TempDir(), GuardOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewCommands(g, configPerms(nil, []string{"ok *", "bad [z-a]"}))
	if err == nil || !strings.Contains(err.Error(), "permissions.forbidden_commands") {
		t.Fatalf("error %v, want one naming permissions.forbidden_commands", err)
	}
}
