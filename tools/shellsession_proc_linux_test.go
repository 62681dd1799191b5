package tools

import (
	"fmt"
	"strings"
	"testing"

	"github.com/odin-code/odin/internal/sandbox"
	"github.com/odin-code/odin/internal/sandbox/attacktest"
)

// TestShellSessionAttackOtherProcesses: the user's other processes carry
// secrets in their environment and on their command lines (a client given
// --password=…), and the host's unix sockets revealing names in
// /proc/net/unix (attacktest's bait). ShellSession's
// shell once kept every /proc/PID under the Landlock fallback, for its
// timeout watchdog; now Odin keeps the timeout and the shell is confined
// like any command: a model's command reads neither, under bubblewrap or
// Landlock, in the call that times out as in an ordinary one. Unconfined
// (sandbox off) the same commands read both, which shows the test can
// fail.
func TestShellSessionAttackOtherProcesses(t *testing.T) {
	bait := attacktest.UserProcess(t)
	// What a model would do: read everything, keep what looks secret (the
	// output is bounded), and show the errors.
	attack := fmt.Sprintf(`{ for d in /proc/[0-9]* /proc/self /proc/%d; do
  cat "$d/environ" "$d/cmdline" "$d/status" "$d/net/unix" | tr '\0' '\n'
done
cat /proc/net/unix /proc/self/net/unix
ps -eo args
python3 -c 'import glob
for p in glob.glob("/proc/*/environ") + glob.glob("/proc/*/cmdline") + glob.glob("/proc/*/net/unix"):
    try: print(open(p, "rb").read())
    except OSError as e: print(e)'
} 2>&1 | grep -aiE 'password|secret|denied|such' | sort | uniq -c | sort -rn | head -50
echo attack-done`, bait.PID)
	launchers := map[string]func(*testing.T, string) *sandbox.Launcher{
		"bwrap":    bwrapLauncher,
		"landlock": landlockLauncher,
		"off": func(_ *testing.T, root string) *sandbox.Launcher {
			return sandbox.New(sandbox.Options{Mode: sandbox.ModeOff, Root: root})
		},
	}
	for name, launcher := range launchers {
		t.Run(name, func(t *testing.T) {
			root := realTemp(t)
			l := launcher(t, root)
			tl, env := confinedShell(t, l, root)
			var all strings.Builder
			res, _ := shellCall(t, tl, env, map[string]any{"command": attack})
			all.WriteString(res.Output)
			if !strings.Contains(res.Output, "attack-done") {
				t.Fatalf("the attack did not run to its end:\n%s", res.Output)
			}
			// The same attack in a call that times out, from a background
			// job left running, and read back in a later call.
			res, oc := shellCall(t, tl, env, map[string]any{"command": "(" + attack + ") > loot 2>&1 & " + attack + "; sleep 60", "timeout": 1500})
			all.WriteString(res.Output)
			if !oc.TimedOut || !strings.Contains(res.Output, "attack-done") {
				t.Fatalf("the call did not time out after the attack:\n%s", res.Output)
			}
			res, _ = shellCall(t, tl, env, map[string]any{"command": "wait; cat loot"})
			all.WriteString(res.Output)
			out := all.String()
			for what, secret := range map[string]string{"environment": bait.Env, "command line": bait.Arg, "socket": bait.Socket} {
				got := strings.Contains(out, secret)
				if name == "off" && !got {
					t.Errorf("control: unconfined, the shell did not read the user's process's %s; the test proves nothing", what)
				}
				if name != "off" && got {
					t.Errorf("a ShellSession command read the %s of a process outside the sandbox", what)
				}
			}
		})
	}
}
