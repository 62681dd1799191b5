package qa

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/odin-code/odin/internal/sandbox"
)

// Coverage is measured for real before (on a copy with the old files put
// back) and after; adding an untested function lowers it and warns.
func TestCoverageBeforeAfter(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	oldPrice := "package shop\n\n// Total sums.\nfunc Total(p []int) int {\n\ts := 0\n\tfor _, v := range p {\n\t\ts += v\n\t}\n\treturn s\n}\n"
	newPrice := oldPrice + "\n// Max is untested.\nfunc Max(p []int) int {\n\tm := 0\n\tfor _, v := range p {\n\t\tif v > m {\n\t\t\tm = v\n\t\t}\n\t}\n\treturn m\n}\n"
	writeFiles(t, root, map[string]string{
		"go.mod":             "module shop\n\ngo 1.22\n",
		"shop/price.go":      newPrice,
		"shop/price_test.go": "package shop\n\nimport \"testing\"\n\nfunc TestTotal(t *testing.T) {\n\tif Total([]int{1, 2}) != 3 {\n\t\tt.Fatal(\"bad\")\n\t}\n}\n",
		"shop/extra.go":      "package shop\n\nfunc helper() int { return 1 }\n",
	})
	r := &Runner{Root: root, Launcher: sandbox.New(sandbox.Options{Mode: sandbox.ModeAuto, Root: root, CacheDir: sharedCache(t)})}
	rep := r.Coverage(t.Context(), []Change{
		{Path: "shop/price.go", Before: []byte(oldPrice), Existed: true},
		{Path: "shop/extra.go"},
	})
	if rep == nil || len(rep.Packages) != 1 {
		t.Fatalf("report: %+v", rep)
	}
	p := rep.Packages[0]
	if p.Package != "shop/shop" || p.Before == nil || p.After == nil {
		t.Fatalf("package coverage: %+v (note %q)", p, rep.Note)
	}
	if *p.Before != 100 || *p.After >= *p.Before {
		t.Errorf("coverage before %.1f after %.1f: want 100 then lower", *p.Before, *p.After)
	}
	drops := CoverageDrops(rep)
	if len(drops) != 1 || !strings.Contains(drops[0], "coverage of shop/shop dropped from 100.0%") {
		t.Errorf("drops: %v", drops)
	}
	if rep.Command != "go test -cover ./shop" {
		t.Errorf("command %q", rep.Command)
	}
	// No Go change, no measurement; "off" turns it off.
	if rep := r.Coverage(t.Context(), []Change{{Path: "README.md"}}); rep != nil {
		t.Errorf("non-Go change measured: %+v", rep)
	}
	r.Quality.Coverage = "off"
	if rep := r.Coverage(t.Context(), []Change{{Path: "shop/price.go", Existed: true}}); rep != nil {
		t.Errorf("coverage off still measured: %+v", rep)
	}
}
