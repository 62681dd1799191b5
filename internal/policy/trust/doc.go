// Package trust records which projects the user trusts (Store, a JSON file
// in Odin's state directory written atomically) and fingerprints the
// project files a trusted MCP server or hook executes (PinProgram), so that
// trust given to a project's config is voided when those files change.
// A Store is safe for concurrent use; PinProgram reads files and never
// runs them.
package trust
