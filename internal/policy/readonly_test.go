package policy

import (
	"strings"
	"testing"
)

func TestReadOnlyClassification(t *testing.T) {
	cases := []struct {
		cmd  string // split at spaces
		want bool
	}{
		{"ls -la", true},
		{"cat a b", true},
		{"grep -rn x .", true},
		{"printf %s x", true},
		{"printf -v PATH %s x", false},
		{"umask", true},
		{"umask 000", false},
		{"set -euo pipefail", true},
		{"set -e -x", true},
		{"set -a", false},
		{"set -o posix", false},
		{"set", false},
		{"set -- a b", true},
		{"gofmt -l .", true},
		{"gofmt -w .", false},
		{"find . -type f -name *.go", true},
		{"find . -execdir ls ;", false},
		{"find . -okdir ls ;", false},
		{"find . -fls out", false},
		{"fd -e go", true},
		{"fd -x rm", false},
		{"fd --exec=rm", false},
		{"rg -n foo", true},
		{"rg --hostname-bin=./x foo", false},
		{"sort -u a", true},
		{"sort -uo out a", false},
		{"sort --output=out a", false},
		{"sort --compress-program=./x a", false},
		{"uniq -c a", true},
		{"uniq a out", false},
		{"uniq -f 2 a", true},
		{"xxd a", true},
		{"xxd a out", false},
		{"tree -L 2", true},
		{"tree -o out", false},
		{"date +%s", true},
		{"date -d yesterday +%F", true},
		{"date -s now", false},
		{"date 010100002030", false},
		{"file a", true},
		{"file -C -m magic", false},
		{"hostname", true},
		{"hostname evil", false},
		{"sed -n 1p a", true},
		{"sed -i.bak s/a/b/ a", false},
		{"sed --in-place s/a/b/ a", false},
		{"sed -f script a", false},
		{"sed -nf script a", false},
		{"sed --expression=p a", true},
		{"sed --expression=w a", false},
		{"go version", true},
		{"go env GOPATH", true},
		{"go env -w GOPROXY=x", false},
		{"go list -m all", true},
		{"go vet ./...", true},
		{"go vet -toolexec=./x ./...", false},
		{"go list -exec ./x", false},
		{"go mod graph", true},
		{"go mod tidy", false},
		{"go build ./...", false},
		{"go -C sub list", true},
		{"git status --short", true},
		{"git --no-pager log -3", true},
		{"git -P diff --stat", true},
		{"git -ccore.pager=x log", false},
		{"git --config-env=core.pager=X log", false},
		{"git --exec-path=/tmp status", false},
		{"git --exec-path", true},
		{"git -p log", false},
		{"git --bare log", false},
		{"git --work-tree=/ status", false},
		{"git show HEAD:main.go", true},
		{"git diff -o out", false},
		{"git log --textconv -p", false},
		{"git cat-file --filters HEAD:x", false},
		{"git grep -Oless foo", false},
		{"git grep --open-files-in-pager foo", false},
		{"git grep -n foo", true},
		{"git branch", true},
		{"git branch -vv --list feat*", true},
		{"git branch --contains abc123", true},
		{"git branch newbranch", false},
		{"git branch -m a b", false},
		{"git branch --set-upstream-to=origin/x", false},
		{"git tag", true},
		{"git tag -l v1.*", true},
		{"git tag v9", false},
		{"git tag -d v1", false},
		{"git remote -v", true},
		{"git remote add evil x", false},
		{"git remote get-url origin", true},
		{"git config --get user.name", true},
		{"git config -l", true},
		{"git config user.name x", false},
		{"git config --get --unset x", false},
		{"git stash list", true},
		{"git stash", false},
		{"git stash pop", false},
		{"git worktree list", true},
		{"git worktree add x", false},
		{"git reflog", true},
		{"git reflog expire --all", false},
		{"git notes show", true},
		{"git notes add -m x", false},
		{"git commit -m x", false},
		{"git checkout main", false},
		{"git help log", false},
		{"git --weird log", false},
		{"awk {print$1} a", true},
		{"awk -F: {print$1} /etc/passwd", true},
		{"awk -v n=3 NR<=n a", true},
		{"gawk NR==1", true},
		{"awk {print>\"out\"} a", false},
		{"awk {print|\"sh\"} a", false},
		{"awk BEGIN{system(\"id\")}", false},
		{"awk BEGIN{while((\"id\"|getline)>0)print}", false},
		{"gawk @load\"filefuncs\"", false},
		{"awk -f prog.awk a", false},
		{"gawk -i inplace {print} a", false},
		{"awk $1>5 a", false},
		{"awk", false},
		{"tee out", false},
		{"env", false},
		{"printenv", false},
		{"less a", false},
		{"python3 -c print(1)", false},
	}
	for _, c := range cases {
		f := strings.Fields(c.cmd)
		got, why, _ := readOnly(f[0], f[1:])
		if got != c.want {
			t.Errorf("readOnly(%q) = %v (%s), want %v", c.cmd, got, why, c.want)
		}
		if !got && why == "" {
			t.Errorf("readOnly(%q): no reason", c.cmd)
		}
	}
}

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
