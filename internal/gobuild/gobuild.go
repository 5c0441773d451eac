package gobuild

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
)

// Once returns a function that builds the package at pkg (a path as
// "go build" takes it, relative to the test's directory) into a temporary
// binary named name the first time it is called, and returns the binary's
// path, or the build's error, every time.
func Once(pkg, name string) func() (string, error) {
	return sync.OnceValues(func() (string, error) {
		dir, err := os.MkdirTemp("", name)
		if err != nil {
			return "", err
		}
		bin := filepath.Join(dir, name)
		if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
			return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
		}
		return bin, nil
	})
}
