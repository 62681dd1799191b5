package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/odin-code/odin/messages"
)

// finalQuiet is -q's end of a text run: the answer alone on stdout, the
// shape $(odin run -q "...") needs. Files, diff and usage are dropped;
// a failed turn's error reaches stderr through the exit error, and a
// failed gate's report goes there too, since the exit code alone does not
// tell what to fix.
func (r *renderer) finalQuiet(res messages.TurnResult) {
	if res.Answer != "" {
		fmt.Fprintln(r.out, strings.TrimRight(res.Answer, "\n"))
	}
	if res.Status == messages.TurnGateFailed && res.Gates != nil {
		printGates(r.errw, res.Gates)
	}
}

// initEvent is the first line of a stream-json run.
func (a *app) initEvent(live *liveSession, mode messages.Mode) messages.Envelope {
	ev := messages.Init{SessionID: live.ID, Resumed: live.Resumed, Cwd: a.root, Mode: mode,
		Model: a.cfg.Models.Main, SmallModel: a.cfg.Models.Small, Version: versionString(),
		Tools: live.Deps.Tools.Names(), Agents: []string{}}
	if ref, err := a.cfg.ResolveModel(a.roleModel("main")); err == nil {
		ev.Model = ref.ID // a resumed session's kept model included
	}
	for _, def := range live.Deps.Roster.Agents() {
		ev.Agents = append(ev.Agents, def.Name)
	}
	return messages.Envelope{Session: live.ID, Time: time.Now(), Event: ev}
}
