package main

import (
	"path/filepath"

	"github.com/odin-code/odin/actors"
	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/instructions"
	"github.com/odin-code/odin/internal/plugin"
	"github.com/odin-code/odin/internal/policy"
	"github.com/odin-code/odin/internal/qa"
	"github.com/odin-code/odin/internal/term"
)

// projectTrust is everything a project supplies that waits for `odin
// trust`, gathered from each loader that reads project files.
type projectTrust struct {
	items       []config.TrustItem
	fingerprint string
	trusted     bool
	// previous are the items the project was last trusted with (non-nil
	// when it was trusted before and has changed since).
	previous []string
	// commandsText is the project instruction file whose Commands section
	// the QA gate would use (only once trusted).
	commandsText string
	// entries are the project's MCP servers and hooks that run a program,
	// with the project files they execute pinned as they are now; stored
	// are the pins `odin trust` recorded (pinned is false for a record
	// from before pinning).
	entries []pinnedEntry
	stored  map[string]policy.Pins
	pinned  bool
	// refusedServers are the project's MCP servers enforcePins kept from
	// starting, sorted.
	refusedServers []string
}

// agentDirs are the project's agent directories: Odin's, then Claude
// Code's (whose files Odin reads as they are).
func agentDirs(root string) []string {
	return []string{filepath.Join(root, ".odin", "agents"), filepath.Join(root, ".claude", "agents"), filepath.Join(root, ".opencode", "agent")}
}

// commandDirs are the project's custom command directories.
func commandDirs(root string) []string {
	return []string{filepath.Join(root, ".odin", "commands"), filepath.Join(root, ".claude", "commands"), filepath.Join(root, ".opencode", "command")}
}

// collectTrust gathers the trust items of the project at root: the keys of
// its odin.yaml (config's rule), its agent files, its command files and the
// check commands its instruction files, package.json or Makefile write.
func collectTrust(root string, src *config.Sources, instr instructions.Result, plugins []*plugin.Plugin) projectTrust {
	pt := projectTrust{items: src.TrustItems()}
	pt.items = append(pt.items, actors.AgentTrustItems(root, append(agentDirs(root), projectPluginDirs(plugins, false)...))...)
	pt.items = append(pt.items, term.CommandTrustItems(root, append(commandDirs(root), projectPluginDirs(plugins, true)...)...)...)
	pt.items = append(pt.items, pluginTrustItems(root, plugins)...)
	file := ""
	for _, s := range instructions.Project(instr.Sources) {
		if len(qa.FromInstructions(s.Content)) > 0 {
			pt.commandsText = s.Content
			if rel, err := filepath.Rel(root, s.Path); err == nil {
				file = rel
			} else {
				file = s.Path
			}
			break
		}
	}
	pt.items = append(pt.items, qa.TrustItems(root, file, pt.commandsText)...)
	pt.fingerprint = config.TrustFingerprint(pt.items)
	return pt
}

// shown returns the items as the user reads them.
func (pt projectTrust) shown() []string {
	out := make([]string, len(pt.items))
	for i, it := range pt.items {
		out[i] = it.String()
	}
	return out
}
