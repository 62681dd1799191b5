package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/compat"
	"github.com/odin-code/odin/internal/fsutil"
	"github.com/odin-code/odin/internal/workspace"
)

// newImportCmd is `odin import claude|codex|opencode`: the settings Odin
// reads from another agent's files, written once as odin.yaml for those
// who prefer one file. The project's files go to the project's odin.yaml,
// the user's to the user's; an existing file is never replaced without
// --force.
func newImportCmd(g *globalFlags, stdout io.Writer) *cobra.Command {
	var force, print bool
	cmd := &cobra.Command{
		Use:   "import claude|codex|opencode",
		Short: "Write the settings of Claude Code, Codex or opencode as odin.yaml",
		Long: `Read the other agent's settings files as Odin reads them at every start
(Claude Code: ~/.claude/settings.json, .claude/settings.json and
.claude/settings.local.json; Codex: ~/.codex/config.toml; opencode:
~/.config/opencode/opencode.json and opencode.json) and write what they map
to as odin.yaml: the project's files to the project's odin.yaml, the user's
to the user's. Prints what was mapped and what could not be. An existing
odin.yaml is left alone unless --force.`,
		Example: `  odin import claude
  odin import codex --print`,
		Args:      cobra.ExactArgs(1),
		ValidArgs: []string{string(compat.Claude), string(compat.Codex), string(compat.Opencode)},
		RunE: func(_ *cobra.Command, args []string) error {
			peer := compat.Peer(strings.ToLower(args[0]))
			if !strings.Contains(" claude codex opencode ", " "+string(peer)+" ") {
				return usageError("import %s: want claude, codex or opencode", args[0])
			}
			wd, err := os.Getwd()
			if err != nil {
				return err
			}
			dir := g.dir
			if dir == "" {
				dir = wd
			}
			root, err := workspace.Resolve(wd, dir)
			if err != nil {
				return usageError("project directory %s: %v", dir, err)
			}
			env := config.EnvFunc(os.LookupEnv)
			home, _ := env("HOME")
			cfgHome, _ := env("XDG_CONFIG_HOME")
			codexHome, _ := env("CODEX_HOME")
			res := compat.Discover(compat.Options{Root: root, Home: home, ConfigHome: cfgHome, CodexHome: codexHome, Peers: []compat.Peer{peer}})
			if len(res.Layers) == 0 && len(res.Notes) == 0 && len(res.Profiles) == 0 {
				return &exitError{code: exitFailed, err: fmt.Errorf("import %s: no settings file found", peer)}
			}
			var user, project []compat.Layer
			for _, l := range res.Layers {
				if l.Project {
					project = append(project, l)
				} else {
					user = append(user, l)
				}
			}
			targets := []struct {
				path   string
				layers []compat.Layer
			}{{filepath.Join(config.UserDir(env), config.FileName), user}, {filepath.Join(root, config.FileName), project}}
			// Check every target first: nothing is written when one
			// would be overwritten.
			for _, t := range targets {
				if len(t.layers) == 0 || print || force {
					continue
				}
				if _, err := os.Stat(t.path); err == nil {
					return usageError("%s exists; odin import does not overwrite it (use --force, or --print and merge by hand)", t.path)
				} else if !errors.Is(err, fs.ErrNotExist) {
					return err
				}
			}
			for _, t := range targets {
				if len(t.layers) == 0 {
					continue
				}
				data, err := importYAML(peer, t.layers)
				if err != nil {
					return err
				}
				if print {
					fmt.Fprintf(stdout, "# %s\n%s\n", t.path, data)
				} else {
					if err := os.MkdirAll(filepath.Dir(t.path), 0o755); err != nil {
						return err
					}
					if err := fsutil.WriteFileAtomic(t.path, data, 0o644); err != nil {
						return err
					}
					fmt.Fprintf(stdout, "wrote %s\n", t.path)
				}
				for _, l := range t.layers {
					fmt.Fprintf(stdout, "from %s:\n", l.Source)
					for _, m := range l.Mapped {
						fmt.Fprintf(stdout, "  %s\n", config.Printable(m))
					}
					if l.Peer == compat.Claude && l.Tree["hooks"] != nil {
						fmt.Fprintln(stdout, "  note: in odin.yaml these hooks read tool_name as Odin names tools (ExecuteCommand, not Bash)")
					}
					if len(l.Env) > 0 {
						fmt.Fprintf(stdout, "  note: odin.yaml holds no values: export %s yourself (permissions.env passes them to commands)\n", strings.Join(sortedNames(l.Env), ", "))
					}
				}
			}
			if len(res.Profiles) > 0 {
				fmt.Fprintln(stdout, "profiles stay in config.toml: use them with odin --profile NAME")
			}
			if len(res.Notes) > 0 {
				fmt.Fprintf(stdout, "not mapped (%d):\n", len(res.Notes))
				for _, n := range res.Notes {
					fmt.Fprintf(stdout, "  %s\n", config.Printable(n.String()))
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "replace an existing odin.yaml")
	cmd.Flags().BoolVar(&print, "print", false, "print the odin.yaml instead of writing it")
	return cmd
}

// importYAML renders layers as one odin.yaml document.
func importYAML(peer compat.Peer, layers []compat.Layer) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Written by `odin import %s` from:\n", peer)
	for _, l := range layers {
		fmt.Fprintf(&b, "#   %s\n", l.Source)
	}
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	trees := make([]map[string]any, len(layers))
	for i, l := range layers {
		trees[i] = l.Tree
	}
	if err := enc.Encode(config.MergeForeign(trees)); err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	return b.Bytes(), nil
}
