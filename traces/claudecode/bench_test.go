package claudecode

import (
	"os"
	"testing"
)

// BenchmarkCost is `ctxsim cost` on the largest shared session.
func BenchmarkCost(b *testing.B) {
	fi, err := os.Stat(bigFile)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(fi.Size())
	for b.Loop() {
		if _, _, err := ScanUsage(bigFile); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkImport is the full import of the same session.
func BenchmarkImport(b *testing.B) {
	fi, err := os.Stat(bigFile)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(fi.Size())
	for b.Loop() {
		if _, _, err := Import(bigFile); err != nil {
			b.Fatal(err)
		}
	}
}
