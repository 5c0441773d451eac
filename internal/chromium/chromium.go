// Package chromium runs headless Chromium for the tests that load the HTML
// report in a real browser (report's TestHTMLChromium) and draw the
// README's screenshot from it (cmd/ctxsim's TestReportScreenshot).
package chromium

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
)

// Find is the Chromium binary on PATH, "" when there is none (Debian's
// chromium package installs one; .ci/run installs it).
func Find() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// Run runs bin headless with a fresh profile under dir and args, and
// returns its stdout. Headless Chromium on a loaded machine occasionally
// dies of a segmentation fault before it renders anything (seen once in a
// full CI run; the same page then rendered): a run that fails is tried
// again, up to three times, and logf hears of each failure.
func Run(bin, dir string, logf func(format string, args ...any), args ...string) ([]byte, error) {
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
		"--user-data-dir=" + filepath.Join(dir, "profile")}
	var out []byte
	var err error
	for try := 1; try <= 3; try++ {
		cmd := exec.Command(bin, append(base, args...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if out, err = cmd.Output(); err == nil {
			return out, nil
		}
		logf("chromium %v, try %d: %v\n%s", args, try, err, stderr.Bytes())
	}
	return out, fmt.Errorf("chromium %v: %w", args, err)
}
