package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools/tool"
)

// fixture is a project with the traps the adversarial cases need:
//
//	<tmp>/proj                 the root
//	<tmp>/proj/main.go, sub/, tests/, .git/config, .odin/plans/, odin.yaml
//	<tmp>/proj/out_link     -> <tmp>/proj_evil     (symlink leaving the root)
//	<tmp>/proj/gitlink      -> .git                 (symlink into .git, "created earlier")
//	<tmp>/proj/tests/to_main -> ../main.go          (a test-looking name for a source file)
//	<tmp>/proj_evil/secret                          (sibling with the root as name prefix)
//	<tmp>/shared/                                   (an additional directory)
//	<tmp>/shared_evil/                              (sibling of the additional directory)
//	<tmp>/userconf/                                 (a protected directory)
type fixture struct {
	tmp, root, evil, shared, userconf string
}

func newFixture(t testing.TB) fixture {
	t.Helper()
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := fixture{
		tmp:      tmp,
		root:     filepath.Join(tmp, "proj"),
		evil:     filepath.Join(tmp, "proj_evil"),
		shared:   filepath.Join(tmp, "shared"),
		userconf: filepath.Join(tmp, "userconf"),
	}
	for _, d := range []string{
		f.root, f.evil, f.shared, f.userconf, filepath.Join(tmp, "shared_evil"),
		filepath.Join(f.root, "sub"), filepath.Join(f.root, "tests"),
		filepath.Join(f.root, ".git", "hooks"), filepath.Join(f.root, ".odin", "plans"),
		filepath.Join(f.root, "dashes"),
		filepath.Join(f.root, "bare", "objects"), filepath.Join(f.root, "bare", "refs"),
		filepath.Join(f.root, "linked"),
	} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for p, content := range map[string]string{
		filepath.Join(f.root, "main.go"):           "package main\n",
		filepath.Join(f.root, "odin.yaml"):         "mode: edit\n",
		filepath.Join(f.root, ".git", "config"):    "[core]\n",
		filepath.Join(f.evil, "secret"):            "s3cret\n",
		filepath.Join(f.root, "dashes", "-i"):      "",
		filepath.Join(f.root, "dashes", "a.txt"):   "",
		filepath.Join(f.shared, "notes.txt"):       "",
		filepath.Join(f.userconf, "odin.yaml"):     "",
		filepath.Join(f.root, "sub", "helper.txt"): "",
		filepath.Join(f.root, "bare", "HEAD"):      "ref: refs/heads/main\n",
		filepath.Join(f.root, "bare", "config"):    "[core]\n\tfsmonitor = touch pwned\n",
		filepath.Join(f.root, "linked", ".git"):    "gitdir: ../bare\n",
	} {
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		filepath.Join(f.root, "out_link"):         f.evil,
		filepath.Join(f.root, "gitlink"):          ".git",
		filepath.Join(f.root, "tests", "to_main"): "../main.go",
		filepath.Join(f.root, "proclink"):         "/proc/self/cwd",
		filepath.Join(f.root, "deep"):             ".git/hooks",
	} {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func (f fixture) guard(t testing.TB) *Guard {
	t.Helper()
	g, err := NewGuard(f.root, GuardOptions{AdditionalDirs: []string{f.shared}, Protected: []string{f.userconf}})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func (f fixture) commands(t testing.TB) *Commands {
	t.Helper()
	c, err := NewCommands(f.guard(t), config.Permissions{
		AllowedCommands:   []string{"go test *", "make build"},
		ForbiddenCommands: []string{"git push*", "rm -rf *"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestAdversarial is the table of attacks the issue lists, each with the
// verdict Odin must reach. Path cases go through Guard.Check with the access
// given; command cases through Commands.Check in the mode given.
func TestAdversarial(t *testing.T) {
	f := newFixture(t)
	const (
		ask  = messages.ModeAsk
		plan = messages.ModePlan
		edit = messages.ModeEdit
		R    = tool.AccessRead
		W    = tool.AccessWrite
	)
	type tc struct {
		name   string
		path   string      // a path case when set
		access tool.Access // for path cases
		agent  string      // agent whose guard is used ("" = orchestrator)
		cmd    string      // a command case when set
		mode   messages.Mode
		want   Action
		rule   string // when set, a finding with this rule must be present
	}
	cases := []tc{
		// Paths: containment.
		{name: "relative path inside", path: "main.go", access: R, want: Allow},
		{name: "absolute path inside", path: filepath.Join(f.root, "main.go"), access: R, want: Allow},
		{name: "sibling prefix dir", path: filepath.Join(f.evil, "secret"), access: R, want: Ask, rule: RuleOutsideRoot},
		{name: "dotdot to sibling", path: "../proj_evil/secret", access: R, want: Ask, rule: RuleOutsideRoot},
		{name: "dotdot staying inside", path: "sub/../main.go", access: R, want: Allow},
		{name: "dotdot climbing out", path: "sub/../../proj_evil/secret", access: R, want: Ask, rule: RuleOutsideRoot},
		{name: "absolute system path", path: "/etc/passwd", access: R, want: Ask, rule: RuleOutsideRoot},
		{name: "symlink read-through", path: "out_link/secret", access: R, want: Ask, rule: RuleOutsideRoot},
		{name: "symlink then dotdot", path: "out_link/../proj/main.go", access: R, want: Allow},
		{name: "symlink write-through to new file", path: "out_link/new.txt", access: W, want: Ask, rule: RuleOutsideRoot},
		{name: "additional dir", path: filepath.Join(f.shared, "notes.txt"), access: W, want: Allow},
		{name: "sibling of additional dir", path: filepath.Join(f.tmp, "shared_evil", "x"), access: W, want: Ask, rule: RuleOutsideRoot},
		// Paths: protected writes.
		{name: "write .git hook", path: ".git/hooks/pre-commit", access: W, want: Deny, rule: RuleProtected},
		{name: "write .git via earlier symlink", path: "gitlink/config", access: W, want: Deny, rule: RuleProtected},
		{name: "write .GIT case variant", path: ".GIT/config", access: W, want: Deny, rule: RuleProtected},
		{name: "write nested .git", path: "sub/.git/config", access: W, want: Deny, rule: RuleProtected},
		{name: "read .git is fine", path: ".git/config", access: R, want: Allow},
		{name: "write .odin agents", path: ".odin/agents/evil.md", access: W, want: Deny, rule: RuleProtected},
		{name: "write .odin trust", path: ".odin/trust.json", access: W, want: Deny, rule: RuleProtected},
		{name: "write .odin plan", path: ".odin/plans/plan.md", access: W, want: Allow},
		{name: "write root odin.yaml", path: "odin.yaml", access: W, want: Deny, rule: RuleProtected},
		{name: "write sub odin.yaml", path: "sub/odin.yaml", access: W, want: Allow},
		{name: "write user config dir", path: filepath.Join(f.userconf, "odin.yaml"), access: W, want: Deny, rule: RuleProtected},
		// Paths: agent write filters.
		{name: "test agent writes source", path: "main.go", access: W, agent: "test", want: Deny, rule: RuleAgentFilter},
		{name: "test agent writes test", path: "main_test.go", access: W, agent: "test", want: Allow},
		{name: "test agent dotdot out of tests", path: "tests/../main.go", access: W, agent: "test", want: Deny, rule: RuleAgentFilter},
		{name: "test agent symlink to source", path: "tests/to_main", access: W, agent: "test", want: Deny, rule: RuleAgentFilter},
		{name: "docs agent writes readme", path: "README.md", access: W, agent: "docs", want: Allow},
		{name: "docs agent writes source", path: "main.go", access: W, agent: "docs", want: Deny, rule: RuleAgentFilter},
		{name: "docs agent writes requirements", path: "requirements.txt", access: W, agent: "docs", want: Deny, rule: RuleAgentFilter},
		{name: "test agent reads anything", path: "main.go", access: R, agent: "test", want: Allow},

		// Commands: read-only basics and paths.
		{name: "ls", cmd: "ls -la", mode: ask, want: Allow},
		{name: "pipe of read-only", cmd: "cat main.go | wc -l", mode: plan, want: Allow},
		{name: "cat outside", cmd: "cat /etc/passwd", mode: ask, want: Ask, rule: RuleOutsideRoot},
		{name: "cat sibling prefix", cmd: "cat " + filepath.Join(f.evil, "secret"), mode: ask, want: Ask, rule: RuleOutsideRoot},
		{name: "cat dotdot", cmd: "cat ../proj_evil/secret", mode: ask, want: Ask, rule: RuleOutsideRoot},
		{name: "cat symlink read-through", cmd: "cat out_link/secret", mode: ask, want: Ask, rule: RuleOutsideRoot},
		{name: "option value outside", cmd: "grep -f/etc/passwd x main.go", mode: ask, want: Ask, rule: RuleOutsideRoot},
		{name: "glob that can match dotdot", cmd: "cat .*/secret", mode: ask, want: Ask, rule: RuleOutsideRoot},
		{name: "glob inside", cmd: "cat sub/*.txt", mode: ask, want: Allow},
		{name: "glob rooted outside", cmd: "cat /e*/passwd", mode: ask, want: Ask, rule: RuleOutsideRoot},
		{name: "glob through symlink out", cmd: "cat out_link/*", mode: ask, want: Ask, rule: RuleOutsideRoot},
		{name: "glob matching symlink out", cmd: "cat out_l*/secret", mode: ask, want: Ask, rule: RuleOutsideRoot},
		{name: "tilde", cmd: "cat ~/.ssh/id_rsa", mode: ask, want: Ask, rule: RuleOutsideRoot},
		{name: "variable in argument", cmd: "cat $HOME/.ssh/id_rsa", mode: ask, want: Ask, rule: RuleDynamic},
		{name: "echo of a variable is data", cmd: "echo $HOME", mode: ask, want: Allow},
		// cd.
		{name: "cd out of root", cmd: "cd .. && ls", mode: ask, want: Ask, rule: RuleOutsideRoot},
		{name: "cd home", cmd: "cd; ls", mode: ask, want: Ask, rule: RuleOutsideRoot},
		{name: "cd inside then dotdot inside", cmd: "cd sub && cat ../main.go", mode: ask, want: Allow},
		{name: "cd inside then climb out", cmd: "cd sub; cat ../../proj_evil/secret", mode: ask, want: Ask, rule: RuleOutsideRoot},
		{name: "failed cd keeps old dir possible", cmd: "cd nosuchdir; cat ../proj_evil/secret", mode: ask, want: Ask, rule: RuleOutsideRoot},
		// Chaining operators hide a second command.
		{name: "semicolon forbidden", cmd: "ls; rm -rf x", mode: edit, want: Deny, rule: RuleForbidden},
		{name: "and", cmd: "ls && touch x", mode: ask, want: Deny, rule: RuleMode},
		{name: "and in edit", cmd: "ls && touch x", mode: edit, want: Ask, rule: RuleNotAllowed},
		{name: "or", cmd: "ls || touch x", mode: edit, want: Ask, rule: RuleNotAllowed},
		{name: "pipe", cmd: "ls | tee x", mode: ask, want: Deny, rule: RuleMode},
		{name: "background", cmd: "sleep 1 & touch x", mode: plan, want: Deny, rule: RuleMode},
		{name: "newline injection", cmd: "ls\ntouch x", mode: ask, want: Deny, rule: RuleMode},
		{name: "carriage return injection", cmd: "ls\rtouch x", mode: edit, want: Deny, rule: RuleUnsafeText},
		{name: "bidi override", cmd: "ls \u202e x", mode: edit, want: Deny, rule: RuleUnsafeText},
		{name: "subshell", cmd: "(touch x)", mode: ask, want: Deny, rule: RuleMode},
		// Substitutions.
		{name: "command substitution", cmd: "echo $(touch x)", mode: edit, want: Ask, rule: RuleNotAllowed},
		{name: "backticks", cmd: "echo `git push`", mode: edit, want: Deny, rule: RuleForbidden},
		{name: "process substitution", cmd: "diff <(ls) <(touch x)", mode: ask, want: Deny, rule: RuleMode},
		{name: "output process substitution", cmd: "ls > >(touch x)", mode: ask, want: Deny, rule: RuleMode},
		{name: "substitution in unquoted heredoc", cmd: "cat <<EOF\n$(touch x)\nEOF", mode: ask, want: Deny, rule: RuleMode},
		{name: "quoted heredoc is data", cmd: "cat <<'EOF'\n$(touch x)\nEOF", mode: ask, want: Allow},
		{name: "substitution in default value", cmd: "echo ${X:-$(touch x)}", mode: ask, want: Deny, rule: RuleMode},
		// Redirections.
		{name: "write redirect in ask", cmd: "echo hi > out.txt", mode: ask, want: Deny, rule: RuleMode},
		{name: "write redirect in edit", cmd: "echo hi > out.txt", mode: edit, want: Allow},
		{name: "clobber redirect", cmd: "echo hi >| out.txt", mode: plan, want: Deny, rule: RuleMode},
		{name: "all redirect", cmd: "ls &> out.txt", mode: ask, want: Deny, rule: RuleMode},
		{name: "append outside", cmd: "echo hi >> /etc/motd", mode: edit, want: Ask, rule: RuleOutsideRoot},
		{name: "read-write redirect", cmd: "cat 3<> out.txt", mode: ask, want: Deny, rule: RuleMode},
		{name: "redirect into .git", cmd: "echo x > .git/hooks/pre-commit", mode: edit, want: Deny, rule: RuleProtected},
		{name: "redirect through symlink into .git", cmd: "echo x >> gitlink/config", mode: edit, want: Deny, rule: RuleProtected},
		{name: "redirect to odin.yaml", cmd: "echo 'permissions: {}' > odin.yaml", mode: edit, want: Deny, rule: RuleProtected},
		// Arguments of a command that may write are its possible targets.
		{name: "cp into .git hooks", cmd: "cp main.go .git/hooks/pre-commit", mode: edit, want: Deny, rule: RuleProtected},
		{name: "cp through symlink into .git", cmd: "cp main.go gitlink/hooks/pre-push", mode: edit, want: Deny, rule: RuleProtected},
		{name: "allowed command writing into .git", cmd: "go test -coverprofile=.git/hooks/pre-commit ./...", mode: edit, want: Deny, rule: RuleProtected},
		{name: "tee into .odin", cmd: "ls | tee .odin/agents/evil.md", mode: edit, want: Deny, rule: RuleProtected},
		{name: "touch odin.yaml", cmd: "touch odin.yaml", mode: edit, want: Deny, rule: RuleProtected},
		{name: "rm -rf .git", cmd: "rm -rf .git", mode: edit, want: Deny, rule: RuleProtected},
		{name: "read-only command may name .git", cmd: "cat .git/config odin.yaml", mode: ask, want: Allow},
		{name: "echo of a protected name is data", cmd: "echo .git/config", mode: ask, want: Allow},
		{name: "fd dup and dev null", cmd: "ls 2>&1 >/dev/null", mode: ask, want: Allow},
		{name: "input redirect outside", cmd: "wc -l < /etc/passwd", mode: ask, want: Ask, rule: RuleOutsideRoot},
		{name: "redirect to variable target", cmd: "ls > $OUT", mode: edit, want: Ask, rule: RuleDynamic},
		// Wrappers.
		{name: "bash -c forbidden", cmd: "bash -c 'rm -rf /'", mode: edit, want: Deny, rule: RuleForbidden},
		{name: "sh -c write", cmd: `sh -c "touch x"`, mode: ask, want: Deny, rule: RuleMode},
		{name: "bash -c read-only", cmd: "bash -c 'ls | wc -l'", mode: ask, want: Allow},
		{name: "nested shells", cmd: `bash -c "sh -c 'git push'"`, mode: edit, want: Deny, rule: RuleForbidden},
		{name: "combined flags -ec", cmd: "bash -ec 'touch x'", mode: ask, want: Deny, rule: RuleMode},
		{name: "here-string into shell", cmd: "bash <<< 'touch x'", mode: edit, want: Ask, rule: RuleUnresolvable},
		{name: "pipe into shell", cmd: "echo 'touch x' | sh", mode: ask, want: Deny, rule: RuleUnresolvable},
		{name: "env wrapper", cmd: "env ls", mode: ask, want: Allow},
		{name: "env assignment", cmd: "env LD_PRELOAD=/tmp/x.so ls", mode: ask, want: Deny, rule: RuleMode},
		{name: "timeout wrapper forbidden", cmd: "timeout 5 git push origin main", mode: edit, want: Deny, rule: RuleForbidden},
		{name: "nice nohup read-only", cmd: "nice -n 5 nohup ls", mode: ask, want: Allow},
		{name: "xargs runs writer", cmd: "ls | xargs rm", mode: edit, want: Ask, rule: RuleNotAllowed},
		{name: "command builtin forbidden", cmd: "command git push", mode: edit, want: Deny, rule: RuleForbidden},
		{name: "absolute path to git forbidden", cmd: "/usr/bin/git push", mode: edit, want: Deny, rule: RuleForbidden},
		{name: "git global option forbidden", cmd: "git -C sub push", mode: edit, want: Deny, rule: RuleForbidden},
		{name: "find -exec hides forbidden", cmd: `find . -exec git push \;`, mode: edit, want: Deny, rule: RuleForbidden},
		{name: "sudo", cmd: "sudo ls", mode: edit, want: Deny, rule: RuleForbidden},
		{name: "exec wrapper", cmd: "exec touch x", mode: ask, want: Deny, rule: RuleMode},
		// Read-only commands with write or exec flags.
		{name: "find read-only", cmd: "find . -name '*.go'", mode: ask, want: Allow},
		{name: "find -exec", cmd: `find . -exec cat {} \;`, mode: ask, want: Deny, rule: RuleMode},
		{name: "find -delete", cmd: "find . -delete", mode: ask, want: Deny, rule: RuleMode},
		{name: "find -fprint", cmd: "find . -fprint out", mode: ask, want: Deny, rule: RuleMode},
		{name: "rg --pre", cmd: "rg --pre ./x.sh foo", mode: ask, want: Deny, rule: RuleMode},
		{name: "rg --pre-glob", cmd: "rg --pre-glob='*' foo", mode: ask, want: Deny, rule: RuleMode},
		{name: "sed print", cmd: "sed -n '1,5p' main.go", mode: ask, want: Allow},
		{name: "sed -i", cmd: "sed -i 's/a/b/' main.go", mode: ask, want: Deny, rule: RuleMode},
		{name: "sed -i clustered", cmd: "sed -ni 's/a/b/' main.go", mode: ask, want: Deny, rule: RuleMode},
		{name: "sed w command", cmd: "sed -n 'w out.txt' main.go", mode: ask, want: Deny, rule: RuleMode},
		{name: "sed s///w flag", cmd: "sed 's/a/b/w out.txt' main.go", mode: ask, want: Deny, rule: RuleMode},
		{name: "sed e command", cmd: "sed '1e id' main.go", mode: ask, want: Deny, rule: RuleMode},
		{name: "sed s///e flag", cmd: "sed 's/.*/id/e' main.go", mode: ask, want: Deny, rule: RuleMode},
		{name: "sed script after -e", cmd: "sed -e p -e 'w x' main.go", mode: ask, want: Deny, rule: RuleMode},
		{name: "git log", cmd: "git log --oneline -5", mode: ask, want: Allow},
		{name: "git -c pager", cmd: "git -c core.pager='sh -c id' log", mode: ask, want: Deny, rule: RuleMode},
		{name: "git diff --output", cmd: "git diff --output=/tmp/x", mode: plan, want: Deny, rule: RuleMode},
		{name: "git log --ext-diff", cmd: "git log -p --ext-diff", mode: ask, want: Deny, rule: RuleMode},
		{name: "git --git-dir elsewhere", cmd: "git --git-dir=sub/evil.git status", mode: ask, want: Deny, rule: RuleMode},
		{name: "git branch delete", cmd: "git branch -D main", mode: ask, want: Deny, rule: RuleMode},
		{name: "git branch list", cmd: "git branch -a", mode: ask, want: Allow},
		{name: "git unknown subcommand (alias)", cmd: "git st", mode: ask, want: Deny, rule: RuleMode},
		{name: "awk printing", cmd: "ls -l | awk '{print $5, $9}'", mode: ask, want: Allow},
		{name: "awk system", cmd: `awk 'BEGIN { system("touch x") }'`, mode: ask, want: Deny, rule: RuleMode},
		{name: "awk output redirection", cmd: `awk '{ print > "out.txt" }' main.go`, mode: plan, want: Deny, rule: RuleMode},
		{name: "sort -o", cmd: "sort -o out.txt main.go", mode: ask, want: Deny, rule: RuleMode},
		{name: "glob expands to an option", cmd: "sed -n p dashes/*", mode: ask, want: Deny, rule: RuleMode},
		{name: "go vet -vettool", cmd: "go vet -vettool=./evil ./...", mode: ask, want: Deny, rule: RuleMode},
		{name: "go list read-only", cmd: "go list ./...", mode: ask, want: Allow},
		// Not statically resolvable.
		{name: "eval in edit", cmd: "eval ls", mode: edit, want: Ask, rule: RuleUnresolvable},
		{name: "eval in ask", cmd: "eval ls", mode: ask, want: Deny, rule: RuleUnresolvable},
		{name: "eval hides forbidden", cmd: "eval 'git push'", mode: edit, want: Deny, rule: RuleForbidden},
		{name: "source", cmd: "source ./script.sh", mode: edit, want: Ask, rule: RuleUnresolvable},
		{name: "command name from variable", cmd: "$CMD -la", mode: edit, want: Ask, rule: RuleUnresolvable},
		{name: "command name from substitution", cmd: "$(echo ls) -la", mode: ask, want: Deny, rule: RuleUnresolvable},
		{name: "IFS trick", cmd: "cat$IFS/etc/passwd", mode: edit, want: Ask, rule: RuleUnresolvable},
		{name: "IFS assignment", cmd: "IFS=/; ls", mode: ask, want: Deny, rule: RuleMode},
		{name: "PATH prefix", cmd: "PATH=.:$PATH ls", mode: edit, want: Ask, rule: RuleNotAllowed},
		{name: "brace expansion forbidden", cmd: "{rm,-rf,/}", mode: edit, want: Deny, rule: RuleForbidden},
		{name: "brace expansion to outside path", cmd: "cat {main.go,/etc/passwd}", mode: ask, want: Ask, rule: RuleOutsideRoot},
		{name: "brace expansion harmless", cmd: "ls {sub,tests}", mode: ask, want: Allow},
		{name: "glob command name", cmd: "/bin/c?t main.go", mode: edit, want: Ask, rule: RuleUnresolvable},
		{name: "function shadows ls", cmd: "ls() { touch x; }; ls", mode: ask, want: Deny},
		{name: "arithmetic on variable", cmd: "x='a[$(touch y)]'; echo $((x))", mode: ask, want: Deny, rule: RuleUnresolvable},
		{name: "prompt expansion", cmd: "echo ${x@P}", mode: ask, want: Deny, rule: RuleUnresolvable},
		{name: "parse error in edit", cmd: "ls 'unterminated", mode: edit, want: Ask, rule: RuleUnresolvable},
		{name: "parse error in ask", cmd: "ls; (", mode: ask, want: Deny, rule: RuleUnresolvable},
		{name: "empty command", cmd: "   ", mode: edit, want: Deny},
		// Allowed and forbidden patterns, per mode.
		{name: "allowed in edit", cmd: "go test ./...", mode: edit, want: Allow},
		{name: "allowed is not read-only in ask", cmd: "go test ./...", mode: ask, want: Deny, rule: RuleMode},
		{name: "allowed through wrapper", cmd: "timeout 60 go test -run X ./pkg", mode: edit, want: Allow},
		{name: "allowed then forbidden", cmd: "go test ./... && git push", mode: edit, want: Deny, rule: RuleForbidden},
		{name: "allowed exact", cmd: "make build", mode: edit, want: Allow},
		{name: "not allowed sibling", cmd: "make deploy", mode: edit, want: Ask, rule: RuleNotAllowed},
		{name: "allowed with unsafe env", cmd: "GOFLAGS=-toolexec=./x go test ./...", mode: edit, want: Ask, rule: RuleNotAllowed},
		{name: "allowed with safe env", cmd: "CGO_ENABLED=0 go test ./...", mode: edit, want: Allow},
		{name: "allowed writing outside", cmd: "go test -coverprofile=/etc/cover.out ./...", mode: edit, want: Ask, rule: RuleOutsideRoot},
		{name: "forbidden with variable argument", cmd: "git push $REMOTE", mode: edit, want: Deny, rule: RuleForbidden},
		{name: "quoted words are the same command", cmd: `'git' "push"`, mode: edit, want: Deny, rule: RuleForbidden},
		{name: "plan mode like ask", cmd: "touch x", mode: plan, want: Deny, rule: RuleMode},
		{name: "unknown command in edit", cmd: "touch x", mode: edit, want: Ask, rule: RuleNotAllowed},

		// Builtins that run commands are not read-only (builtins.go).
		{name: "jobs -x runs its command", cmd: "jobs -x touch x", mode: ask, want: Deny, rule: RuleMode},
		{name: "jobs -x runs a forbidden command", cmd: "jobs -x git push", mode: edit, want: Deny, rule: RuleForbidden},
		{name: "jobs -x runs sudo", cmd: "jobs -lx sudo ls", mode: edit, want: Deny, rule: RuleForbidden},
		{name: "jobs lists", cmd: "jobs -l", mode: ask, want: Allow},
		{name: "jobs with a run-time option", cmd: "jobs $OPT touch x", mode: ask, want: Deny, rule: RuleMode},
		{name: "builtin eval", cmd: "builtin eval ls", mode: edit, want: Ask, rule: RuleUnresolvable},
		{name: "command eval", cmd: "command eval 'git push'", mode: edit, want: Deny, rule: RuleForbidden},
		{name: "eval hides sudo", cmd: "eval 'sudo ls'", mode: edit, want: Deny, rule: RuleForbidden},
		{name: "trap hides sudo", cmd: "trap 'sudo ls' EXIT", mode: edit, want: Deny, rule: RuleForbidden},
		{name: "alias", cmd: "alias ls='touch x'", mode: edit, want: Ask, rule: RuleUnresolvable},
		{name: "compgen -W expands at run time", cmd: "compgen -W '$(touch x)'", mode: edit, want: Ask, rule: RuleUnresolvable},
		{name: "complete -C", cmd: "complete -C 'touch x' ls", mode: edit, want: Ask, rule: RuleUnresolvable},
		{name: "hash -p", cmd: "hash -p ./main.go ls; ls", mode: edit, want: Ask, rule: RuleUnresolvable},
		{name: "enable -f", cmd: "enable -f ./x.so x", mode: edit, want: Ask, rule: RuleUnresolvable},
		{name: "bind -x", cmd: `bind -x '"a":touch x'`, mode: edit, want: Ask, rule: RuleUnresolvable},
		{name: "fc", cmd: "fc -s", mode: edit, want: Ask, rule: RuleUnresolvable},
		{name: "mapfile -C", cmd: "mapfile -C 'touch x' -c 1 arr < main.go", mode: edit, want: Ask, rule: RuleUnresolvable},
		{name: "find -exec sudo", cmd: `find . -exec sudo rm {} \;`, mode: edit, want: Deny, rule: RuleForbidden},
		{name: "find -ok eval", cmd: `find . -ok eval x \;`, mode: edit, want: Ask, rule: RuleUnresolvable},
		{name: "fd -x hides forbidden", cmd: "fd -e go -x git push", mode: edit, want: Deny, rule: RuleForbidden},
		// Words bash evaluates as arithmetic, quotes or not.
		{name: "test -v subscript", cmd: "test -v 'a[$(touch x)]'", mode: ask, want: Deny, rule: RuleUnresolvable},
		{name: "test -v subscript in edit", cmd: "test -v 'a[$(touch x)]'", mode: edit, want: Ask, rule: RuleUnresolvable},
		{name: "test -v subscript hides forbidden", cmd: "test -v 'a[$(git push)]'", mode: edit, want: Deny, rule: RuleForbidden},
		{name: "test -v subscript hides sudo", cmd: "test -v 'a[$(sudo id)]'", mode: edit, want: Deny, rule: RuleForbidden},
		{name: "[ -v subscript", cmd: "[ -v 'a[$(touch x)]' ]", mode: ask, want: Deny, rule: RuleUnresolvable},
		{name: "[ -R subscript", cmd: "[ -R 'a[`touch x`]' ]", mode: ask, want: Deny, rule: RuleUnresolvable},
		{name: "[[ -v subscript", cmd: "[[ -v 'a[$(touch x)]' ]]", mode: ask, want: Deny, rule: RuleUnresolvable},
		{name: "[[ -v variable subscript", cmd: "[[ -v a[i] ]]", mode: ask, want: Deny, rule: RuleUnresolvable},
		{name: "test -v plain name", cmd: "[ -v name ] && test -v 'a[1]'", mode: ask, want: Allow},
		{name: "test -v of a run-time name", cmd: `[ -v "$n" ]`, mode: ask, want: Deny, rule: RuleUnresolvable},
		{name: "test operator from a variable", cmd: `[ "$op" 'a[$(touch x)]' ]`, mode: ask, want: Deny, rule: RuleUnresolvable},
		{name: "test with an unquoted expansion may split into -v", cmd: "[ $(cat main.go) ]", mode: ask, want: Deny, rule: RuleUnresolvable},
		{name: "test with quoted expansions", cmd: `[ -f "$f" ] && [ "$a" = "$b" ]`, mode: ask, want: Allow},
		{name: "test with a glob may expand to -v and a name", cmd: "[ -n *.go ]", mode: ask, want: Deny, rule: RuleUnresolvable},
		{name: "unset with a glob names files", cmd: "unset *", mode: ask, want: Deny, rule: RuleUnresolvable},
		{name: "declare with a glob names files", cmd: "declare -a *", mode: ask, want: Deny, rule: RuleUnresolvable},
		{name: "test with numeric expansions", cmd: "[ $# -gt 0 ] && [ $? -eq 0 ] && [ ${#x} -lt $((2+3)) ]", mode: ask, want: Allow},
		{name: "test -eq reads plain integers", cmd: "test 'a[$(touch x)]' -eq 1", mode: ask, want: Allow},
		{name: "unset subscript", cmd: "unset 'a[$(touch x)]'", mode: ask, want: Deny, rule: RuleUnresolvable},
		{name: "unset variable subscript", cmd: "unset 'a[x]'", mode: ask, want: Deny, rule: RuleUnresolvable},
		{name: "unset PATH", cmd: "unset PATH; ls", mode: edit, want: Ask, rule: RuleNotAllowed},
		{name: "unset plain names", cmd: "unset -v x y; unset -f ls", mode: ask, want: Allow},
		{name: "wait -p subscript", cmd: "wait -p 'a[$(touch x)]'", mode: edit, want: Ask, rule: RuleUnresolvable},
		{name: "wait -p assigns", cmd: "wait -p pid", mode: ask, want: Deny, rule: RuleMode},
		{name: "read subscript", cmd: "read 'a[$(touch x)]' < main.go", mode: edit, want: Ask, rule: RuleUnresolvable},
		{name: "read -a subscript", cmd: "read -ra 'a[$(touch x)]' < main.go", mode: edit, want: Ask, rule: RuleUnresolvable},
		{name: "printf -v subscript", cmd: "printf -v 'a[$(touch x)]' %s x", mode: edit, want: Ask, rule: RuleUnresolvable},
		{name: "getopts subscript", cmd: "getopts a 'a[$(touch x)]'", mode: edit, want: Ask, rule: RuleUnresolvable},
		{name: "declare quoted subscript", cmd: "declare 'a[$(touch x)]=1'", mode: ask, want: Deny, rule: RuleUnresolvable},
		{name: "export quoted PATH", cmd: "export 'PATH=.'; ls", mode: ask, want: Deny, rule: RuleMode},
		{name: "declare -i evaluates later values", cmd: "x=$(cat main.go); declare -i y=x", mode: ask, want: Deny, rule: RuleUnresolvable},
		{name: "declare -n", cmd: "declare -n r=x; echo $r", mode: ask, want: Deny, rule: RuleUnresolvable},
		{name: "assignment subscript", cmd: "x=$(cat main.go); a[x]=1", mode: ask, want: Deny, rule: RuleUnresolvable},
		{name: "array element subscript", cmd: "x=$(cat main.go); arr=([x]=1)", mode: ask, want: Deny, rule: RuleUnresolvable},
		{name: "numeric subscripts", cmd: "a[1]=x; arr=([0]=y); echo ${a[1]}", mode: ask, want: Allow},
		{name: "quoted let", cmd: "'let' 'a[$(touch x)]'", mode: edit, want: Ask, rule: RuleUnresolvable},
		{name: "declare behind builtin", cmd: "builtin declare 'a[$(touch x)]=1'", mode: edit, want: Ask, rule: RuleUnresolvable},
		{name: "assignment in an expansion", cmd: ": ${CDPATH:=/}", mode: ask, want: Deny, rule: RuleMode},
		{name: "descriptor variable", cmd: "exec {PATH}>/dev/null; ls", mode: ask, want: Deny, rule: RuleMode},
		{name: "locale-translated string", cmd: `cat $"main.go"`, mode: edit, want: Ask, rule: RuleDynamic},
		// Paths the shell resolves against its own process.
		{name: "proc self cwd after cd", cmd: "cd .git && echo x >> /proc/self/cwd/config", mode: edit, want: Ask, rule: RuleUnresolvable},
		{name: "proc self cwd write", cmd: "echo x > /proc/self/cwd/main.go", mode: edit, want: Ask, rule: RuleUnresolvable},
		{name: "dev fd directory", cmd: "exec 3<.git; echo x >> /dev/fd/3/config", mode: edit, want: Ask, rule: RuleUnresolvable},
		{name: "proc thread-self read", cmd: "cat /proc/thread-self/cwd/main.go", mode: ask, want: Deny, rule: RuleUnresolvable},
		{name: "proc pid read", cmd: "cat /proc/1/cwd/main.go", mode: ask, want: Deny, rule: RuleUnresolvable},
		{name: "option value through proc", cmd: "grep -f/proc/self/environ x main.go", mode: ask, want: Deny, rule: RuleUnresolvable},
		{name: "cd through proc", cmd: "cd /proc/self/cwd && cat main.go", mode: ask, want: Deny, rule: RuleUnresolvable},
		{name: "symlink to proc", cmd: "echo x >> proclink/config", mode: edit, want: Ask, rule: RuleUnresolvable},
		{name: "bash network redirection", cmd: "cat main.go > /dev/tcp/127.0.0.1/9", mode: edit, want: Ask, rule: RuleUnresolvable},
		{name: "logical cd through a link and back", cmd: "cd deep/../.. && ls", mode: ask, want: Ask, rule: RuleOutsideRoot},
		{name: "standard streams stay allowed", cmd: "ls 2>&1 >/dev/null >&2; echo hi > /dev/stdout; cat /dev/stdin </dev/null", mode: ask, want: Allow},
		// GNU and git long options take unambiguous prefixes.
		{name: "sed --i", cmd: "sed --i s/a/b/ main.go", mode: ask, want: Deny, rule: RuleMode},
		{name: "sed --exp with w", cmd: "sed --exp='w out' main.go", mode: ask, want: Deny, rule: RuleMode},
		{name: "sort --out", cmd: "sort --out=out.txt main.go", mode: ask, want: Deny, rule: RuleMode},
		{name: "git config --ed", cmd: "git config --get x --ed", mode: ask, want: Deny, rule: RuleMode},
		{name: "git cat-file --filt", cmd: "git cat-file --filt HEAD:x", mode: ask, want: Deny, rule: RuleMode},
		{name: "date --s", cmd: "date --s=now", mode: ask, want: Deny, rule: RuleMode},
		// Files opened by name from a list or a program.
		{name: "sort --files0-from", cmd: "sort --files0-from=main.go", mode: ask, want: Deny, rule: RuleMode},
		{name: "wc --files0-from", cmd: "wc --files0-from main.go", mode: ask, want: Deny, rule: RuleMode},
		{name: "awk ARGV", cmd: `awk 'BEGIN{ARGV[1]="/etc/passwd";ARGC=2}{print}'`, mode: ask, want: Deny, rule: RuleMode},
		// A repository whose config tools could write.
		{name: "git -C into a planted bare repo", cmd: "git -C bare log", mode: ask, want: Deny, rule: RuleMode},
		{name: "git discovering a planted bare repo", cmd: "cd bare/refs && git status", mode: ask, want: Deny, rule: RuleMode},
		{name: "git .git file pointing outside .git", cmd: "git -C linked status", mode: ask, want: Deny, rule: RuleMode},
		{name: "git in the project repo", cmd: "git -C sub log", mode: ask, want: Allow},
		{name: "git -C after an option value", cmd: "git --namespace x -C bare log", mode: ask, want: Deny, rule: RuleMode},
		{name: "git alias on the command line hides forbidden", cmd: "git -c alias.p=push p origin main", mode: edit, want: Deny, rule: RuleForbidden},
		{name: "git shell alias hides sudo", cmd: "git -c 'alias.x=!sudo id' x", mode: edit, want: Deny, rule: RuleForbidden},
		{name: "git pager config", cmd: "git -c core.pager='touch x' -p log", mode: edit, want: Ask, rule: RuleUnresolvable},
		{name: "git harmless config", cmd: "git -c user.name=x -c color.ui=never status", mode: edit, want: Ask, rule: RuleNotAllowed},
		{name: "env -u removes a protection", cmd: "env -u GIT_CONFIG_COUNT git status", mode: ask, want: Deny, rule: RuleMode},
		{name: "env -u of a harmless name", cmd: "env -u LANG ls", mode: ask, want: Allow},
		// Recursion that follows symlinks reads where they lead (out_link
		// leads out; proclink, to /proc/self, cannot be checked).
		{name: "grep -R follows a link out", cmd: "grep -R secret .", mode: ask, want: Deny, rule: RuleOutsideRoot},
		{name: "grep -r does not follow links below", cmd: "grep -rn secret .", mode: ask, want: Allow},
		{name: "rg -L follows a link out", cmd: "rg -L secret", mode: ask, want: Deny, rule: RuleOutsideRoot},
		{name: "diff -r follows a link out", cmd: "diff -r . sub", mode: ask, want: Deny, rule: RuleOutsideRoot},
		{name: "diff -r of trees with inside links", cmd: "diff -r sub tests", mode: ask, want: Allow},
		{name: "find -L follows a link out", cmd: "find -L . -name secret", mode: ask, want: Deny, rule: RuleOutsideRoot},
		{name: "checksum list opens named files", cmd: "sha256sum -c main.go", mode: ask, want: Deny, rule: RuleMode},
	}
	if len(cases) < 240 {
		t.Fatalf("only %d cases", len(cases))
	}
	g := f.guard(t)
	c := f.commands(t)
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			var v Verdict
			if tt.cmd != "" || tt.path == "" {
				cc := c
				if tt.agent != "" {
					cc = c.WithGuard(g.ForAgent(tt.agent, "t1"))
				}
				v = cc.Check(tt.cmd, tt.mode)
			} else {
				gg := g
				if tt.agent != "" {
					gg = g.ForAgent(tt.agent, "t1")
				}
				var err error
				_, v, err = gg.Check(tt.path, tt.access)
				if err != nil {
					t.Fatalf("Check(%q): %v", tt.path, err)
				}
			}
			if v.Action != tt.want {
				t.Fatalf("verdict %v, want %v", v, tt.want)
			}
			if tt.rule != "" && !hasRule(v, tt.rule) {
				t.Fatalf("verdict %v lacks a %s finding", v, tt.rule)
			}
			for _, r := range v.Reasons() {
				if strings.TrimSpace(r) == "" {
					t.Fatalf("empty reason in %v", v)
				}
			}
		})
	}
}

func hasRule(v Verdict, rule string) bool {
	for _, f := range v.Findings {
		if f.Rule == rule {
			return true
		}
	}
	return false
}
