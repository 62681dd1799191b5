package e2e

import (
	"bufio"
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Go's linker drops the methods a program never calls unless the program
// can call methods by a name known only at run time (text/template's
// execution, reflect's Method or MethodByName with a variable): then it
// keeps every exported method of every type it links, which made odin
// 20 MB bigger (most of openai-go's API) and cost 9 MB of resident memory
// and 2 ms of every start. This links odin as the linker sees it and fails
// on any such call it reaches, naming what reached it.
func TestLinkerDropsUnusedMethods(t *testing.T) {
	if testing.Short() {
		t.Skip("links the odin binary")
	}
	cmd := exec.Command("go", "build", "-ldflags=-dumpdep", "-o", filepath.Join(t.TempDir(), "odin"), "github.com/odin-code/odin/cmd/odin")
	var deps bytes.Buffer
	cmd.Stderr = &deps
	if out, err := cmd.Output(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	// Each line is "from -> to" (symbols that keep a method by name carry
	// <ReflectMethod>); the first edge to a symbol is why it is linked.
	why := map[string]string{}
	var culprits []string
	sc := bufio.NewScanner(&deps)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		from, to, ok := strings.Cut(sc.Text(), " -> ")
		if !ok {
			continue
		}
		name := strings.Fields(to)
		if len(name) == 0 {
			continue
		}
		if _, seen := why[name[0]]; !seen {
			why[name[0]] = strings.Fields(from + " x")[0]
			if strings.Contains(to, "<ReflectMethod>") {
				culprits = append(culprits, name[0])
			}
		}
	}
	for _, c := range culprits {
		chain := []string{c}
		for s := why[c]; s != "" && len(chain) < 30; s = why[s] {
			chain = append(chain, s)
		}
		t.Errorf("%s calls methods by a run-time name, so the linker keeps every exported method; reached through:\n  %s", c, strings.Join(chain, "\n  "))
	}
	if len(why) == 0 {
		t.Fatalf("no dependency edges from the linker:\n%s", deps.String()[:min(deps.Len(), 2000)])
	}
}
