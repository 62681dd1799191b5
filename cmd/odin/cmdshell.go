package main

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/odin-code/odin/actors"
	"github.com/odin-code/odin/internal/compat"
	"github.com/odin-code/odin/internal/policy"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools"
	"github.com/odin-code/odin/tools/tool"
)

// commandShellTimeout bounds one !`command` line of a custom command: the
// prompt waits for it.
const commandShellTimeout = 2 * time.Minute

// commandShell runs the !`command` lines of custom commands as Claude Code
// does, but through Odin's rules: ExecuteCommand with the session's
// permission policy (headless: what would need approval is refused, and
// the refusal is inlined instead of the output) and its sandbox. The
// command's allowed-tools Bash(...) rules widen the policy for that
// command only, as Claude's allowed-tools do; forbidden commands stay
// forbidden.
func (a *app) commandShell(deps *actors.Deps) func(command string, allowed []string) string {
	return func(command string, allowed []string) string {
		perms := a.cfg.Permissions
		perms.AllowedCommands = append(append([]string(nil), perms.AllowedCommands...), a.flags.allow...)
		perms.AdditionalDirs = append(append([]string(nil), perms.AdditionalDirs...), a.flags.addDirs...)
		perms.ForbiddenCommands = append(append([]string(nil), perms.ForbiddenCommands...), a.flags.forbid...)
		for _, t := range allowed {
			if spec, ok := strings.CutPrefix(strings.TrimSpace(t), "Bash("); ok && strings.HasSuffix(spec, ")") {
				perms.AllowedCommands = append(perms.AllowedCommands, compat.BashPattern(strings.TrimSuffix(spec, ")")))
			}
		}
		var protected []string
		for _, d := range []string{a.userDir, a.stateDir, a.dataDir} {
			if d != "" {
				protected = append(protected, d)
			}
		}
		pol, err := policy.New(policy.Options{Root: a.root, Permissions: perms, Protected: protected,
			Approver: policy.Headless{Yolo: a.flags.yolo}, TestFiles: a.cfg.Quality.TestFiles})
		if err != nil {
			return "(not run: `" + command + "`: " + err.Error() + ")"
		}
		set := a.baseTools().Map(tools.WithPermission(pol), tools.WithRecover)
		mode, err := messages.ParseMode(a.cfg.Mode)
		if err != nil {
			mode = messages.ModeAsk
		}
		env := &tool.Env{Root: a.root, Agent: "user", AgentID: "command", SessionID: "command", Mode: string(mode),
			Reads: tool.NewReadState(), Guard: deps.Guard("user", ""), DenyRead: deps.DenyRead}
		ctx, cancel := context.WithTimeout(context.Background(), commandShellTimeout)
		defer cancel()
		in, _ := json.Marshal(map[string]string{"command": command})
		res, err := set.Run(ctx, env, tools.NameExecuteCommand, in)
		switch {
		case err != nil:
			return "(`" + command + "` failed: " + err.Error() + ")"
		case res.Denied:
			return "(not run: " + strings.TrimSpace(res.Output) + ")"
		}
		return strings.TrimRight(res.Output, "\n")
	}
}
