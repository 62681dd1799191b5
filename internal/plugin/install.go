package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/odin-code/odin/internal/fsutil"
)

// Dir is the directory of installed plugins under the user's data dir.
func Dir(dataDir string) string { return filepath.Join(dataDir, "plugins") }

// stateFile keeps which plugins the user disabled, beside the plugins.
func stateFile(dataDir string) string { return filepath.Join(dataDir, "plugins.json") }

// State is what the user chose about plugins: the disabled ones, by name.
// It covers project plugins too, so a project's plugin can be turned off
// without editing the project.
type State struct {
	Disabled []string `json:"disabled"`
}

// LoadState reads the state; a missing file is the empty state.
func LoadState(dataDir string) (State, error) {
	var s State
	data, err := os.ReadFile(stateFile(dataDir))
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("plugin: %w", err)
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return s, fmt.Errorf("plugin: %s: invalid JSON: %w", stateFile(dataDir), err)
	}
	return s, nil
}

// SetEnabled records name as enabled or disabled.
func SetEnabled(dataDir, name string, enabled bool) error {
	s, err := LoadState(dataDir)
	if err != nil {
		return err
	}
	s.Disabled = slices.DeleteFunc(s.Disabled, func(n string) bool { return n == name })
	if !enabled {
		s.Disabled = append(s.Disabled, name)
		sort.Strings(s.Disabled)
	}
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return fmt.Errorf("plugin: %w", err)
	}
	return fsutil.WriteFileAtomic(stateFile(dataDir), append(data, '\n'), 0o600)
}

// ProjectDirs are the directories of a project's plugins: Odin's, then
// Claude Code's.
func ProjectDirs(root string) []string {
	return []string{filepath.Join(root, ".odin", "plugins"), filepath.Join(root, ".claude", "plugins")}
}

// Discover loads the user's installed plugins (under Dir(dataDir)) and
// the project's (under projectDirs), marking the disabled ones. A plugin
// that does not load is skipped and said in the problems; a project
// plugin with the name of an installed one is skipped likewise.
func Discover(dataDir string, projectDirs []string) ([]*Plugin, []string) {
	var out []*Plugin
	var problems []string
	state, err := LoadState(dataDir)
	if err != nil {
		problems = append(problems, err.Error())
	}
	seen := map[string]string{}
	scan := func(parent string, project bool) {
		entries, err := os.ReadDir(parent)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				problems = append(problems, fmt.Sprintf("plugins %s: %v", parent, err))
			}
			return
		}
		for _, e := range entries {
			if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
				continue
			}
			p, err := Load(filepath.Join(parent, e.Name()))
			if err != nil {
				problems = append(problems, err.Error()+"; plugin not loaded")
				continue
			}
			if prev, ok := seen[p.Name]; ok {
				problems = append(problems, fmt.Sprintf("plugin %s at %s: the name is taken by %s, which is used", p.Name, p.Dir, prev))
				continue
			}
			seen[p.Name] = p.Dir
			p.Project = project
			p.Disabled = slices.Contains(state.Disabled, p.Name)
			out = append(out, p)
		}
	}
	if dataDir != "" {
		scan(Dir(dataDir), false)
	}
	for _, d := range projectDirs {
		scan(d, true)
	}
	return out, problems
}

// IsGitURL reports whether src names a git repository rather than a
// folder: a URL, scp-like git@host:path, or a path ending in .git that is
// not a folder here.
func IsGitURL(src string) bool {
	for _, p := range []string{"https://", "http://", "ssh://", "git://", "file://", "git@"} {
		if strings.HasPrefix(src, p) {
			return true
		}
	}
	if strings.HasSuffix(src, ".git") {
		if fi, err := os.Stat(src); err != nil || !fi.IsDir() {
			return true
		}
	}
	return false
}

// Install copies the plugin at src (a folder, or a git URL cloned with
// git) into Dir(dataDir)/NAME and returns it loaded. Nothing from the
// plugin runs: git is called with hooks and templates off and without
// submodules or the ext transport, and a folder is copied file by file
// (its symlinks and .git are left out). A plugin of the same name must be
// removed first.
func Install(ctx context.Context, dataDir, src string) (*Plugin, []string, error) {
	if dataDir == "" {
		return nil, nil, errors.New("plugin: no data directory (set HOME or XDG_DATA_HOME)")
	}
	base := Dir(dataDir)
	if err := os.MkdirAll(base, 0o700); err != nil {
		return nil, nil, fmt.Errorf("plugin: %w", err)
	}
	tmp, err := os.MkdirTemp(base, ".add-")
	if err != nil {
		return nil, nil, fmt.Errorf("plugin: %w", err)
	}
	defer os.RemoveAll(tmp)
	staged := filepath.Join(tmp, "plugin")
	var notes []string
	if IsGitURL(src) {
		if err := clone(ctx, src, staged); err != nil {
			return nil, nil, err
		}
		if err := os.RemoveAll(filepath.Join(staged, ".git")); err != nil {
			return nil, nil, fmt.Errorf("plugin: %w", err)
		}
	} else {
		if _, err := Load(src); err != nil {
			return nil, nil, err
		}
		notes, err = copyTree(src, staged)
		if err != nil {
			return nil, nil, err
		}
	}
	p, err := Load(staged)
	if err != nil {
		return nil, nil, err
	}
	dest := filepath.Join(base, p.Name)
	if _, err := os.Lstat(dest); err == nil {
		return nil, nil, fmt.Errorf("plugin %s is already installed in %s; `odin plugin remove %s` first", p.Name, dest, p.Name)
	}
	if err := os.Rename(staged, dest); err != nil {
		return nil, nil, fmt.Errorf("plugin: %w", err)
	}
	p, err = Load(dest)
	return p, notes, err
}

// clone runs git clone of url into dir, with nothing of the repository's
// able to run: no hooks (core.hooksPath and an empty template), no
// submodules, no ext:: transport, no credential prompt.
func clone(ctx context.Context, url, dir string) error {
	cmd := exec.CommandContext(ctx, "git",
		"-c", "core.hooksPath=/dev/null", "-c", "protocol.ext.allow=never", "-c", "core.fsmonitor=false",
		"clone", "--depth=1", "--no-recurse-submodules", "--template=", "--quiet", "--", url, dir)
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("plugin: git clone %s: %v: %s", url, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// copyTree copies the regular files and directories of src into dst
// (which must not exist), keeping the executable bit; symlinks and .git
// are left out and said in the notes.
func copyTree(src, dst string) ([]string, error) {
	var notes []string
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir() && d.Name() == ".git" && path != src:
			return fs.SkipDir
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			notes = append(notes, rel+": a symlink, not copied")
			return nil
		case !d.Type().IsRegular():
			notes = append(notes, rel+": not a regular file, not copied")
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		return copyFile(path, target, fi.Mode().Perm()&0o755|0o600)
	})
	if err != nil {
		return nil, fmt.Errorf("plugin: copying %s: %w", src, err)
	}
	return notes, nil
}

func copyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}

// Remove deletes the installed plugin name and forgets its state.
func Remove(dataDir, name string) error {
	if !reName().MatchString(name) {
		return fmt.Errorf("plugin: %q is not a plugin name", name)
	}
	dir := filepath.Join(Dir(dataDir), name)
	if _, err := os.Lstat(filepath.Join(dir, ManifestPath)); err != nil {
		return fmt.Errorf("plugin %s is not installed (in %s)", name, Dir(dataDir))
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("plugin: %w", err)
	}
	return SetEnabled(dataDir, name, true)
}
