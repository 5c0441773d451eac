// Package tokcache keeps token counts across processes, so that a second
// run over the same logs tokenizes nothing. It is an estimate.Store: a Memo
// asks it before tokenizing and tells it every count it makes.
//
// Counts are keyed by the text's content (its xxhash and length) in one
// file per encoding in a directory the caller chooses (cmd/ctxsim uses
// os.UserCacheDir()/ctxsim, --cache-dir or CTXSIM_CACHE_DIR, and --no-cache
// to go without):
//
//	c := tokcache.Open(dir, "o200k_base", tokcache.Options{})
//	memo.SetStore(c)
//	... // count
//	err := c.Flush() // once, at the end
//	for _, w := range c.Warnings() { ... }
//
// Flush writes atomically (a temporary file renamed over the old one), after
// merging what another process may have written since Open, so several
// processes may share a directory: a reader sees a whole file, old or new,
// never a torn one; two processes flushing at the same moment may drop
// each other's newest counts, which only costs a recount. The file keeps
// at most Options.MaxEntries counts, the most recently used. A file that
// is short, has a bad header or a bad checksum is ignored with a warning
// and replaced at the next Flush. A checksum proves only that the file is
// whole, so counts are checked against their texts too: a file holding a
// count no text of its length can have (none for a non-empty text, more
// than three tokens per byte) is ignored the same way, and an entry with
// more tokens than its valid UTF-8 text has bytes is dropped at Lookup
// with a warning, and counted again.
package tokcache
