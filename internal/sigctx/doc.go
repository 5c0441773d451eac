// Package sigctx is how a command hears SIGINT and SIGTERM: the first
// cancels its context, so work stops between replay calls and nothing is
// half-written; a second signal ends the process as the signal does by
// default; and a command still busy a grace period after the first (stuck
// in a system call no context reaches, such as opening a FIFO nobody
// reads, named as an output) is ended by the Exit it was given.
//
// Catching the signals for the whole command swallowed every later one:
// `ctxsim check --markdown FIFO` with no reader ignored SIGTERM and
// Ctrl-C, however often sent.
package sigctx
