package term

import (
	"io"
	"os"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/odin-code/odin/internal/termsafe"
	"github.com/odin-code/odin/messages"
)

// Color says how much styling output may carry.
type Color int

// Color levels.
const (
	// ColorNone writes no escape sequence at all: line mode, pipes.
	ColorNone Color = iota
	// ColorMono keeps bold, dim, italic and reverse but no colour: NO_COLOR
	// on a terminal (the convention forbids colour, not emphasis).
	ColorMono
	// ColorFull uses 256 colours.
	ColorFull
)

// DetectColor picks the level for a terminal writer: NO_COLOR (set to any
// value, per no-color.org) gives ColorMono, TERM=dumb gives ColorNone.
func DetectColor(lookupEnv func(string) (string, bool)) Color {
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	if t, _ := lookupEnv("TERM"); t == "dumb" {
		return ColorNone
	}
	if _, ok := lookupEnv("NO_COLOR"); ok {
		return ColorMono
	}
	return ColorFull
}

// Theme holds the styles of everything the REPL prints. A Theme with
// ColorNone renders every string unchanged.
type Theme struct {
	level Color
	r     *lipgloss.Renderer

	Bold, Dim, Italic, Underline, Strike lipgloss.Style
	Accent, OK, Warn, Err, Gate          lipgloss.Style
	H1, H2, H3                           lipgloss.Style
	Code, CodeBlock, Quote, Link         lipgloss.Style
	DiffAdd, DiffDel, DiffHunk, DiffFile lipgloss.Style
	User, Prompt, Cursor                 lipgloss.Style
	modes                                map[messages.Mode]lipgloss.Style
	// agents are the styles of agents that declare a color.
	agents map[string]lipgloss.Style
}

// NewTheme returns the theme for output w at the given level.
func NewTheme(w io.Writer, level Color) *Theme {
	r := lipgloss.NewRenderer(w)
	r.SetHasDarkBackground(true) // never query the terminal: it would race the input reader
	// Mono keeps the attributes, so the profile stays ANSI256 and the
	// colours are simply not set.
	r.SetColorProfile(termenv.ANSI256)
	s := r.NewStyle
	c := func(s string) lipgloss.TerminalColor {
		if level != ColorFull {
			return lipgloss.NoColor{}
		}
		return lipgloss.Color(s)
	}
	t := &Theme{level: level, r: r,
		Bold: s().Bold(true), Dim: s().Faint(true), Italic: s().Italic(true),
		Underline: s().Underline(true), Strike: s().Strikethrough(true),
		Accent: s().Foreground(c("39")), OK: s().Foreground(c("42")), Warn: s().Foreground(c("214")),
		Err: s().Foreground(c("203")), Gate: s().Foreground(c("177")),
		H1: s().Bold(true).Underline(true).Foreground(c("39")), H2: s().Bold(true).Foreground(c("39")), H3: s().Bold(true),
		Code: s().Foreground(c("215")), CodeBlock: s().Foreground(c("252")), Quote: s().Italic(true).Faint(true),
		Link:    s().Underline(true).Foreground(c("75")),
		DiffAdd: s().Foreground(c("42")), DiffDel: s().Foreground(c("203")), DiffHunk: s().Foreground(c("38")),
		DiffFile: s().Bold(true),
		User:     s().Bold(true), Prompt: s().Bold(true), Cursor: s().Reverse(true),
		modes: map[messages.Mode]lipgloss.Style{
			messages.ModeAsk:  s().Bold(true).Foreground(c("75")),
			messages.ModePlan: s().Bold(true).Foreground(c("177")),
			messages.ModeEdit: s().Bold(true).Foreground(c("42")),
		},
	}
	return t
}

// Level is the theme's colour level.
func (t *Theme) Level() Color { return t.level }

// Paint renders s in style st, or returns s unchanged at ColorNone.
func (t *Theme) Paint(st lipgloss.Style, s string) string {
	if t.level == ColorNone || s == "" {
		return s
	}
	return st.Render(s)
}

// agentColors maps the colour names an agent definition may use
// (config.AgentColors) to the terminal's 256-colour palette.
var agentColors = map[string]string{
	"black": "240", "red": "203", "green": "42", "yellow": "220", "blue": "75", "magenta": "170",
	"cyan": "51", "white": "255", "orange": "208", "purple": "135", "pink": "211", "gray": "245",
}

// SetAgentColors gives agents their declared colours (a name of
// config.AgentColors or #rrggbb); unknown names are left in bold.
func (t *Theme) SetAgentColors(colors map[string]string) {
	t.agents = map[string]lipgloss.Style{}
	for name, c := range colors {
		code, ok := agentColors[strings.ToLower(c)]
		if !ok && len(c) == 7 && c[0] == '#' {
			code, ok = c, true
		}
		if !ok || t.level != ColorFull {
			continue
		}
		t.agents[name] = t.r.NewStyle().Bold(true).Foreground(lipgloss.Color(code))
	}
}

// Agent renders an agent's name, sanitised, in bold and its colour.
func (t *Theme) Agent(name string) string {
	st, ok := t.agents[name]
	if !ok {
		st = t.Bold
	}
	return t.Paint(st, termsafe.Line(name))
}

// Mode renders a mode name in its colour.
func (t *Theme) Mode(m messages.Mode) string {
	return t.Paint(t.modes[m], string(m))
}

// NewStyle returns an empty style bound to the theme's renderer.
func (t *Theme) NewStyle() lipgloss.Style { return t.r.NewStyle() }
