package elicit

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/mail"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Form is a form-mode elicitation's requested schema as a front end asks
// it: a flat list of fields (MCP allows only top-level primitive
// properties), in the server's order where the schema keeps it, else by
// name.
type Form struct {
	Fields []Field `json:"fields"`
}

// Field is one property of a requested schema.
type Field struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// Type is string, number, integer, boolean or array (a multi-select
	// of Choices).
	Type     string `json:"type"`
	Format   string `json:"format,omitempty"` // email, uri, date, date-time
	Required bool   `json:"required,omitempty"`
	// Default is the schema's default, applied when the user gives none.
	Default any `json:"default,omitempty"`
	// Choices are the allowed values of an enum (single or multi select).
	Choices []Choice `json:"choices,omitempty"`
	Minimum *float64 `json:"minimum,omitempty"`
	Maximum *float64 `json:"maximum,omitempty"`
	// MinLength and MaxLength bound a string; MinItems and MaxItems a
	// multi-select.
	MinLength *int `json:"min_length,omitempty"`
	MaxLength *int `json:"max_length,omitempty"`
	MinItems  *int `json:"min_items,omitempty"`
	MaxItems  *int `json:"max_items,omitempty"`
}

// Choice is one allowed value of an enum field and its label.
type Choice struct {
	Value string `json:"value"`
	Label string `json:"label,omitempty"`
}

// Label is the field's name for a person: its title, else its name.
func (f Field) Label() string {
	if f.Title != "" {
		return f.Title
	}
	return f.Name
}

// rawProp is the subset of a property's JSON schema MCP allows.
type rawProp struct {
	Type        any        `json:"type"`
	Title       string     `json:"title"`
	Description string     `json:"description"`
	Format      string     `json:"format"`
	Default     any        `json:"default"`
	Enum        []any      `json:"enum"`
	EnumNames   []string   `json:"enumNames"`
	OneOf       []rawConst `json:"oneOf"`
	AnyOf       []rawConst `json:"anyOf"`
	Items       *rawProp   `json:"items"`
	Minimum     *float64   `json:"minimum"`
	Maximum     *float64   `json:"maximum"`
	MinLength   *int       `json:"minLength"`
	MaxLength   *int       `json:"maxLength"`
	MinItems    *int       `json:"minItems"`
	MaxItems    *int       `json:"maxItems"`
}

type rawConst struct {
	Const any    `json:"const"`
	Title string `json:"title"`
}

// ParseForm reads a requested schema (any JSON-marshalable value: the
// SDK hands it over as a map) into a Form. A schema MCP does not allow
// (nested objects, a property without a known type) is an error: the
// request is then declined, as no honest form can be shown.
func ParseForm(schema any) (Form, error) {
	var raw []byte
	switch s := schema.(type) {
	case nil:
		return Form{}, nil
	case json.RawMessage:
		raw = s
	case []byte:
		raw = s
	default:
		b, err := json.Marshal(schema)
		if err != nil {
			return Form{}, fmt.Errorf("requested schema: %w", err)
		}
		raw = b
	}
	var top struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if err := json.Unmarshal(raw, &top); err != nil {
		return Form{}, fmt.Errorf("requested schema: %w", err)
	}
	if top.Type != "" && top.Type != "object" {
		return Form{}, fmt.Errorf("requested schema: type %q, want object", top.Type)
	}
	names := propertyOrder(raw, top.Properties)
	var f Form
	for _, name := range names {
		var p rawProp
		if err := json.Unmarshal(top.Properties[name], &p); err != nil {
			return Form{}, fmt.Errorf("requested schema: property %s: %w", name, err)
		}
		fld, err := fieldOf(name, p)
		if err != nil {
			return Form{}, fmt.Errorf("requested schema: property %s: %w", name, err)
		}
		fld.Required = slices.Contains(top.Required, name)
		f.Fields = append(f.Fields, fld)
	}
	return f, nil
}

// propertyOrder lists the properties in the order the server wrote them
// (a person fills a form top to bottom as its author meant), falling
// back to sorted names.
func propertyOrder(raw []byte, props map[string]json.RawMessage) []string {
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	sort.Strings(names)
	// Find each name's offset inside the properties object.
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil {
		return names
	}
	obj := top["properties"]
	dec := json.NewDecoder(strings.NewReader(string(obj)))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return names
	}
	var ordered []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return names
		}
		key, ok := tok.(string)
		if !ok {
			return names
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return names
		}
		if !slices.Contains(ordered, key) {
			ordered = append(ordered, key)
		}
	}
	if len(ordered) != len(names) {
		return names
	}
	return ordered
}

func fieldOf(name string, p rawProp) (Field, error) {
	typ, _ := p.Type.(string)
	f := Field{Name: name, Title: p.Title, Description: p.Description, Type: typ, Format: p.Format,
		Default: p.Default, Minimum: p.Minimum, Maximum: p.Maximum, MinLength: p.MinLength, MaxLength: p.MaxLength,
		MinItems: p.MinItems, MaxItems: p.MaxItems}
	switch typ {
	case "string":
		f.Choices = choicesOf(p)
	case "number", "integer", "boolean":
	case "array":
		if p.Items == nil {
			return Field{}, errors.New("an array without items")
		}
		f.Choices = choicesOf(*p.Items)
		if len(f.Choices) == 0 {
			return Field{}, errors.New("an array whose items are not an enum")
		}
	case "":
		return Field{}, errors.New("no type")
	default:
		return Field{}, fmt.Errorf("type %q is not a form field", typ)
	}
	if f.Default != nil {
		if _, err := f.check(f.Default); err != nil {
			// A default the schema itself refuses is not offered.
			f.Default = nil
		}
	}
	return f, nil
}

func choicesOf(p rawProp) []Choice {
	var out []Choice
	for i, v := range p.Enum {
		c := Choice{Value: fmt.Sprint(v)}
		if i < len(p.EnumNames) {
			c.Label = p.EnumNames[i]
		}
		out = append(out, c)
	}
	for _, o := range append(slices.Clone(p.OneOf), p.AnyOf...) {
		if o.Const != nil {
			out = append(out, Choice{Value: fmt.Sprint(o.Const), Label: o.Title})
		}
	}
	return out
}

// ErrFieldRequired is returned by Parse for a required field left empty
// with no default.
var ErrFieldRequired = errors.New("a value is required")

// Parse turns what the user typed into the field's value. Empty input
// takes the default; (nil, nil) means the optional field is left out. A
// multi-select takes comma-separated values; a choice may be given by its
// value, its label or its number in the list (1-based); a boolean by
// y/yes/true/1 or n/no/false/0.
func (f Field) Parse(input string) (any, error) {
	in := strings.TrimSpace(input)
	if in == "" {
		if f.Default != nil {
			return f.check(f.Default)
		}
		if f.Required {
			return nil, ErrFieldRequired
		}
		return nil, nil
	}
	switch f.Type {
	case "boolean":
		switch strings.ToLower(in) {
		case "y", "yes", "true", "1":
			return true, nil
		case "n", "no", "false", "0":
			return false, nil
		}
		return nil, errors.New("answer yes or no")
	case "number", "integer":
		n, err := strconv.ParseFloat(in, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", in)
		}
		return f.check(n)
	case "array":
		var vals []any
		for _, part := range strings.Split(in, ",") {
			if part = strings.TrimSpace(part); part == "" {
				continue
			}
			v, err := f.choose(part)
			if err != nil {
				return nil, err
			}
			vals = append(vals, v)
		}
		return f.check(vals)
	}
	if len(f.Choices) > 0 {
		v, err := f.choose(in)
		if err != nil {
			return nil, err
		}
		return f.check(v)
	}
	return f.check(in)
}

// choose finds the choice the user meant.
func (f Field) choose(in string) (string, error) {
	for _, c := range f.Choices {
		if c.Value == in {
			return c.Value, nil
		}
	}
	for _, c := range f.Choices {
		if c.Label != "" && strings.EqualFold(c.Label, in) {
			return c.Value, nil
		}
	}
	if n, err := strconv.Atoi(in); err == nil && n >= 1 && n <= len(f.Choices) {
		return f.Choices[n-1].Value, nil
	}
	vals := make([]string, len(f.Choices))
	for i, c := range f.Choices {
		vals[i] = c.Value
	}
	return "", fmt.Errorf("%q is not one of %s", in, strings.Join(vals, ", "))
}

// check validates v (a decoded JSON value) against the field and returns
// it in the JSON type the schema asks for.
func (f Field) check(v any) (any, error) {
	switch f.Type {
	case "boolean":
		b, ok := v.(bool)
		if !ok {
			return nil, errors.New("want true or false")
		}
		return b, nil
	case "number", "integer":
		n, ok := toFloat(v)
		if !ok {
			return nil, errors.New("want a number")
		}
		if f.Type == "integer" && n != math.Trunc(n) {
			return nil, fmt.Errorf("%s is not a whole number", strconv.FormatFloat(n, 'f', -1, 64))
		}
		if f.Minimum != nil && n < *f.Minimum {
			return nil, fmt.Errorf("at least %s", strconv.FormatFloat(*f.Minimum, 'f', -1, 64))
		}
		if f.Maximum != nil && n > *f.Maximum {
			return nil, fmt.Errorf("at most %s", strconv.FormatFloat(*f.Maximum, 'f', -1, 64))
		}
		if f.Type == "integer" {
			return int64(n), nil
		}
		return n, nil
	case "array":
		list, ok := v.([]any)
		if !ok {
			if ss, ok2 := v.([]string); ok2 {
				for _, s := range ss {
					list = append(list, s)
				}
			} else {
				return nil, errors.New("want a list of choices")
			}
		}
		out := make([]any, 0, len(list))
		for _, it := range list {
			s, ok := it.(string)
			if !ok || !slices.ContainsFunc(f.Choices, func(c Choice) bool { return c.Value == s }) {
				return nil, fmt.Errorf("%v is not one of the choices", it)
			}
			out = append(out, s)
		}
		if f.MinItems != nil && len(out) < *f.MinItems {
			return nil, fmt.Errorf("choose at least %d", *f.MinItems)
		}
		if f.MaxItems != nil && len(out) > *f.MaxItems {
			return nil, fmt.Errorf("choose at most %d", *f.MaxItems)
		}
		return out, nil
	}
	s, ok := v.(string)
	if !ok {
		return nil, errors.New("want text")
	}
	if len(f.Choices) > 0 && !slices.ContainsFunc(f.Choices, func(c Choice) bool { return c.Value == s }) {
		return nil, fmt.Errorf("%q is not one of the choices", s)
	}
	n := len([]rune(s))
	if f.MinLength != nil && n < *f.MinLength {
		return nil, fmt.Errorf("at least %d characters", *f.MinLength)
	}
	if f.MaxLength != nil && n > *f.MaxLength {
		return nil, fmt.Errorf("at most %d characters", *f.MaxLength)
	}
	switch f.Format {
	case "email":
		if a, err := mail.ParseAddress(s); err != nil || a.Address != s {
			return nil, fmt.Errorf("%q is not an email address", s)
		}
	case "uri":
		if u, err := url.Parse(s); err != nil || u.Scheme == "" {
			return nil, fmt.Errorf("%q is not a URI", s)
		}
	case "date":
		if _, err := time.Parse(time.DateOnly, s); err != nil {
			return nil, fmt.Errorf("%q is not a date (YYYY-MM-DD)", s)
		}
	case "date-time":
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			return nil, fmt.Errorf("%q is not a date-time (RFC 3339)", s)
		}
	}
	return s, nil
}

func toFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case float32:
		return float64(n), true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// Defaults are the content of a form accepted without changes: every
// field's valid default.
func (f Form) Defaults() map[string]any {
	out := map[string]any{}
	for _, fld := range f.Fields {
		if fld.Default != nil {
			if v, err := fld.check(fld.Default); err == nil {
				out[fld.Name] = v
			}
		}
	}
	return out
}

// Complete validates content (decoded JSON, as a front end sends it)
// against the form and returns what to send: unknown names refused,
// values checked and typed, defaults applied to omitted fields, required
// fields present.
func (f Form) Complete(content map[string]any) (map[string]any, error) {
	out := map[string]any{}
	for name := range content {
		if !slices.ContainsFunc(f.Fields, func(fl Field) bool { return fl.Name == name }) {
			return nil, fmt.Errorf("the form has no field %q", name)
		}
	}
	var errs []error
	for _, fld := range f.Fields {
		v, given := content[fld.Name]
		if !given || v == nil {
			if fld.Default != nil {
				v = fld.Default
			} else if fld.Required {
				errs = append(errs, fmt.Errorf("%s: %w", fld.Name, ErrFieldRequired))
				continue
			} else {
				continue
			}
		}
		got, err := fld.check(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", fld.Name, err))
			continue
		}
		out[fld.Name] = got
	}
	return out, errors.Join(errs...)
}

// Hint describes what the field takes, for a prompt: its kind, bounds,
// default and numbered choices (the server's texts: sanitise before
// showing).
func (f Field) Hint() string {
	var parts []string
	num := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	switch {
	case f.Type == "array":
		parts = append(parts, "choose one or more, comma-separated")
	case len(f.Choices) > 0:
		parts = append(parts, "choose one")
	case f.Type == "boolean":
		parts = append(parts, "yes/no")
	case f.Type == "integer":
		parts = append(parts, "whole number")
	case f.Type == "number":
		parts = append(parts, "number")
	case f.Format != "":
		parts = append(parts, f.Format)
	default:
		parts = append(parts, "text")
	}
	if f.Minimum != nil && f.Maximum != nil {
		parts = append(parts, num(*f.Minimum)+"–"+num(*f.Maximum))
	} else if f.Minimum != nil {
		parts = append(parts, "≥ "+num(*f.Minimum))
	} else if f.Maximum != nil {
		parts = append(parts, "≤ "+num(*f.Maximum))
	}
	switch {
	case f.Default != nil:
		parts = append(parts, "Enter for "+Show(f.Default))
	case f.Required:
		parts = append(parts, "required")
	default:
		parts = append(parts, "Enter to skip")
	}
	s := strings.Join(parts, "; ")
	if len(f.Choices) > 0 {
		var cs []string
		for i, c := range f.Choices {
			l := c.Value
			if c.Label != "" && c.Label != c.Value {
				l = c.Label + " (" + c.Value + ")"
			}
			cs = append(cs, fmt.Sprintf("%d %s", i+1, l))
		}
		s += " · " + strings.Join(cs, ", ")
	}
	return s
}

// Show renders a field's value for a person.
func Show(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case bool:
		if x {
			return "yes"
		}
		return "no"
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, Show(e))
		}
		return strings.Join(out, ", ")
	}
	return fmt.Sprint(v)
}
