//go:build !unix

package search

import "os"

type rawFile struct{ f *os.File }

func openFile(path string) (rawFile, error) {
	f, err := os.Open(path)
	return rawFile{f}, err
}

func (f rawFile) read(p []byte) (int, error) { return f.f.Read(p) }

func (f rawFile) close() { f.f.Close() }

func (f rawFile) size() int64 {
	if fi, err := f.f.Stat(); err == nil {
		return fi.Size()
	}
	return 0
}
