// Package safetext makes text from input safe to print where a person or
// a program reads lines: a terminal, a Markdown table, a CSV file. Session
// ids, model names and file names come from logs anyone could have
// written; printed raw, an escape sequence clears the screen or retitles
// the terminal, a carriage return overwrites what came before, a line
// break forges a line of ctxsim's own ("ctxsim: ...") or splits a Markdown
// table row, and a bidirectional override reorders what is shown.
//
// Line escapes every such character as Go source would (\x1b, \r, \n,
// \u202e, an invalid byte as \xff) and leaves the rest, backslashes
// included, as it was: text that needs no escape comes back unchanged and
// unallocated. Markdown also escapes the cell separator |. JSON needs
// neither: encoding/json escapes control characters itself.
package safetext
