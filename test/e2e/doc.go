// Package e2e runs Odin's end-to-end scripts: testscript files that drive
// the built odin binary against the scripted model server over real HTTP,
// in throwaway projects, with Odin's state and config directories isolated
// per script.
package e2e
