// Command inventory serves the inventory API on :8080.
package main

import (
	"log"
	"net/http"

	"example.com/inventory/api"
)

func main() {
	items := []api.Item{{Name: "bolt", Count: 120}, {Name: "nut", Count: 80}}
	log.Fatal(http.ListenAndServe(":8080", api.NewServer(items)))
}
