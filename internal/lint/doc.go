// Package lint holds the project's style rules as ordinary tests, so that
// `make test` fails when a rule is broken.
//
// Owns: the import-direction table of docs/architecture.md, confined
// third-party dependencies, package doc comments, files through vfs,
// deterministic cores, assertion-only panics, the Options shape, fuzzed
// decoders and the file-size tripwire.
// Does not own: formatting and vet (the Makefile's lint target runs them).
// May import: the standard library.
// Must not import: any other Sibyl package.
//
// A line that must break a rule says so on the line above it:
//
//	//lint:ignore <Rule> <reason>
package lint
