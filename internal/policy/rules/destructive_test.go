package rules

import (
	"slices"
	"strings"
	"testing"
)

// TestDestructiveRules runs every example of the destructive table: each
// Match is destructive by its own rule, with a reason and triggers inside
// the command; each NotMatch is not destructive.
func TestDestructiveRules(t *testing.T) {
	for i := range destructiveRules {
		r := &destructiveRules[i]
		if r.Why == "" || len(r.Match) == 0 {
			t.Errorf("rule %v: needs a reason and an example it matches", r.Names)
		}
		for _, cmd := range r.Match {
			argv := strings.Fields(cmd)
			if got, _, _, _ := destructiveRuleFor(argv); got != r {
				t.Errorf("rule %v: example %q belongs to another rule", r.Names, cmd)
			}
			why, triggers := Destructive(argv, nil)
			if why == "" || len(triggers) == 0 || strings.Contains(why, "{") {
				t.Errorf("rule %v: %q not destructive (why %q, triggers %v)", r.Names, cmd, why, triggers)
			}
			for _, i := range triggers {
				if i < 0 || i >= len(argv) {
					t.Errorf("rule %v: %q: trigger %d outside the command", r.Names, cmd, i)
				}
			}
		}
		for _, cmd := range r.NotMatch {
			if why, _ := Destructive(strings.Fields(cmd), nil); why != "" {
				t.Errorf("rule %v: %q called destructive: %s", r.Names, cmd, why)
			}
		}
	}
}

// The reasons and triggers of some forms, word for word: the triggers are
// what an allowed pattern must name to cover the form.
func TestDestructiveReasons(t *testing.T) {
	exists := func(p string) bool { return p == "main.go" }
	for _, c := range []struct {
		cmd, why string
		triggers []int
	}{
		{"rm -rf build", "rm -r deletes whole directory trees", []int{1}},
		{"/bin/rm -r x", "rm -r deletes whole directory trees", []int{1}},
		{"mkfs.ext4 disk", "mkfs.ext4 destroys the contents of what it is given", []int{0}},
		{"git -C sub push -f origin +main", "git push with force, delete, mirror, prune or a +/: refspec rewrites or deletes remote history", []int{4, 6}},
		{"git checkout main.go", "git checkout of paths (or with -f/-B) discards uncommitted changes", []int{2}},
		{"git restore a", "git restore discards uncommitted changes", []int{1}},
		{"git branch -d -f x", "git branch -d --force deletes an unmerged branch", []int{2}},
		{"git branch -D x", "git branch -D deletes or overwrites a branch", []int{2}},
		{"git tag --force v1", "git tag --force moves a tag", []int{2}},
		{"git reset --hard", "git reset --hard discards uncommitted changes", []int{2}},
		{"docker compose down -v", "docker compose down -v deletes volumes", []int{3}},
		{"docker system prune", "docker prune deletes containers, images or volumes", []int{2}},
		{"terraform state rm x", "terraform state rm forgets infrastructure", []int{2}},
		{"terraform apply -destroy", "terraform apply -destroy destroys infrastructure", []int{2}},
		{"git filter-repo --force", "git filter-repo rewrites or deletes history", []int{1}},
		{"rsync -a --remove-source-files --delete a b", "rsync --remove-source-files deletes files", []int{2}},
	} {
		why, triggers := Destructive(strings.Fields(c.cmd), exists)
		if why != c.why || !slices.Equal(triggers, c.triggers) {
			t.Errorf("%q: %q %v, want %q %v", c.cmd, why, triggers, c.why, c.triggers)
		}
	}
}
