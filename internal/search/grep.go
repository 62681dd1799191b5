package search

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"unicode/utf16"
	"unicode/utf8"
)

// Mode is what Grep reports.
type Mode int

// Output modes, as ripgrep's flags name them.
const (
	// Content prints matching lines (rg default), with optional context.
	Content Mode = iota
	// FilesWithMatches prints the paths of files with a match (rg -l).
	FilesWithMatches
	// Count prints path:count of matching lines per file (rg -c).
	Count
)

// GrepOptions configures a search.
type GrepOptions struct {
	Matcher *Matcher
	Mode    Mode
	// LineNumbers prefixes content lines with their number (rg -n).
	LineNumbers bool
	// Before and After are context line counts (rg -B, -A).
	Before, After int
	// Walk selects the files.
	Walk WalkOptions
	// RelativePaths prints paths relative to the root instead of absolute
	// (for comparing with ripgrep run inside the root).
	RelativePaths bool
	// MaxFileOutput caps the bytes of content kept per file; lines past it
	// are counted in FileResult.Omitted. 0 means no cap.
	MaxFileOutput int
	// MaxFileSize skips files larger than this many bytes (counted in
	// GrepResult.TooLarge), since files are read whole: the size is checked
	// before reading, and reading stops past it for a file that grows or
	// does not report its size. 0 means no limit.
	MaxFileSize int64
	// MaxInFlight bounds the bytes of file content (with room for the
	// copies binary and UTF-16 files need) that the workers hold at once:
	// a worker about to read a big file waits for its share. It keeps a
	// search's memory bounded however many workers run. 0 means no bound.
	MaxInFlight int64
	// MaxRetained bounds the output bytes held in memory across files.
	// Past it, the output of the files that sort last is dropped (their
	// line counts are kept, Dropped is set), so the files kept are always
	// a prefix of the sorted result at least MaxRetained/2 bytes long.
	// Callers that show only the first part of the output use it to keep
	// a search of a huge tree in bounded memory. 0 means no bound.
	MaxRetained int
}

// FileResult is one file's share of the output.
type FileResult struct {
	Path string
	// Output is the file's formatted lines, exactly as ripgrep prints them
	// (without the `--` that separates files when context is on).
	Output []byte
	// Lines is the number of lines in Output plus Omitted.
	Lines int
	// Omitted is the number of output lines dropped by MaxFileOutput or
	// MaxRetained.
	Omitted int
	// Dropped is set when MaxRetained dropped all of Output.
	Dropped bool
}

// GrepResult is a search's outcome, files sorted by path like
// `rg --sort path`.
type GrepResult struct {
	Files []FileResult
	// Searched is the number of files opened.
	Searched int64
	// TooLarge is the number of files skipped for MaxFileSize.
	TooLarge int64
	// Context reports whether groups must be separated by `--`.
	Context bool
}

// Output returns the whole output, as ripgrep would print it.
func (r *GrepResult) Output() []byte {
	var out []byte
	for i, f := range r.Files {
		if r.Context && i > 0 {
			out = append(out, "--\n"...)
		}
		out = append(out, f.Output...)
	}
	return out
}

// binaryWindow is ripgrep's buffer size: binary detection for explicit
// files and multiline search looks at this much of the file.
const binaryWindow = 64 << 10

// Grep searches root (absolute and clean: a directory or a file) for the
// matcher's pattern, in parallel, following ripgrep's rules for which files
// are searched (ignore files, hidden files, binary files, globs, types) and
// how results are printed. Results are sorted by path. Grep stops early
// with ctx.Err() when ctx is done.
func Grep(ctx context.Context, root string, opts GrepOptions) (*GrepResult, error) {
	if opts.Matcher == nil {
		return nil, errors.New("search: Grep without a matcher")
	}
	if opts.Mode != Content {
		opts.Before, opts.After = 0, 0
	}
	n := NumWorkers(opts.Walk)
	workers := make([]*grepWorker, n)
	col := &collector{limit: opts.MaxRetained}
	budget := newByteBudget(opts.MaxInFlight)
	for i := range workers {
		workers[i] = &grepWorker{opts: &opts, root: root, col: col, budget: budget, buf: make([]byte, initialBuffer)}
		if opts.Matcher.lits != nil {
			workers[i].cur = newCursor(opts.Matcher.lits)
		}
		if opts.Matcher.prog != nil {
			workers[i].dfa = newLineDFA(opts.Matcher.prog)
		}
	}
	var searched atomic.Int64
	err := Walk(ctx, root, opts.Walk, func(w int, e Entry) error {
		searched.Add(1)
		return workers[w].file(e)
	})
	if err != nil {
		return nil, err
	}
	res := &GrepResult{Searched: searched.Load(), Context: opts.Before > 0 || opts.After > 0, Files: col.files}
	for _, w := range workers {
		res.TooLarge += w.tooLarge
	}
	slices.SortFunc(res.Files, func(a, b FileResult) int { return ComparePaths(a.Path, b.Path) })
	return res, nil
}

// collector gathers the workers' file results, holding about limit output
// bytes: past it, the outputs of the files that sort last are dropped,
// keeping a sorted prefix of at least limit/2 bytes.
type collector struct {
	mu       sync.Mutex
	limit    int
	files    []FileResult
	retained int
	// cutoff, once set, is the smallest path whose output was dropped:
	// outputs of paths after it are dropped on arrival.
	cutoff    string
	hasCutoff bool
}

func (c *collector) add(f FileResult) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.limit > 0 && c.hasCutoff && ComparePaths(f.Path, c.cutoff) > 0 {
		f = dropOutput(f)
	}
	c.files = append(c.files, f)
	c.retained += len(f.Output)
	if c.limit <= 0 || c.retained <= c.limit {
		return
	}
	// Drop from the end of the sorted order down to half the limit.
	slices.SortFunc(c.files, func(a, b FileResult) int { return ComparePaths(a.Path, b.Path) })
	for i := len(c.files) - 1; i >= 0; i-- {
		if c.files[i].Dropped {
			continue
		}
		if c.retained-len(c.files[i].Output) < c.limit/2 {
			break // keep at least half the limit, from the first paths
		}
		c.retained -= len(c.files[i].Output)
		c.files[i] = dropOutput(c.files[i])
		c.cutoff, c.hasCutoff = c.files[i].Path, true
	}
}

func dropOutput(f FileResult) FileResult {
	f.Output, f.Omitted, f.Dropped = nil, f.Lines, true
	return f
}

// ComparePaths orders paths the way ripgrep's --sort path does: component
// by component, so "a/b" sorts before "a.go" (a directory's contents come
// right after the directory's name).
func ComparePaths(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		ca, cb := a[i], b[i]
		if ca == cb {
			continue
		}
		if ca == '/' {
			return -1
		}
		if cb == '/' {
			return 1
		}
		if ca < cb {
			return -1
		}
		return 1
	}
	return len(a) - len(b)
}

type grepWorker struct {
	opts    *GrepOptions
	root    string
	buf     []byte
	cur     *cursor
	dfa     *lineDFA
	out     []byte
	lines   int
	omitted int
	matches []block
	// nmatches counts individual matches in multiline mode.
	nmatches int
	tooLarge int64
	// budget is shared by the workers; held is this worker's share for
	// the file it is searching.
	budget *byteBudget
	held   int64
	col    *collector
}

// block is a run of matching lines: one line, or in multiline mode every
// line a match (or adjacent matches) spans. Offsets are into the buffer;
// end is the offset of the last line's terminator (or the buffer end).
type block struct {
	start, end int
	line       int // 1-based number of the first line
}

// file searches one file and records its result.
func (w *grepWorker) file(e Entry) error {
	if !e.Type.IsRegular() {
		return nil // a FIFO or device given as the root would block or never end
	}
	data, err := w.read(e.Path)
	// One huge file must not pin a huge buffer for the rest of the search.
	defer func() {
		if cap(w.buf) > maxKeptBuffer {
			w.buf = make([]byte, initialBuffer)
		}
		w.budget.release(w.held)
		w.held = 0
	}()
	if errors.Is(err, errTooLarge) {
		w.tooLarge++
		return nil
	}
	if err != nil {
		return nil // unreadable files are skipped, as ripgrep skips them
	}
	data = decodeBOM(data)
	explicit := e.Rel == "" && e.Depth == 0
	display := e.Path
	if w.opts.RelativePaths && !explicit {
		display = e.Rel
	}
	nul := bytes.IndexByte(data, 0)
	binaryQuit := false // stopped at a NUL after searching a prefix
	binaryConvert := false
	if nul >= 0 {
		switch {
		case explicit:
			// ripgrep searches explicit files whole, memory-mapped, and
			// calls them binary when the first buffer holds a NUL.
			binaryConvert = nul < binaryWindow
		case w.opts.Matcher.multiline:
			if nul < binaryWindow {
				return nil
			}
			data = data[:lineStart(data, nul)]
			binaryQuit = true
		default:
			data = data[:quitPrefix(data, nul)]
			binaryQuit = true
		}
	}
	w.matches = w.matches[:0]
	stopAtFirst := w.opts.Mode == FilesWithMatches || (binaryConvert && w.opts.Mode == Content)
	if binaryConvert {
		// In convert mode NUL bytes act as line terminators.
		conv := append([]byte(nil), data...)
		for i, c := range conv {
			if c == 0 {
				conv[i] = '\n'
			}
		}
		data = conv
	}
	w.search(data, stopAtFirst)
	if len(w.matches) == 0 {
		return nil
	}
	w.out, w.lines, w.omitted = w.out[:0], 0, 0
	switch {
	case w.opts.Mode == FilesWithMatches:
		w.emit(display, 0)
	case w.opts.Mode == Count:
		if binaryQuit {
			return nil // ripgrep squashes counts of binary files
		}
		count := len(w.matches)
		if w.opts.Matcher.multiline {
			count = w.nmatches // multiline counts matches, not lines
		}
		w.emit(display, count)
	case binaryConvert:
		w.out = fmt.Appendf(w.out, "%s: binary file matches (found \"\\0\" byte around offset %d)\n", display, nul)
		w.lines++
	default:
		w.content(display, data)
		if binaryQuit {
			w.out = fmt.Appendf(w.out, "%s: WARNING: stopped searching binary file after match (found \"\\0\" byte around offset %d)\n", display, nul)
			w.lines++
		}
	}
	w.col.add(FileResult{Path: display, Output: slices.Clone(w.out), Lines: w.lines + w.omitted, Omitted: w.omitted})
	return nil
}

// emit writes a files or count line.
func (w *grepWorker) emit(display string, count int) {
	w.out = append(w.out, display...)
	if w.opts.Mode == Count {
		w.out = append(w.out, ':')
		w.out = strconv.AppendInt(w.out, int64(count), 10)
	}
	w.out = append(w.out, '\n')
	w.lines++
}

// Worker read buffer sizes.
const (
	initialBuffer = 256 << 10
	maxKeptBuffer = 4 << 20
	// copiesPerByte is what a file's bytes may cost while it is searched:
	// the buffer, a NUL-converted copy of a binary file, or the UTF-16
	// decoding (uint16s plus the UTF-8 result).
	copiesPerByte = 3
)

// byteBudget is a counting semaphore of bytes shared by a search's workers.
type byteBudget struct {
	mu    sync.Mutex
	cond  *sync.Cond
	total int64
	free  int64
}

func newByteBudget(total int64) *byteBudget {
	b := &byteBudget{total: total, free: total}
	b.cond = sync.NewCond(&b.mu)
	return b
}

// acquire takes n bytes (at most the whole budget, so any file can go
// alone), waiting until they are free; it returns what it took.
func (b *byteBudget) acquire(n int64) int64 {
	if b.total <= 0 || n <= 0 {
		return 0
	}
	n = min(n, b.total)
	b.mu.Lock()
	for b.free < n {
		b.cond.Wait()
	}
	b.free -= n
	b.mu.Unlock()
	return n
}

func (b *byteBudget) release(n int64) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	b.free += n
	b.mu.Unlock()
	b.cond.Broadcast()
}

// read reads the whole file into the worker's reusable buffer.
func (w *grepWorker) read(path string) ([]byte, error) {
	f, err := openFile(path)
	if err != nil {
		return nil, err
	}
	defer f.close()
	limit := w.opts.MaxFileSize
	size := f.size()
	if limit > 0 && size > limit {
		return nil, errTooLarge // decided before reading a byte
	}
	if size > initialBuffer {
		w.held = w.budget.acquire(copiesPerByte * size)
		if int64(len(w.buf)) <= size {
			// Read in one go: room for the reported size and the EOF.
			w.buf = make([]byte, size+1)
		}
	}
	n := 0
	for {
		if limit > 0 && int64(n) > limit {
			return nil, errTooLarge
		}
		if n == len(w.buf) {
			grow := len(w.buf)
			if limit > 0 {
				// A file that grows or hides its size (procfs) is read
				// only to just past the limit.
				grow = int(min(int64(grow), limit+1-int64(n)+1))
			}
			w.buf = append(w.buf, make([]byte, grow)...)
		}
		m, err := f.read(w.buf[n:])
		n += m
		if errors.Is(err, io.EOF) || (m == 0 && err == nil) {
			return w.buf[:n], nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// decodeBOM strips a UTF-8 byte order mark and transcodes UTF-16 text
// marked by a BOM to UTF-8, as ripgrep does by default.
func decodeBOM(data []byte) []byte {
	switch {
	case bytes.HasPrefix(data, []byte{0xEF, 0xBB, 0xBF}):
		return data[3:]
	case len(data) >= 2 && (data[0] == 0xFF && data[1] == 0xFE || data[0] == 0xFE && data[1] == 0xFF):
		le := data[0] == 0xFF
		body := data[2:]
		u := make([]uint16, 0, len(body)/2)
		for i := 0; i+1 < len(body); i += 2 {
			if le {
				u = append(u, uint16(body[i])|uint16(body[i+1])<<8)
			} else {
				u = append(u, uint16(body[i])<<8|uint16(body[i+1]))
			}
		}
		out := make([]byte, 0, len(body))
		for _, r := range utf16.Decode(u) {
			out = utf8.AppendRune(out, r)
		}
		return out
	}
	return data
}

// quitPrefix returns how much of a file ripgrep searches before it stops
// at the NUL byte at nul: it reads through a 64 KiB line buffer (the first
// read is 3 bytes, taken to sniff a byte order mark), searches each
// buffer's complete lines, and abandons the buffer in which the NUL
// arrives. Only lines in earlier buffers are searched.
func quitPrefix(data []byte, nul int) int {
	capacity := binaryWindow
	bufStart, readEnd := 0, 0 // file offsets: unconsumed data, bytes read
	first := true
	for {
		lastTerm := -1
		for lastTerm < 0 {
			free := capacity - (readEnd - bufStart)
			if free <= 0 {
				capacity *= 2
				continue
			}
			n := free
			if first {
				n, first = min(3, free), false
			}
			n = min(n, len(data)-readEnd)
			if n <= 0 {
				return len(data)
			}
			start := readEnd
			readEnd += n
			if nul < readEnd {
				return bufStart
			}
			if i := bytes.LastIndexByte(data[start:readEnd], '\n'); i >= 0 {
				lastTerm = start + i + 1
			}
		}
		bufStart = lastTerm
	}
}

// lineStart returns the offset of the start of the line holding off.
func lineStart(data []byte, off int) int {
	return bytes.LastIndexByte(data[:off], '\n') + 1
}

// search fills w.matches with the matching blocks of data.
func (w *grepWorker) search(data []byte, stopAtFirst bool) {
	m := w.opts.Matcher
	if m.multiline {
		w.searchMultiline(data, stopAtFirst)
		return
	}
	needLines := w.opts.Mode == Content
	line, counted := 1, 0 // line number at offset counted
	add := func(ls, le int) {
		if needLines {
			line += bytes.Count(data[counted:ls], []byte{'\n'})
			counted = ls
		}
		w.matches = append(w.matches, block{start: ls, end: le, line: line})
	}
	if m.lits == nil {
		for pos := 0; pos < len(data); {
			ls, le, ok := w.dfa.nextMatch(data, pos)
			if !ok {
				return
			}
			add(ls, le)
			if stopAtFirst {
				return
			}
			pos = le + 1
		}
		return
	}
	c := w.cur
	c.reset()
	for pos := 0; pos < len(data); {
		hit := c.find(data, pos)
		if hit < 0 {
			return
		}
		ls := bytes.LastIndexByte(data[pos:hit], '\n') + 1 + pos
		le := bytes.IndexByte(data[hit:], '\n')
		if le < 0 {
			le = len(data)
		} else {
			le += hit
		}
		if m.exact || w.dfa.lineMatches(data[ls:le]) {
			add(ls, le)
			if stopAtFirst {
				return
			}
		}
		pos = le + 1
	}
}

// searchMultiline finds matches over the whole buffer and merges those that
// share a line into one block, as ripgrep's multiline searcher does.
func (w *grepWorker) searchMultiline(data []byte, stopAtFirst bool) {
	m := w.opts.Matcher
	if m.lits != nil {
		w.cur.reset()
		if w.cur.find(data, 0) < 0 {
			return
		}
	}
	line, counted := 1, 0
	var cur block
	have := false
	w.nmatches = 0
	for _, loc := range m.re.FindAllIndex(data, -1) {
		if loc[0] == len(data) && (len(data) == 0 || data[len(data)-1] == '\n') {
			break // ripgrep stops at the end of the buffer
		}
		w.nmatches++
		ls := lineStart(data, loc[0])
		var le int
		if loc[1] > ls && data[loc[1]-1] == '\n' {
			le = loc[1] - 1
		} else if i := bytes.IndexByte(data[loc[1]:], '\n'); i >= 0 {
			le = loc[1] + i
		} else {
			le = len(data)
		}
		if have && cur.end+1 > ls {
			cur.end = max(cur.end, le)
			continue
		}
		if have {
			w.matches = append(w.matches, cur)
			if stopAtFirst {
				return
			}
		}
		line += bytes.Count(data[counted:ls], []byte{'\n'})
		counted = ls
		cur, have = block{start: ls, end: le, line: line}, true
	}
	if have {
		w.matches = append(w.matches, cur)
	}
}

// content formats the matching blocks with context, exactly as ripgrep
// prints them without a tty: "path:N:text" for matches, "path-N-text" for
// context and "--" between groups that are not adjacent.
func (w *grepWorker) content(display string, data []byte) {
	before, after := w.opts.Before, w.opts.After
	lastLine, lastEnd := 0, -1 // last printed line number and its end offset
	for i, b := range w.matches {
		// After-context of the previous block, up to this block.
		if i > 0 && after > 0 {
			pos, n := lastEnd+1, lastLine+1
			for k := 0; k < after && pos < b.start && pos < len(data); k++ {
				le := lineEnd(data, pos)
				w.line(display, n, data[pos:le], '-')
				lastLine, lastEnd = n, le
				pos, n = le+1, n+1
			}
		}
		// Before-context.
		first := b.line - before
		if first <= lastLine {
			first = lastLine + 1
		}
		if first < 1 {
			first = 1
		}
		if (before > 0 || after > 0) && lastLine > 0 && first > lastLine+1 {
			w.sep()
		}
		start := b.start
		for k := b.line - first; k > 0; k-- {
			start = lineStart(data, start-1)
		}
		n := first
		for pos := start; pos < b.start; n++ {
			le := lineEnd(data, pos)
			w.line(display, n, data[pos:le], '-')
			pos = le + 1
		}
		// The block itself.
		for pos := b.start; ; n++ {
			le := lineEnd(data, pos)
			w.line(display, n, data[pos:le], ':')
			lastLine, lastEnd = n, le
			if le >= b.end {
				break
			}
			pos = le + 1
		}
	}
	if after > 0 {
		pos, n := lastEnd+1, lastLine+1
		for k := 0; k < after && pos < len(data); k++ {
			le := lineEnd(data, pos)
			w.line(display, n, data[pos:le], '-')
			pos, n = le+1, n+1
		}
	}
}

func lineEnd(data []byte, pos int) int {
	if i := bytes.IndexByte(data[pos:], '\n'); i >= 0 {
		return pos + i
	}
	return len(data)
}

func (w *grepWorker) sep() {
	if w.full() {
		w.omitted++
		return
	}
	w.out = append(w.out, "--\n"...)
	w.lines++
}

func (w *grepWorker) full() bool {
	return w.opts.MaxFileOutput > 0 && len(w.out) >= w.opts.MaxFileOutput
}

func (w *grepWorker) line(display string, n int, text []byte, sep byte) {
	if w.full() {
		w.omitted++
		return
	}
	w.out = append(w.out, display...)
	w.out = append(w.out, sep)
	if w.opts.LineNumbers {
		w.out = strconv.AppendInt(w.out, int64(n), 10)
		w.out = append(w.out, sep)
	}
	w.out = append(w.out, text...)
	w.out = append(w.out, '\n')
	w.lines++
}
