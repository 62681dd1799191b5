package term

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/workspace"
	"github.com/odin-code/odin/messages"
)

// Bounds on what @ mentions attach: one file is cut at maxMentionBytes,
// and files past maxMentionTotal in one message are not attached.
const (
	maxMentionBytes = 256 << 10
	maxMentionTotal = 1 << 20
)

// attachedFilesTag opens the block of mentioned files appended to a
// message; the transcript's echo stops there.
const attachedFilesTag = "\n\n<attached_files>"

// reMention finds @path words: at the start or after a blank.
var reMention = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?:^|\s)@([^\s@]+)`) })

// attachMentions returns body with the files it mentions (@path, relative
// to root) appended in an <attached_files> block, the images it mentions
// (a path ending .png, .jpg, .jpeg, .gif or .webp: sent as image parts,
// sniffed and capped by llm.ReadImage), and one note per
// mention that names a file: what was attached, cut or refused. The guard
// is ReadFile's: the path is resolved through every symlink and must stay
// inside root, so neither "@../x" nor a link leading out of the project
// reads anything outside it. A mention that names nothing (an e-mail
// handle, a typo) is left as text without a note. A root of "" attaches
// nothing. A file on the read deny list (deny reports it: permissions.deny_read)
// is refused with a note naming the rule, however the mention reaches it.
func attachMentions(root string, deny DenyRead, body string) (string, []messages.Image, []string) {
	if root == "" || !strings.Contains(body, "@") {
		return body, nil, nil
	}
	realRoot, err := workspace.Resolve("/", root)
	if err != nil {
		return body, nil, []string{"! @ mentions: " + err.Error()}
	}
	var (
		images []messages.Image
		notes  []string
		block  strings.Builder
		total  int
		seen   = map[string]bool{}
	)
	for _, m := range reMention().FindAllStringSubmatch(body, -1) {
		name := m[1]
		// Trailing punctuation belongs to the sentence ("see @a.go,"),
		// unless the file's name really ends with it.
		if _, err := os.Lstat(filepath.Join(root, name)); err != nil {
			name = strings.TrimRight(name, ".,;:!?)]}'\"")
		}
		if name == "" || seen[name] {
			continue
		}
		seen[name] = true
		if llm.IsImagePath(name) {
			im, err := readImageMention(realRoot, deny, name)
			switch {
			case errors.Is(err, fs.ErrNotExist):
			case err != nil:
				notes = append(notes, fmt.Sprintf("! @%s not attached: %v", name, err))
			default:
				images = append(images, im)
				notes = append(notes, fmt.Sprintf("attached @%s as an image (%s %dx%d, %s)", name, im.MIME, im.Width, im.Height, byteSize(int64(len(im.Data)))))
			}
			continue
		}
		data, size, err := readMention(realRoot, deny, name, maxMentionTotal-total)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			notes = append(notes, fmt.Sprintf("! @%s not attached: %v", name, err))
			continue
		}
		total += len(data)
		note := fmt.Sprintf("attached @%s (%s)", name, byteSize(int64(len(data))))
		if int64(len(data)) < size {
			note = fmt.Sprintf("attached @%s: the first %s of %s", name, byteSize(int64(len(data))), byteSize(size))
		}
		notes = append(notes, note)
		fmt.Fprintf(&block, "<file path=%q>\n%s\n</file>\n", filepath.ToSlash(filepath.Clean(name)), strings.TrimRight(string(data), "\n"))
	}
	if block.Len() == 0 {
		return body, images, notes
	}
	return body + attachedFilesTag + "\n" + block.String() + "</attached_files>", images, notes
}

// readImageMention reads the image file rel under realRoot, guarded as
// readMention is.
func readImageMention(realRoot string, deny DenyRead, rel string) (messages.Image, error) {
	real, err := resolveMention(realRoot, deny, rel)
	if err != nil {
		return messages.Image{}, err
	}
	im, err := llm.ReadImage(real)
	if err != nil {
		return messages.Image{}, err
	}
	return messages.Image{Name: filepath.ToSlash(filepath.Clean(rel)), MIME: im.MIME, Data: im.Data, Width: im.Width, Height: im.Height}, nil
}

// resolveMention resolves rel under realRoot through every symlink; it
// must stay inside realRoot and off the read deny list. A name that does
// not exist is fs.ErrNotExist.
func resolveMention(realRoot string, deny DenyRead, rel string) (string, error) {
	if filepath.IsAbs(rel) {
		// An absolute path is outside the project unless it says so.
		if r, err := filepath.Rel(realRoot, rel); err == nil {
			rel = r
		}
	}
	if _, err := os.Lstat(filepath.Join(realRoot, rel)); err != nil {
		return "", fs.ErrNotExist
	}
	real, err := workspace.ResolveFrom(realRoot, rel)
	if err != nil {
		return "", err
	}
	if !workspace.Within(realRoot, real) {
		return "", errors.New("it is outside the project")
	}
	if deny != nil {
		for _, p := range []string{filepath.Join(realRoot, rel), real} {
			if rule, ok := deny(p); ok {
				return "", fmt.Errorf("it is on the read deny list (rule %s)", rule)
			}
		}
	}
	return real, nil
}

// DenyRead reports the rule of the read deny list that covers path
// (absolute), if any; readdeny.Rules.Check is one.
type DenyRead func(path string) (rule string, denied bool)

// readMention reads up to min(budget, maxMentionBytes) bytes of the
// regular text file rel under realRoot (resolved), and its full size.
func readMention(realRoot string, deny DenyRead, rel string, budget int) ([]byte, int64, error) {
	real, err := resolveMention(realRoot, deny, rel)
	if err != nil {
		return nil, 0, err
	}
	f, err := os.Open(real)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	if !info.Mode().IsRegular() {
		if info.IsDir() {
			return nil, 0, errors.New("it is a directory (mention its files)")
		}
		return nil, 0, errors.New("it is not a regular file")
	}
	if budget <= 0 {
		return nil, 0, fmt.Errorf("this message already attaches %s", byteSize(maxMentionTotal))
	}
	data, err := io.ReadAll(io.LimitReader(f, int64(min(budget, maxMentionBytes))))
	if err != nil {
		return nil, 0, err
	}
	if bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0 {
		return nil, 0, errors.New("it is a binary file")
	}
	return data, info.Size(), nil
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
