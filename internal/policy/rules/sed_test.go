package rules

import "testing"

func TestSedScriptReadOnly(t *testing.T) {
	cases := []struct {
		script string
		want   bool
	}{
		{"p", true},
		{"1,5p", true},
		{"/foo/,/bar/d", true},
		{"s/a/b/g", true},
		{"s|a|b|gI", true},
		{`s/a\/w/b/`, true},
		{"s/a/b/;s/c/d/2", true},
		{"$!N; P; D", true},
		{"/x/{p;q}", true},
		{"y/abc/xyz/", true},
		{"1~2p", true},
		{"0,/re/ s//X/", true},
		{"a\\\nappended text", true},
		{"i hello", true},
		{":a;N;$!ba;s/\\n/ /g", true},
		{"# comment\np", true},
		{"=", true},
		{"w out.txt", false},
		{"1,3w out.txt", false},
		{"W out.txt", false},
		{"s/a/b/w out.txt", false},
		{"s/a/b/gw out.txt", false},
		{"s/.*/id/e", false},
		{"1e id", false},
		{"e", false},
		{"r /etc/passwd", false},
		{"R other", false},
		{"/x/{w out\n}", false},
		{"p;w x", false},
		{"s/unterminated", false},
		{"k", false},
		{"s\\a\\b\\", false},
	}
	for _, c := range cases {
		got, why := sedScriptReadOnly(c.script)
		if got != c.want {
			t.Errorf("sedScriptReadOnly(%q) = %v (%s), want %v", c.script, got, why, c.want)
		}
		if !got && why == "" {
			t.Errorf("sedScriptReadOnly(%q) gave no reason", c.script)
		}
	}
}
