package search

import (
	"math/rand/v2"
	"testing"
)

// TestIndexFoldPair checks the word-at-a-time pair search against a plain
// loop on random data, at every alignment.
func TestIndexFoldPair(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	alphabet := []byte("abcdeABCDE_-@`{[\x00\xff\n ")
	naive := func(s []byte, c0, m0, c1, m1 byte) int {
		for i := 0; i+1 < len(s); i++ {
			if s[i]|m0 == c0 && s[i+1]|m1 == c1 {
				return i
			}
		}
		return -1
	}
	pairs := [][4]byte{{'a', 0x20, 'b', 0x20}, {'d', 0x20, '_', 0}, {'@', 0, 'e', 0x20}, {'{', 0, '[', 0}, {'`', 0, 'a', 0x20}}
	for n := range 2000 {
		s := make([]byte, rnd.IntN(70))
		for i := range s {
			s[i] = alphabet[rnd.IntN(len(alphabet))]
		}
		p := pairs[n%len(pairs)]
		if got, want := indexFoldPair(s, p[0], p[1], p[2], p[3]), naive(s, p[0], p[1], p[2], p[3]); got != want {
			t.Fatalf("indexFoldPair(%q, %q%q) = %d, want %d", s, p[0], p[2], got, want)
		}
	}
}

func BenchmarkIndexFoldPair(b *testing.B) {
	s := make([]byte, 1<<20)
	for i := range s {
		s[i] = "abcdefgh ijk\n"[i%13]
	}
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		indexFoldPair(s, 'x', 0x20, 'y', 0x20)
	}
}
