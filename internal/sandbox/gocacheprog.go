package sandbox

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// goCacheProgArg marks a process started by the go command as the
// sandbox's GOCACHEPROG (see Main and serveGoCache).
const goCacheProgArg = "__odin_gocacheprog"

// The go command's build cache, as its GOCACHEPROG protocol
// (cmd/go/internal/cacheprog) and its on-disk layout
// (cmd/go/internal/cache) define them.
type goCacheRequest struct {
	ID       int64
	Command  string
	ActionID []byte `json:",omitempty"`
	OutputID []byte `json:",omitempty"`
	BodySize int64  `json:",omitempty"`
}

type goCacheResponse struct {
	ID            int64
	Err           string     `json:",omitempty"`
	KnownCommands []string   `json:",omitempty"`
	Miss          bool       `json:",omitempty"`
	OutputID      []byte     `json:",omitempty"`
	Size          int64      `json:",omitempty"`
	Time          *time.Time `json:",omitempty"`
	DiskPath      string     `json:",omitempty"`
}

// goCacheHashSize is the size of an action or output ID (SHA-256).
const goCacheHashSize = 32

// goCacheEntrySize is the length of an action entry file: "v1 <action
// hex> <output hex> <size, 20 wide> <unix nanoseconds, 20 wide>\n".
const goCacheEntrySize = 2 + 1 + 2*goCacheHashSize + 1 + 2*goCacheHashSize + 1 + 20 + 1 + 20 + 1

// goCacheProgEnv is the GOCACHEPROG setting that gives sandboxed go
// commands the user's build cache warm: exe is Odin's binary as the
// sandbox sees it, lower the user's GOCACHE (read, never written), upper
// the project's private cache (where everything new goes). Empty when a
// path cannot be quoted for the go command.
func goCacheProgEnv(exe, lower, upper string) string {
	for _, p := range []string{exe, lower, upper} {
		if p == "" || strings.ContainsAny(p, "'\"\n") {
			return ""
		}
	}
	q := func(s string) string { return "'" + s + "'" }
	return "GOCACHEPROG=" + q(exe) + " " + goCacheProgArg + " " + q(lower) + " " + q(upper)
}

// userGoCache is the user's own Go build cache as the go command finds it
// (GOCACHE, else the user cache directory's go-build), or "" when there is
// none to offer.
func userGoCache(environ []string) string {
	get := func(k string) string {
		for i := len(environ) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(environ[i], k+"="); ok {
				return v
			}
		}
		return ""
	}
	dir := get("GOCACHE")
	switch {
	case dir == "off":
		return ""
	case dir != "":
	case get("XDG_CACHE_HOME") != "":
		dir = filepath.Join(get("XDG_CACHE_HOME"), "go-build")
	case get("HOME") != "":
		dir = filepath.Join(get("HOME"), ".cache", "go-build")
	}
	if dir == "" || !filepath.IsAbs(dir) {
		return ""
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return ""
	}
	if fi, err := os.Stat(filepath.Join(real, "README")); err != nil || !fi.Mode().IsRegular() {
		// Not a go build cache (the go command writes this README first).
		return ""
	}
	return real
}

// serveGoCache answers the go command's GOCACHEPROG requests on in/out: a
// get looks in upper, then in lower; a put writes to upper only, in the
// go command's own layout (so the private cache also works as a plain
// GOCACHE). Nothing is ever written beneath lower: a sandboxed command
// cannot plant an object the user's own builds would link.
func serveGoCache(lower, upper string, in io.Reader, out io.Writer) error {
	w := bufio.NewWriter(out)
	enc := json.NewEncoder(w)
	send := func(r goCacheResponse) error {
		if err := enc.Encode(r); err != nil {
			return err
		}
		return w.Flush()
	}
	if err := send(goCacheResponse{KnownCommands: []string{"get", "put", "close"}}); err != nil {
		return err
	}
	dec := json.NewDecoder(bufio.NewReader(in))
	for {
		var req goCacheRequest
		if err := dec.Decode(&req); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("gocacheprog: read request: %w", err)
		}
		var body []byte
		if req.Command == "put" && req.BodySize > 0 {
			if err := dec.Decode(&body); err != nil {
				return fmt.Errorf("gocacheprog: read body: %w", err)
			}
		}
		res := goCacheResponse{ID: req.ID}
		switch req.Command {
		case "get":
			if len(req.ActionID) != goCacheHashSize {
				res.Err = "bad action ID"
				break
			}
			hit := false
			for _, dir := range []string{upper, lower} {
				if out, size, tm, path, ok := goCacheLookup(dir, req.ActionID); ok {
					res.OutputID, res.Size, res.Time, res.DiskPath, hit = out, size, &tm, path, true
					break
				}
			}
			res.Miss = !hit
		case "put":
			path, err := goCachePut(upper, req.ActionID, req.OutputID, body)
			if err != nil {
				res.Err = err.Error()
			}
			res.DiskPath = path
		case "close":
			return send(res)
		default:
			res.Err = "unknown command " + strconv.Quote(req.Command)
		}
		if err := send(res); err != nil {
			return err
		}
	}
}

// goCacheFile is the go command's name for an action ("a") or output
// ("d") file of a cache directory.
func goCacheFile(dir string, id []byte, kind string) string {
	h := hex.EncodeToString(id)
	return filepath.Join(dir, h[:2], h+"-"+kind)
}

// goCacheLookup reads an action entry of dir and checks that its output
// file is there with the recorded size, as the go command's GetFile does.
func goCacheLookup(dir string, action []byte) (out []byte, size int64, tm time.Time, path string, ok bool) {
	if dir == "" {
		return nil, 0, time.Time{}, "", false
	}
	entry, err := os.ReadFile(goCacheFile(dir, action, "a"))
	if err != nil || len(entry) != goCacheEntrySize || !bytes.HasPrefix(entry, []byte("v1 ")) || entry[len(entry)-1] != '\n' {
		return nil, 0, time.Time{}, "", false
	}
	f := strings.Fields(string(entry))
	if len(f) != 5 || f[1] != hex.EncodeToString(action) {
		return nil, 0, time.Time{}, "", false
	}
	out, err = hex.DecodeString(f[2])
	if err != nil || len(out) != goCacheHashSize {
		return nil, 0, time.Time{}, "", false
	}
	size, err1 := strconv.ParseInt(f[3], 10, 64)
	nano, err2 := strconv.ParseInt(f[4], 10, 64)
	if err1 != nil || err2 != nil || size < 0 {
		return nil, 0, time.Time{}, "", false
	}
	path = goCacheFile(dir, out, "d")
	fi, err := os.Stat(path)
	if err == nil && fi.IsDir() {
		// A cached executable: a directory holding the one binary.
		ents, rerr := os.ReadDir(path)
		if rerr != nil || len(ents) != 1 {
			return nil, 0, time.Time{}, "", false
		}
		path = filepath.Join(path, ents[0].Name())
		fi, err = os.Stat(path)
	}
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != size {
		return nil, 0, time.Time{}, "", false
	}
	return out, size, time.Unix(0, nano), path, true
}

// goCachePut stores body under its output ID and the action entry that
// points at it, each written whole (temporary file and rename), so
// concurrent go commands of the project never read half an entry.
func goCachePut(dir string, action, out, body []byte) (string, error) {
	if len(action) != goCacheHashSize || len(out) != goCacheHashSize {
		return "", errors.New("bad action or output ID")
	}
	if sum := sha256.Sum256(body); !bytes.Equal(sum[:], out) {
		return "", errors.New("output ID is not the body's SHA-256")
	}
	path := goCacheFile(dir, out, "d")
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() || fi.Size() != int64(len(body)) {
		if err := writeWhole(path, body); err != nil {
			return "", err
		}
	}
	entry := fmt.Sprintf("v1 %x %x %20d %20d\n", action, out, len(body), time.Now().UnixNano())
	if err := writeWhole(goCacheFile(dir, action, "a"), []byte(entry)); err != nil {
		return "", err
	}
	return path, nil
}

func writeWhole(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}

// runGoCacheProg is the GOCACHEPROG process: argv holds lower and upper.
func runGoCacheProg(argv []string) int {
	if len(argv) != 2 {
		fmt.Fprintln(os.Stderr, "odin gocacheprog: want LOWER UPPER")
		return 2
	}
	if err := serveGoCache(argv[0], argv[1], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "odin", err)
		return 1
	}
	return 0
}
