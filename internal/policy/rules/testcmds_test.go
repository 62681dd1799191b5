package rules

import (
	"strings"
	"testing"
)

func TestIsTestCommand(t *testing.T) {
	for _, c := range []struct {
		cmd  string
		want bool
	}{
		{"go test ./...", true}, {"go vet ./...", true}, {"go build ./...", false}, {"go test -exec evil ./...", false},
		{"go test -toolexec=x ./...", false}, {"go test -o bin ./...", false}, {"go", false},
		{"pytest -x", true}, {"/usr/bin/pytest", true}, {"tox", true},
		{"python -m pytest", true}, {"python3 -m unittest", true}, {"python -m http.server", false}, {"python x.py", false},
		{"npm test", true}, {"npm t", true}, {"npm run test:unit", true}, {"npm run build", false}, {"npm exec jest", true},
		{"npm exec webpack", false}, {"npm install", false}, {"yarn jest", true}, {"npm jest", false},
		{"npx vitest run", true}, {"npx webpack", false}, {"npx", false},
		{"cargo test", true}, {"cargo nextest run", true}, {"cargo build", false},
		{"make test", true}, {"make test-unit", true}, {"make check", true}, {"make", false}, {"make install", false},
		{"bundle exec rspec", true}, {"bundle exec rails s", false}, {"bundle install", false},
		{"dotnet test", true}, {"mix test", true}, {"deno run x", false},
		{"mvn verify", true}, {"gradlew check", true}, {"gradle build", false},
		{"rm -rf /", false},
	} {
		f := strings.Fields(c.cmd)
		if got := IsTestCommand(f[0], f[1:]); got != c.want {
			t.Errorf("IsTestCommand(%q) = %v, want %v", c.cmd, got, c.want)
		}
	}
}
