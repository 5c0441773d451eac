// Package atomicfile writes a file so that a reader sees its old contents
// or the new, never part of either: the bytes go to a temporary file
// beside the target, which is then renamed over it. The token-count cache
// (policies/estimate/tokcache), the import cache (traces/filecache) and
// the hindsight cache (sim/hindsight/hindcache) write through it.
package atomicfile
