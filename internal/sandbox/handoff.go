package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
)

// execArg marks a process started to run a handed-off command (Handoff).
const execArg = "__odin_sandbox_exec"

// handoffSpec is what a handoff file holds: the bwrap command line as the
// Launcher built it, with its filtered environment.
type handoffSpec struct {
	Path string   `json:"path"`
	Args []string `json:"args"`
	Env  []string `json:"env"`
	Dir  string   `json:"dir"`
	// Seccomp is the socket filter bwrap reads from fd 4 (--seccomp 4);
	// nil when the command line passes none that way. fd 3 is always
	// bwrap's --info-fd.
	Seccomp []byte `json:"seccomp,omitempty"`
	// Limits are the rlimits set on bwrap's child while it waits on
	// --block-fd (the next descriptor); nil when the command line
	// passes none.
	Limits *initLimits `json:"limits,omitempty"`
}

// CanHandoff reports whether Handoff works with this Launcher: it needs
// bubblewrap, whose command line holds the whole sandbox, and Odin's own
// binary to start it.
func (l *Launcher) CanHandoff() bool {
	l = l.get()
	return l.Status().Kind == KindBubblewrap && l.exe != ""
}

// Handoff is for a command that another program starts, such as an
// editor's terminal (ACP terminal/create), which must not run it itself:
// in its own environment, outside the sandbox. It writes what it takes to
// start p (the bwrap command line with its filtered environment, working
// directory and socket filter) to a one-use file, 0600, in dir and returns
// the command line that starts it: Odin's own binary in a hidden mode
// that reads and removes the file, sets the same sandbox up with the same
// environment (nothing of the starting program's) and runs the command,
// killing its namespace when it is signalled. p must come from a Launcher
// that CanHandoff and must not be started; call Release once the
// handed-off command has ended (it stops p's proxy). remove deletes the
// file when the command line is not run after all.
func (p *Process) Handoff(dir string) (argv []string, remove func(), err error) {
	if p == nil || p.nsReady == nil || p.exe == "" {
		return nil, nil, errors.New("sandbox: only a bubblewrap command can be handed off")
	}
	if p.Process != nil {
		return nil, nil, errors.New("sandbox: the command has started already")
	}
	spec := handoffSpec{Path: p.Path, Args: p.Args, Env: p.Env, Dir: p.Dir, Seccomp: p.seccompProg, Limits: p.limits}
	data, err := json.Marshal(spec)
	if err != nil {
		return nil, nil, fmt.Errorf("sandbox: handoff: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("sandbox: handoff: %w", err)
	}
	f, err := os.CreateTemp(dir, "exec-*.json") // 0600
	if err != nil {
		return nil, nil, fmt.Errorf("sandbox: handoff: %w", err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return nil, nil, fmt.Errorf("sandbox: handoff: %w", err)
	}
	name := f.Name()
	return []string{p.exe, execArg, name}, func() { _ = os.Remove(name) }, nil
}

// maxHandoff bounds a handoff file: a command line and an environment.
const maxHandoff = 8 << 20

// runHandoff runs the command a handoff file describes and returns its
// exit status. The file is removed before anything runs, so it starts one
// command at most; one not private to this user is refused.
func runHandoff(path string) int {
	fail := func(err error) int {
		fmt.Fprintf(os.Stderr, "odin sandbox: %v\n", err)
		return 126
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return fail(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fail(err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 || !ok || int(st.Uid) != os.Getuid() {
		return fail(fmt.Errorf("%s is not a private file of this user", path))
	}
	if err := os.Remove(path); err != nil {
		return fail(err)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxHandoff))
	if err != nil {
		return fail(err)
	}
	var spec handoffSpec
	if err := json.Unmarshal(data, &spec); err != nil {
		return fail(fmt.Errorf("handoff %s: %w", path, err))
	}
	if spec.Path == "" || len(spec.Args) == 0 {
		return fail(fmt.Errorf("handoff %s: no command", path))
	}
	cmd := exec.Command(spec.Path)
	cmd.Args = spec.Args
	// Never nil: a nil Env would pass on this process's environment,
	// which is the starting program's.
	cmd.Env = append([]string{}, spec.Env...)
	cmd.Dir = spec.Dir
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.SysProcAttr = sessionAttr(syscall.SIGKILL)
	p := &Process{Cmd: cmd, nsReady: make(chan struct{})}
	if p.infoR, p.infoW, err = os.Pipe(); err != nil {
		return fail(err)
	}
	defer p.Release()
	cmd.ExtraFiles = []*os.File{p.infoW}
	if spec.Seccomp != nil {
		r, err := progPipe(spec.Seccomp)
		if err != nil {
			return fail(err)
		}
		p.seccompR = r
		cmd.ExtraFiles = append(cmd.ExtraFiles, r)
	}
	if spec.Limits != nil {
		if err := p.blockForLimits(spec.Limits); err != nil {
			return fail(err)
		}
	}
	go p.readInfo()
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	if err := cmd.Start(); err != nil {
		return fail(err)
	}
	// waited is closed once Wait returned; waitErr is read only after.
	var waitErr error
	waited := make(chan struct{})
	go func() { waitErr = cmd.Wait(); close(waited) }()
	select {
	case <-waited:
		return exitStatus(waitErr)
	case s := <-sigs:
		// Killed for the signal: it is the status, whatever Wait says.
		_ = p.Kill()
		<-waited
		return 128 + int(s.(syscall.Signal))
	}
}
