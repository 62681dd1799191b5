package mcp

import (
	"context"
	"errors"
	"os/exec"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Launcher builds the command of a stdio server. server is its name in
// mcp.servers, argv its command and args, env its environment as
// ServerEnv builds it (a sandboxing launcher keeps the server's declared
// entries and supplies its own base), dir its working directory. The returned command must not be started: the SDK starts it
// with its stdin and stdout as the MCP connection. release, when not nil,
// is called once after the command has been waited for (or failed to
// start), to free what the launcher holds for it (the sandbox's pipes and
// proxy). This is where the session's sandbox launcher plugs in.
type Launcher func(ctx context.Context, server string, argv []string, env []string, dir string) (cmd *exec.Cmd, release func(), err error)

// ErrNoLauncher is a stdio server of a Manager built without
// Options.Launch: Odin runs stdio servers only through its sandbox
// launcher, never as plain child processes.
var ErrNoLauncher = errors.New("mcp: no sandbox launcher for stdio servers (Options.Launch): Odin runs them only in its sandbox")

// noLaunch is the Launcher of a Manager built without one: it refuses
// every stdio server, so that none runs outside the sandbox.
func noLaunch(context.Context, string, []string, []string, string) (*exec.Cmd, func(), error) {
	return nil, nil, Refused(ErrNoLauncher)
}

// commandTransport is the SDK's CommandTransport plus the launcher's
// release: the SDK waits for the command when the connection closes
// (Odin closed it, or the server exited and the read failed), so release
// runs right after that Close, or at once when the command never started.
type commandTransport struct {
	sdk.CommandTransport
	release func()
}

func newCommandTransport(cmd *exec.Cmd, release func()) sdk.Transport {
	if release == nil {
		release = func() {}
	}
	return &commandTransport{CommandTransport: sdk.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second},
		release: sync.OnceFunc(release)}
}

func (t *commandTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	c, err := t.CommandTransport.Connect(ctx)
	if err != nil {
		// Start is the SDK's last step: a failed Connect left no process.
		t.release()
		return nil, err
	}
	return &releasingConn{Connection: c, release: t.release}, nil
}

// releasingConn releases the command's resources once its Close (which
// waits for the command) has returned.
type releasingConn struct {
	sdk.Connection
	release func()
}

func (c *releasingConn) Close() error {
	err := c.Connection.Close()
	// Not inline: the sandbox's release waits (briefly) for the whole
	// process tree to be gone, and the session must learn at once that
	// its server stopped, so that the next call waits for the restart.
	go c.release()
	return err
}
