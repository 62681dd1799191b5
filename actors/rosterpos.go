package actors

import "strconv"

// locator names the file and line a roster entry's key is written on,
// for errors and warnings found after the entry was read; line 0 when
// the input has no lines to point at.
type locator func(key string) (file string, line int)

// at is where key of a is written: its locator's answer, else the file
// of its Source with no line (a built-in's).
func (a *AgentDefinition) at(key string) (string, int) {
	if a.locate != nil {
		if file, line := a.locate(key); file != "" {
			return file, line
		}
	}
	return sourceFile(a), 0
}

// rosterErr is the *RosterError for key of a, placed at key's line.
func (a *AgentDefinition) rosterErr(key, problem string) error {
	file, line := a.at(key)
	return &RosterError{File: file, Agent: a.Name, Key: key, Problem: problem, Line: line}
}

// where is "file:line" of key of a, for warnings, or the file alone.
func (a *AgentDefinition) where(key string) string {
	file, line := a.at(key)
	if line > 0 {
		return file + ":" + strconv.Itoa(line)
	}
	return file
}

// configLocator places the keys of the config agent name: through the
// caller's locate (the config file that set the key, and its line),
// else in file with no line.
func configLocator(locate func(key string) (string, int), file, name string) locator {
	return func(key string) (string, int) {
		if locate != nil {
			full := "agents." + name
			if key != "" {
				full += "." + key
			}
			if f, line := locate(full); f != "" {
				return f, line
			}
		}
		return file, 0
	}
}
