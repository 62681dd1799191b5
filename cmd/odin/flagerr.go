package main

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/spf13/pflag"
)

// flagProblem is how a flag that did not parse is told. pflag words a bad
// value of its own types after Go's parser ("invalid argument "abc" for
// "--max-turns" flag: strconv.ParseInt: parsing "abc": invalid syntax");
// this says what the flag takes instead. A value type of Odin's own says
// that itself, and the other flag errors (unknown flag, missing value)
// read well as pflag words them.
func flagProblem(err error) string {
	var ive *pflag.InvalidValueError
	if !errors.As(err, &ive) || ive.GetFlag() == nil {
		return err.Error()
	}
	name, value, cause := "--"+ive.GetFlag().Name, ive.GetValue(), errors.Unwrap(ive)
	var ne *strconv.NumError
	if !errors.As(cause, &ne) && ive.GetFlag().Value.Type() != "duration" {
		if cause == nil {
			return err.Error()
		}
		return fmt.Sprintf("%s %q: %v", name, value, cause)
	}
	if ne != nil && errors.Is(ne.Err, strconv.ErrRange) {
		return fmt.Sprintf("%s %q: out of range", name, value)
	}
	want := map[string]string{
		"int": "a whole number", "int64": "a whole number", "uint": "a whole number",
		"float64": "a number", "bool": "true or false",
		"duration": `a duration such as "90s" or "2m"`,
	}[ive.GetFlag().Value.Type()]
	if want == "" {
		return fmt.Sprintf("%s %q: %v", name, value, cause)
	}
	return fmt.Sprintf("%s %q: want %s", name, value, want)
}
