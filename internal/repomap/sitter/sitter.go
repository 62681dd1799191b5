// Package sitter extracts definitions and references from Python,
// JavaScript, TypeScript, Rust and Java source with tree-sitter. It is
// linked only into odin-sitter, the repo map's parser process: tree-sitter
// is C, and linking C into odin would force the external linker, which
// costs odin some 25 MB of resident pages at every start, and would run a
// C parser over untrusted files inside Odin's own process.
package sitter

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"unsafe"

	sitter "github.com/tree-sitter/go-tree-sitter"
	java "github.com/tree-sitter/tree-sitter-java/bindings/go"
	javascript "github.com/tree-sitter/tree-sitter-javascript/bindings/go"
	python "github.com/tree-sitter/tree-sitter-python/bindings/go"
	rust "github.com/tree-sitter/tree-sitter-rust/bindings/go"
	typescript "github.com/tree-sitter/tree-sitter-typescript/bindings/go"
)

// grammar describes how to map one tree-sitter language. defs is a query
// whose patterns capture a definition as @def.KIND and its name as @name;
// refs lists the node kinds whose text is a use of a name; containers maps
// a node kind that encloses definitions (a class, an impl block) to the
// field holding its name, so a function inside one is a method of it.
type grammar struct {
	language   func() unsafe.Pointer
	defs       string
	refs       []string
	containers map[string]string
}

const jsDefs = `
(function_declaration name: (identifier) @name) @def.function
(generator_function_declaration name: (identifier) @name) @def.function
(method_definition name: [(property_identifier) (private_property_identifier)] @name) @def.method
(variable_declarator name: (identifier) @name value: [(arrow_function) (function_expression)]) @def.function
`

var grammars = map[string]grammar{
	"python": {
		language: python.Language,
		defs: `
(class_definition name: (identifier) @name) @def.class
(function_definition name: (identifier) @name) @def.function
`,
		refs:       []string{"identifier"},
		containers: map[string]string{"class_definition": "name"},
	},
	"javascript": {
		language:   javascript.Language,
		defs:       jsDefs + `(class_declaration name: (identifier) @name) @def.class`,
		refs:       []string{"identifier", "property_identifier", "shorthand_property_identifier"},
		containers: map[string]string{"class_declaration": "name", "class": "name"},
	},
	"typescript": {language: typescript.LanguageTypescript, defs: tsDefs, refs: tsRefs, containers: tsContainers},
	"tsx":        {language: typescript.LanguageTSX, defs: tsDefs, refs: tsRefs, containers: tsContainers},
	"rust": {
		language: rust.Language,
		defs: `
(function_item name: (identifier) @name) @def.function
(function_signature_item name: (identifier) @name) @def.function
(struct_item name: (type_identifier) @name) @def.struct
(enum_item name: (type_identifier) @name) @def.enum
(union_item name: (type_identifier) @name) @def.union
(trait_item name: (type_identifier) @name) @def.trait
(type_item name: (type_identifier) @name) @def.type
(mod_item name: (identifier) @name) @def.module
(macro_definition name: (identifier) @name) @def.macro
(const_item name: (identifier) @name) @def.const
(static_item name: (identifier) @name) @def.static
`,
		refs:       []string{"identifier", "type_identifier", "field_identifier"},
		containers: map[string]string{"impl_item": "type", "trait_item": "name"},
	},
	"java": {
		language: java.Language,
		defs: `
(class_declaration name: (identifier) @name) @def.class
(interface_declaration name: (identifier) @name) @def.interface
(enum_declaration name: (identifier) @name) @def.enum
(record_declaration name: (identifier) @name) @def.record
(annotation_type_declaration name: (identifier) @name) @def.annotation
(method_declaration name: (identifier) @name) @def.method
(constructor_declaration name: (identifier) @name) @def.constructor
`,
		refs: []string{"identifier", "type_identifier"},
		containers: map[string]string{"class_declaration": "name", "interface_declaration": "name", "enum_declaration": "name",
			"record_declaration": "name"},
	},
}

const tsDefs = jsDefs + `
(class_declaration name: (type_identifier) @name) @def.class
(abstract_class_declaration name: (type_identifier) @name) @def.class
(interface_declaration name: (type_identifier) @name) @def.interface
(type_alias_declaration name: (type_identifier) @name) @def.type
(enum_declaration name: (identifier) @name) @def.enum
(function_signature name: (identifier) @name) @def.function
(method_signature name: [(property_identifier) (private_property_identifier)] @name) @def.method
(abstract_method_signature name: [(property_identifier) (private_property_identifier)] @name) @def.method
`

var (
	tsRefs       = []string{"identifier", "property_identifier", "shorthand_property_identifier", "type_identifier"}
	tsContainers = map[string]string{"class_declaration": "name", "abstract_class_declaration": "name", "interface_declaration": "name", "class": "name"}
)

// compiled is a grammar with its queries, built on first use. Queries are
// immutable once compiled and shared by all parses; each parse has its own
// parser and cursors.
type compiled struct {
	once sync.Once
	err  error
	lang *sitter.Language
	defs *sitter.Query
	refs *sitter.Query
	// kinds[i] is the KIND of capture i when it is a @def.KIND capture.
	kinds   []string
	nameIdx uint32
}

// Parser holds the compiled grammars. Safe for concurrent use.
type Parser struct {
	mu sync.Mutex
	c  map[string]*compiled
}

// New returns a Parser; grammars compile on first use.
func New() *Parser { return &Parser{c: map[string]*compiled{}} }

// Languages lists the languages with a grammar here, sorted.
func Languages() []string {
	out := make([]string, 0, len(grammars))
	for l := range grammars {
		out = append(out, l)
	}
	sort.Strings(out)
	return out
}

// Supports reports whether lang has a grammar here.
func Supports(lang string) bool {
	_, ok := grammars[lang]
	return ok
}

// Symbol is a definition, as the repo map keeps it.
type Symbol struct {
	Name   string `json:"name"`
	Kind   string `json:"kind"`
	Parent string `json:"parent,omitempty"`
	Line   int    `json:"line"`
	Sig    string `json:"sig,omitempty"`
}

func (l *Parser) get(lang string) (*compiled, error) {
	l.mu.Lock()
	c, ok := l.c[lang]
	if !ok {
		c = &compiled{}
		l.c[lang] = c
	}
	l.mu.Unlock()
	c.once.Do(func() { c.err = c.build(grammars[lang]) })
	return c, c.err
}

func (c *compiled) build(g grammar) error {
	c.lang = sitter.NewLanguage(g.language())
	q, qerr := sitter.NewQuery(c.lang, g.defs)
	if qerr != nil {
		return fmt.Errorf("repomap: definitions query: %s", qerr.Error())
	}
	c.defs = q
	alts := make([]string, len(g.refs))
	for i, k := range g.refs {
		alts[i] = "(" + k + ")"
	}
	r, qerr := sitter.NewQuery(c.lang, "["+strings.Join(alts, " ")+"] @ref")
	if qerr != nil {
		q.Close()
		return fmt.Errorf("repomap: references query: %s", qerr.Error())
	}
	c.refs = r
	names := q.CaptureNames()
	c.kinds = make([]string, len(names))
	for i, n := range names {
		if k, ok := strings.CutPrefix(n, "def."); ok {
			c.kinds[i] = k
		}
		if n == "name" {
			c.nameIdx = uint32(i)
		}
	}
	return nil
}

// Close frees the compiled grammars.
func (l *Parser) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.c {
		if c.defs != nil {
			c.defs.Close()
		}
		if c.refs != nil {
			c.refs.Close()
		}
	}
	l.c = map[string]*compiled{}
}

// parse extracts the definitions and name uses of one file.
// Parse returns the definitions of src, a file in lang, and how often
// each name is used in it.
func (l *Parser) Parse(lang string, src []byte) ([]Symbol, map[string]int, error) {
	if !Supports(lang) {
		return nil, nil, fmt.Errorf("repomap: no grammar for %s", lang)
	}
	c, err := l.get(lang)
	if err != nil {
		return nil, nil, err
	}
	p := sitter.NewParser()
	defer p.Close()
	if err := p.SetLanguage(c.lang); err != nil {
		return nil, nil, fmt.Errorf("repomap: %s: %w", lang, err)
	}
	tree := p.Parse(src, nil)
	if tree == nil {
		return nil, nil, fmt.Errorf("repomap: %s: the parser gave up", lang)
	}
	defer tree.Close()
	root := tree.RootNode()
	g := grammars[lang]

	var defs []Symbol
	nameAt := map[uint]bool{}
	qc := sitter.NewQueryCursor()
	defer qc.Close()
	matches := qc.Matches(c.defs, root, src)
	for m := matches.Next(); m != nil; m = matches.Next() {
		var def, name *sitter.Node
		kind := ""
		for i := range m.Captures {
			cp := &m.Captures[i]
			if cp.Index == c.nameIdx {
				n := cp.Node
				name = &n
			} else if k := c.kinds[cp.Index]; k != "" {
				n := cp.Node
				def, kind = &n, k
			}
		}
		if def == nil || name == nil {
			continue
		}
		nameAt[name.StartByte()] = true
		s := Symbol{Name: name.Utf8Text(src), Kind: kind, Line: int(def.StartPosition().Row) + 1, Sig: sitterSig(def, src)}
		if parent := container(def, g.containers, src); parent != "" {
			s.Parent = parent
			if kind == "function" {
				s.Kind = "method"
			}
		}
		defs = append(defs, s)
	}

	refs := map[string]int{}
	rc := sitter.NewQueryCursor()
	defer rc.Close()
	caps := rc.Captures(c.refs, root, src)
	for m, idx := caps.Next(); m != nil; m, idx = caps.Next() {
		n := m.Captures[idx].Node
		if nameAt[n.StartByte()] {
			continue
		}
		refs[n.Utf8Text(src)]++
	}
	return defs, refs, nil
}

// container is the name of the class, trait or impl block enclosing def,
// if any: the nearest enclosing container kind, stopping at a function (a
// function nested in a function is not a method).
func container(def *sitter.Node, containers map[string]string, src []byte) string {
	for n := def.Parent(); n != nil; n = n.Parent() {
		k := n.Kind()
		if field, ok := containers[k]; ok {
			if nn := n.ChildByFieldName(field); nn != nil {
				return collapse(nn.Utf8Text(src))
			}
			return ""
		}
		if strings.Contains(k, "function") || strings.Contains(k, "method") {
			return ""
		}
	}
	return ""
}

// sitterSig is a definition's text up to its body: the signature, without
// the block.
func sitterSig(def *sitter.Node, src []byte) string {
	start, end := def.StartByte(), def.EndByte()
	body := def.ChildByFieldName("body")
	if body == nil && def.Kind() == "variable_declarator" {
		if v := def.ChildByFieldName("value"); v != nil {
			body = v.ChildByFieldName("body")
		}
	}
	if body != nil && body.StartByte() > start {
		end = body.StartByte()
	}
	text := string(src[start:end])
	if body == nil {
		// A declaration without a body (a type alias, a constant): its
		// first line says enough.
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			text = text[:i]
		}
	}
	text = strings.TrimRight(strings.TrimSpace(text), "{:")
	return collapse(text)
}

// collapse puts s on one line; the repo map cuts it to its width.
func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }
