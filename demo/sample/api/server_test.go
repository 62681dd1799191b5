package api

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestItems(t *testing.T) {
	srv := httptest.NewServer(NewServer([]Item{{Name: "bolt", Count: 3}}))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/items")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 512)
	n, _ := resp.Body.Read(buf)
	b.Write(buf[:n])
	if !strings.Contains(b.String(), `"bolt"`) {
		t.Fatalf("items = %s", b.String())
	}
}
