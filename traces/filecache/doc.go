// Package filecache keeps what an importer read from each log file across
// runs: a traces.FileCache in a directory. A second run of ctxsim over
// unchanged logs decodes no JSON; it reads each file's sessions and
// warnings back from an entry instead (about 20× faster than the
// Claude Code import on the shared sessions).
//
//	c, err := filecache.OpenExecutable(dir, time.Now) // keyed by this program's build
//	ss, w, err := traces.Open(ctx, paths, traces.OpenOptions{Formats: formats.All(), Cache: c})
//	...
//	err = c.Flush() // once, at the end: keeps the directory within its bound
//	for _, w := range c.Warnings() { ... }
//
// An entry is keyed by the importer, the file's name as messages give it,
// the file's xxhash and length, and the build of the program (its Go build
// ID, which changes with any source or setting): a changed file, or a
// changed importer, is a miss, never a stale answer. Entries are written
// whole (a temporary file renamed into place) and end in a checksum, so
// several processes may share a directory; one that is short, fails its
// checksum or does not decode is ignored with a warning and rewritten. A
// directory that cannot be read or written is one warning, and the run
// goes on without the cache.
//
// A Cache also keeps stamps (traces.StampedCache): the size, modification
// and change times, device and inode a file had when it was read, and the
// key of its contents then. A file whose stamp is unchanged is served
// without being read or hashed, as git's index serves unchanged files. A
// stamp is trusted only when it was remembered more than RacyWindow after
// the file's last change, since a file changed twice within one tick of
// the file system's clock can keep its stamp; a log being written to is
// read and hashed each time. Only real files have stamps (an in-memory
// fs.FS has no inode), and only on Linux and macOS.
//
// An entry is written field by field (codec.go) and decoded straight from
// the file's bytes, its strings left in the buffer the file was read
// into; gob, this cache's first format, copied each entry whole and
// compiled its types afresh per file. TestCodecEveryField fills every field of a
// session by reflection, so a field added to traces and not to the codec
// fails it.
package filecache
