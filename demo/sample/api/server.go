// Package api serves the inventory over HTTP.
package api

import (
	"encoding/json"
	"net/http"
)

// Item is one thing in stock.
type Item struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
}

// NewServer returns the API's handler.
func NewServer(items []Item) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /items", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(items)
	})
	return mux
}
