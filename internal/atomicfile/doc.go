// Package atomicfile is ctxsim's one way of writing a file: a reader sees
// its old contents or the new, never part of either. The bytes go to a
// temporary file beside the target, which is then renamed over it (Write
// for the token-count, import and hindsight caches; WriteFunc for a
// command's output file; WriteSet for an output directory written as one
// set).
//
// An output path is input too. Renaming over a FIFO or a device would
// replace the node with a regular file (`--markdown /dev/null` run as root
// replaced the system's /dev/null), so a character device or FIFO named as
// an output is written in place, and a directory, socket or block device
// is refused (NotRegularError). A cache entry that is anything but a
// regular file or symlink is refused as well. A file of an output set that
// ctxsim reads back (a sweep's journal, a shard's files) is opened through
// Open, which refuses anything but a regular file without waiting on it.
package atomicfile
