// Package progress draws a long command's progress on a terminal, in
// sessions: logs read, session replays done, sessions whose hindsight
// optimum is solved, each of how many, and an estimate of the time left.
//
// A Meter is told the counts as they change (from any goroutine) and
// redraws one line of its writer, at most every Interval of its clock; it
// draws nothing else and returns nothing a result depends on, so a
// command's outputs are the same with or without one. ForTerminal gives a
// Meter only when the writer is a terminal and the command asks for one
// (not for --json). The clock is passed in (cmd passes time.Now):
// tests drive a Meter with a fake one.
package progress
