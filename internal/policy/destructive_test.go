package policy

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/messages"
)

// TestDestructive checks every destructive form of the table in
// destructive.go: under broad allowed patterns it asks, under a pattern
// that names it, it runs; its harmless neighbours run under the broad
// patterns.
func TestDestructive(t *testing.T) {
	f := newFixture(t)
	broad := [][]string{
		{"*"},
		{"git *", "rm *", "find *", "dd *", "chmod *", "chown *", "rsync *", "docker *", "kubectl *", "helm *", "terraform *"},
	}
	cases := []struct {
		cmd   string
		named string // an allowed pattern that names the form ("" = destructive is false)
	}{
		{"rm -r build", "rm -r *"},
		{"rm -rf build", "rm -rf *"},
		{"rm -fR build", "rm -fR *"},
		{"rm --recursive build", "rm --recursive *"},
		{"find . -name '*.o' -delete", "find * -name * -delete"},
		{"truncate -s 0 main.go", "truncate *"},
		{"shred main.go", "shred *"},
		{"mkfs.ext4 disk.img", "mkfs.ext4 *"},
		{"dd if=/dev/zero of=main.go", "dd if=/dev/zero of=*"},
		{"chmod -R 777 sub", "chmod -R *"},
		{"chown -R nobody sub", "chown -R *"},
		{"rsync -a --delete sub/ tests/", "rsync -a --delete *"},
		{"git reset --hard HEAD~1", "git reset --hard *"},
		{"git clean -fdx", "git clean -fdx"},
		{"git checkout -- .", "git checkout -- *"},
		{"git checkout .", "git checkout ."},
		{"git checkout main.go", "git checkout main.go"},
		{"git checkout -f main", "git checkout -f *"},
		{"git restore main.go", "git restore *"},
		{"git restore --staged --worktree main.go", "git restore *"},
		{"git switch --discard-changes main", "git switch --discard-changes *"},
		{"git push --force origin main", "git push --force *"},
		{"git push -f origin main", "git push -f *"},
		{"git push --force-with-lease origin main", "git push --force-with-lease *"},
		{"git push origin +main", "git push origin +*"},
		{"git push origin :main", "git push origin :*"},
		{"git push --delete origin main", "git push --delete *"},
		{"git push --mirror", "git push --mirror"},
		{"git -C sub push -f", "git -C sub push -f"},
		{"git branch -D feature", "git branch -D *"},
		{"git branch -d -f feature", "git branch -d -f *"},
		{"git tag -d v1", "git tag -d *"},
		{"git stash drop", "git stash drop*"},
		{"git stash clear", "git stash clear"},
		{"git rebase main", "git rebase *"},
		{"git filter-branch --tree-filter x HEAD", "git filter-branch *"},
		{"git gc --prune=now", "git gc --prune=*"},
		{"git reflog expire --all", "git reflog expire *"},
		{"git update-ref -d refs/heads/x", "git update-ref *"},
		{"git worktree remove --force wt", "git worktree remove --force *"},
		{"git rm -f main.go", "git rm -f *"},
		{"docker system prune -a", "docker system prune *"},
		{"docker rm -f web", "docker rm *"},
		{"docker compose down -v", "docker compose down -v"},
		{"kubectl delete pod web", "kubectl delete *"},
		{"helm uninstall web", "helm uninstall *"},
		{"terraform destroy", "terraform destroy*"},
		{"terraform apply -destroy", "terraform apply -destroy"},
		// Neighbours that are not destructive.
		{"rm build", ""},
		{"rm -f main.o", ""},
		{"git clean -n", ""},
		{"git clean -fn", ""},
		{"git checkout main", ""},
		{"git checkout -b feature", ""},
		{"git restore --staged main.go", ""},
		{"git push origin main", ""},
		{"git branch -d feature", ""},
		{"git rebase --abort", ""},
		{"git stash pop", ""},
		{"git gc", ""},
		{"docker run --rm img", ""},
		{"kubectl get pods", ""},
		{"find . -name x -print", ""},
	}
	if err := os.MkdirAll(filepath.Join(f.root, "build"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, pats := range broad {
		c, err := NewCommands(f.guard(t), config.Permissions{AllowedCommands: pats})
		if err != nil {
			t.Fatal(err)
		}
		for _, tt := range cases {
			v := c.Check(tt.cmd, messages.ModeEdit)
			switch {
			case tt.named != "" && (v.Action != Ask || (pats[0] == "*" && !hasRule(v, RuleDestructive))):
				t.Errorf("allowed %q: %q: %v, want a %s question", pats, tt.cmd, v, RuleDestructive)
			case tt.named == "" && v.Action != Allow:
				t.Errorf("allowed %q: %q: %v, want allow", pats, tt.cmd, v)
			}
		}
	}
	for _, tt := range cases {
		if tt.named == "" {
			continue
		}
		c, err := NewCommands(f.guard(t), config.Permissions{AllowedCommands: []string{tt.named}})
		if err != nil {
			t.Fatal(err)
		}
		if v := c.Check(tt.cmd, messages.ModeEdit); v.Action != Allow {
			t.Errorf("allowed %q: %q: %v, want allow (the pattern names the form)", tt.named, tt.cmd, v)
		}
	}
	// Read-only and ask modes are unaffected: destructive forms are not
	// read-only, so they are refused there as before.
	c, _ := NewCommands(f.guard(t), config.Permissions{AllowedCommands: []string{"*"}})
	if v := c.Check("git push --force", messages.ModeAsk); v.Action != Deny {
		t.Errorf("ask mode: %v, want deny", v)
	}
}
