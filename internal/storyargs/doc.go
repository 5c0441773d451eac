// Package storyargs parses the arguments of datadriven story commands
// (key=value, key=(a,b)), shared by the story tests of sim and
// policies/compact so both read a story's numbers and durations alike, and
// walks their story files (Walk).
package storyargs
