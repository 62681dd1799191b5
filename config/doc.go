// Package config is odin.yaml as documented Go structs, its loading with the
// documented precedence (built-in defaults < user file < project file <
// ODIN_* environment < flags) and its validation. It is the only package
// that imports viper. The comments on the structs below are the user
// documentation of every key; odin.yaml at the repository root is the
// worked example and is loaded by a test, and another test fails when a key
// is missing from it.
//
// # Loading
//
// Load reads each layer on its own and checks it against the Config type
// (the mapstructure tags are the keys), so every problem names its source
// and key: "odin.yaml: models.mian: unknown key (did you mean "main"?)",
// "odin.yaml:3: yaml: ..." for syntax errors. Checked layers are merged by
// viper and decoded strictly; Validate then checks values. All problems are
// reported together in an *Error.
//
// Rules worth knowing:
//   - Unknown keys are errors; keys are case-sensitive.
//   - Durations are Go durations ("90s", "2m", "1h30m") or whole seconds.
//   - Mappings merge key by key across layers; lists and scalars replace.
//   - Relative paths (agents.*.prompt_file, permissions.additional_dirs,
//     log.file, store.path) are taken against the directory of the file
//     that sets them (the project root for ODIN_* and flags); "~/" is $HOME.
//   - OPENAI_API_KEY is the default api_key_env of the built-in "openai"
//     provider. OPENAI_BASE_URL replaces that provider's default base_url:
//     it sits just above the built-in defaults, so a base_url written in a
//     file, ODIN_PROVIDERS_OPENAI_BASE_URL or a flag wins over it. With no
//     config at all, exporting OPENAI_BASE_URL=http://localhost:11434/v1
//     uses Ollama, and no key is needed for it.
//   - A provider is usable if it has an API key or its base_url is not
//     api.openai.com; ResolveModel fails with ErrNoProvider otherwise.
//
// # Trust
//
// One rule decides which settings of the project's odin.yaml wait for
// `odin trust` (widening in load.go): every value that can run code, send
// data or a key somewhere, change the model endpoint, loosen the mode or
// replace a built-in agent. Sources.TrustItems lists them with their
// values; LoadOptions.IgnoreProjectWidening drops them until the user
// trusts the project, and TrustFingerprint lets the trust store notice a
// change. Packages that load project files (agents, commands, ODIN.md)
// describe what they would honour as TrustItems too, so one fingerprint
// covers all of it.
//
// A *Config is plain data: safe for concurrent reads, never mutated by this
// package after Load returns.
package config
