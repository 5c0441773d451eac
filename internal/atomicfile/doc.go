// Package atomicfile writes a file so that a reader sees its old contents
// or the new, never part of either: the bytes go to a temporary file
// beside the target, which is then renamed over it. The token-count cache
// (policies/estimate/tokcache) and the import cache (traces/filecache)
// write through it.
package atomicfile
