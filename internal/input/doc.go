// Package input is how a library package names a program's inputs in its
// errors without knowing the program's flags: an Error's message names
// each input in braces, in the library's words ({price file}, {log
// format}, {since}), and a caller with names of its own for them (the
// CLI's flags) renders it with Name, or Render for an error that wraps
// one. Every floor below the CLI shares the one type, so the CLI renders
// every such error one way.
package input
