package prompts

import (
	"fmt"
	"strings"
	"text/template/parse"
)

// The templates are parsed with text/template's own parser and executed
// here, not by text/template: executing a template looks fields and
// methods up by name at run time (reflect's MethodByName), and a binary
// that can do that makes Go's linker keep every exported method of every
// type it contains. In Odin that kept 20 MB of unused client code (most of
// openai-go's API), 9 MB of resident memory and 2 ms of every start. The
// executor below knows the few actions the templates use (fields of Data
// and Agent, variables, if/else, range, template, eq and trim); anything
// else is an error, and a test renders every template with both this and
// text/template and requires the same text.

// funcs names the functions templates may call, for the parser.
var funcs = map[string]any{"trim": true, "eq": true}

// set is the parsed templates by name, the define blocks included.
type set map[string]*parse.Tree

func parseSet(files map[string]string) (set, error) {
	s := set{}
	for name, text := range files {
		trees, err := parse.Parse(name, text, "{{", "}}", funcs)
		if err != nil {
			return nil, err
		}
		for n, t := range trees {
			if _, dup := s[n]; dup && n != name {
				return nil, fmt.Errorf("template %q defined twice", n)
			}
			s[n] = t
		}
	}
	return s, nil
}

// execute renders the template name with dot.
func (s set) execute(name string, dot any) (string, error) {
	t, ok := s[name]
	if !ok || t.Root == nil {
		return "", fmt.Errorf("no template %q", name)
	}
	e := &executor{set: s, vars: map[string]any{"$": dot}}
	if err := e.walk(t.Root, dot); err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	return e.b.String(), nil
}

type executor struct {
	set   set
	b     strings.Builder
	vars  map[string]any
	depth int
}

func (e *executor) walk(n parse.Node, dot any) error {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return nil
		}
		for _, c := range n.Nodes {
			if err := e.walk(c, dot); err != nil {
				return err
			}
		}
	case *parse.TextNode:
		e.b.Write(n.Text)
	case *parse.ActionNode:
		v, err := e.pipe(n.Pipe, dot)
		if err != nil {
			return err
		}
		if len(n.Pipe.Decl) == 0 {
			fmt.Fprint(&e.b, v)
		}
	case *parse.IfNode:
		v, err := e.pipe(n.Pipe, dot)
		if err != nil {
			return err
		}
		if truth(v) {
			return e.walk(n.List, dot)
		}
		if n.ElseList != nil {
			return e.walk(n.ElseList, dot)
		}
	case *parse.RangeNode:
		v, err := e.pipe(n.Pipe, dot)
		if err != nil {
			return err
		}
		agents, ok := v.([]Agent)
		if !ok {
			return fmt.Errorf("range over %T: only agent lists are supported", v)
		}
		if len(agents) == 0 {
			if n.ElseList != nil {
				return e.walk(n.ElseList, dot)
			}
			return nil
		}
		for i, a := range agents {
			switch len(n.Pipe.Decl) {
			case 1:
				e.vars[n.Pipe.Decl[0].Ident[0]] = a
			case 2:
				e.vars[n.Pipe.Decl[0].Ident[0]] = i
				e.vars[n.Pipe.Decl[1].Ident[0]] = a
			}
			if err := e.walk(n.List, a); err != nil {
				return err
			}
		}
	case *parse.TemplateNode:
		t, ok := e.set[n.Name]
		if !ok {
			return fmt.Errorf("no template %q", n.Name)
		}
		arg := any(nil)
		if n.Pipe != nil {
			var err error
			if arg, err = e.pipe(n.Pipe, dot); err != nil {
				return err
			}
		}
		if e.depth++; e.depth > 10 {
			return fmt.Errorf("template %q nests too deep", n.Name)
		}
		defer func() { e.depth-- }()
		return e.walk(t.Root, arg)
	default:
		return fmt.Errorf("byte %d: unsupported action %q", n.Position(), n)
	}
	return nil
}

// pipe evaluates a pipeline of one command, declaring its variables.
func (e *executor) pipe(p *parse.PipeNode, dot any) (any, error) {
	if len(p.Cmds) != 1 {
		return nil, fmt.Errorf("byte %d: pipelines of several commands are not supported", p.Position())
	}
	v, err := e.command(p.Cmds[0], dot)
	if err != nil {
		return nil, err
	}
	if len(p.Decl) == 1 && !p.IsAssign {
		e.vars[p.Decl[0].Ident[0]] = v
	}
	return v, nil
}

func (e *executor) command(c *parse.CommandNode, dot any) (any, error) {
	if id, ok := c.Args[0].(*parse.IdentifierNode); ok {
		args := make([]any, 0, len(c.Args)-1)
		for _, a := range c.Args[1:] {
			v, err := e.arg(a, dot)
			if err != nil {
				return nil, err
			}
			args = append(args, v)
		}
		switch {
		case id.Ident == "trim" && len(args) == 1:
			s, ok := args[0].(string)
			if !ok {
				return nil, fmt.Errorf("byte %d: trim of %T", c.Position(), args[0])
			}
			return strings.TrimSpace(s), nil
		case id.Ident == "eq" && len(args) == 2:
			return args[0] == args[1], nil
		}
		return nil, fmt.Errorf("byte %d: unsupported call %s", c.Position(), c)
	}
	if len(c.Args) != 1 {
		return nil, fmt.Errorf("byte %d: unsupported command %s", c.Position(), c)
	}
	return e.arg(c.Args[0], dot)
}

func (e *executor) arg(n parse.Node, dot any) (any, error) {
	switch n := n.(type) {
	case *parse.DotNode:
		return dot, nil
	case *parse.StringNode:
		return n.Text, nil
	case *parse.FieldNode:
		return fields(dot, n.Ident)
	case *parse.VariableNode:
		v, ok := e.vars[n.Ident[0]]
		if !ok {
			return nil, fmt.Errorf("byte %d: undefined variable %s", n.Position(), n.Ident[0])
		}
		return fields(v, n.Ident[1:])
	}
	return nil, fmt.Errorf("byte %d: unsupported argument %s", n.Position(), n)
}

// fields follows a chain of field names from v.
func fields(v any, names []string) (any, error) {
	for _, name := range names {
		var ok bool
		if v, ok = field(v, name); !ok {
			return nil, fmt.Errorf("no field %s in %T", name, v)
		}
	}
	return v, nil
}

// field is v.name for the types templates see. A field added to Data or
// Agent is added here too (the parity test renders every field).
func field(v any, name string) (any, bool) {
	switch v := v.(type) {
	case Data:
		switch name {
		case "Root":
			return v.Root, true
		case "Date":
			return v.Date, true
		case "OS":
			return v.OS, true
		case "Mode":
			return v.Mode, true
		case "Instructions":
			return v.Instructions, true
		case "Agents":
			return v.Agents, true
		case "Custom":
			return v.Custom, true
		case "AgentName":
			return v.AgentName, true
		case "WriteScope":
			return v.WriteScope, true
		case "WebSearch":
			return v.WebSearch, true
		}
	case Agent:
		switch name {
		case "Name":
			return v.Name, true
		case "ReadOnly":
			return v.ReadOnly, true
		}
	}
	return nil, false
}

// truth is text/template's truth for the values templates see.
func truth(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case bool:
		return v
	case string:
		return v != ""
	case int:
		return v != 0
	case []Agent:
		return len(v) > 0
	}
	return true
}
