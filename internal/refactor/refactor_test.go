package refactor

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func changed(path, before, after string) File {
	return File{Path: path, Before: []byte(before), Existed: before != "", After: []byte(after), Exists: after != ""}
}

func TestDetect(t *testing.T) {
	price := "package shop\n\n// Total sums.\nfunc Total(p []int) int { return 0 }\n\nfunc helper() {}\n"
	for _, tc := range []struct {
		name  string
		files []File
		lines int
		want  []string
	}{
		{"rename of an exported function", []File{
			changed("shop/price.go", price, strings.Replace(price, "Total", "Sum", 2)),
			changed("shop/cart.go", "package shop\n\nvar X = Total(nil)\n", "package shop\n\nvar X = Sum(nil)\n"),
		}, 0, []string{"renamed exported identifier Total → Sum (shop/price.go)"}},
		{"move of an exported function to another file", []File{
			changed("shop/price.go", price, "package shop\n\nfunc helper() {}\n"),
			changed("shop/total.go", "", "package shop\n\n// Total sums.\nfunc Total(p []int) int { return 0 }\n"),
		}, 0, []string{"moved exported identifier Total from shop/price.go to shop/total.go"}},
		{"a file moved to another package", []File{
			changed("shop/price.go", price, ""),
			changed("billing/price.go", "", strings.Replace(price, "package shop", "package billing", 1)),
		}, 0, []string{"moved file shop/price.go → billing/price.go"}},
		{"a changed signature is no rename", []File{
			changed("shop/price.go", price, strings.Replace(price, "Total(p []int) int", "Sum(p []int64) int64", 1)),
		}, 0, nil},
		{"unexported and test identifiers do not count", []File{
			changed("shop/price.go", price, strings.Replace(price, "helper", "helper2", 1)),
			changed("shop/price_test.go", "package shop\n\nfunc TestA() {}\n", "package shop\n\nfunc TestB() {}\n"),
		}, 0, nil},
		{"size over the limit", []File{
			changed("a.txt", "one\ntwo\n", "one\nTWO\nthree\n"),
		}, 3, []string{"large change: 3 lines changed (quality.refactor_lines: 3)"}},
		{"size under the limit", []File{
			changed("a.txt", "one\ntwo\n", "one\nTWO\nthree\n"),
		}, 4, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Detect(tc.files, Options{MaxLines: tc.lines})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Detect (-want +got):\n%s", diff)
			}
		})
	}
}
