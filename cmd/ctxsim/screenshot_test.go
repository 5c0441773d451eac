package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxsim/ctxsim/internal/chromium"
)

// screenshot is the README's picture of the HTML report: what
// `ctxsim compare --out DIR` writes for the embedded suite, drawn by
// headless Chromium at 1400×1000. It carries the SHA-256 of the
// report.html it was drawn from (a PNG tEXt chunk, keyword shotKey), so
// that this test tells when the build's report no longer is the picture.
const (
	screenshot = "../../docs/report-overview.png"
	shotKey    = "ctxsim-report-sha256"
)

// TestReportScreenshot fails when the report the build writes for the
// embedded suite is not the one docs/report-overview.png shows; `go test
// ./cmd/ctxsim -run TestReportScreenshot -update` (with Chromium on PATH)
// draws it again from the build. The report is byte-deterministic
// (TestDeterminismEmbeddedSuite), so its hash names what the picture shows.
func TestReportScreenshot(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the embedded suite")
	}
	dir := t.TempDir()
	code, _, errs := runCmd(t, "compare", "--out", dir)
	if code != exitOK {
		t.Fatalf("compare --out: exit %d: %s", code, errs)
	}
	html, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(html)
	want := hex.EncodeToString(sum[:])
	if *update {
		bin := chromium.Find()
		if bin == "" {
			t.Fatal("-update draws the screenshot with Chromium: none on PATH (Debian: apt-get install chromium)")
		}
		shot := filepath.Join(dir, "shot.png")
		if _, err := chromium.Run(bin, dir, t.Logf, "--screenshot="+shot, "--window-size=1400,1000", "file://"+filepath.Join(dir, "report.html")); err != nil {
			t.Fatal(err)
		}
		png, err := os.ReadFile(shot)
		if err != nil {
			t.Fatal(err)
		}
		tagged, err := withText(png, shotKey, want)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(screenshot, tagged, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	png, err := os.ReadFile(screenshot)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := pngText(png, shotKey)
	if !ok || got != want {
		t.Errorf("%s shows a report of sha256 %q, the build writes %s: draw it again with go test ./cmd/ctxsim -run TestReportScreenshot -update", screenshot, got, want)
	}
}

var pngMagic = []byte("\x89PNG\r\n\x1a\n")

// chunks calls fn with each chunk of png (its type and data) and where it
// ends; false stops.
func chunks(png []byte, fn func(typ string, data []byte, end int) bool) error {
	if !bytes.HasPrefix(png, pngMagic) {
		return fmt.Errorf("not a PNG")
	}
	for at := len(pngMagic); at+12 <= len(png); {
		n := int(binary.BigEndian.Uint32(png[at:]))
		end := at + 12 + n
		if n < 0 || end > len(png) {
			return fmt.Errorf("PNG chunk at %d runs past the file", at)
		}
		if !fn(string(png[at+4:at+8]), png[at+8:at+8+n], end) {
			return nil
		}
		at = end
	}
	return nil
}

// pngText is the text of png's tEXt chunk named key.
func pngText(png []byte, key string) (string, bool) {
	var out string
	found := false
	_ = chunks(png, func(typ string, data []byte, _ int) bool {
		if k, v, ok := bytes.Cut(data, []byte{0}); typ == "tEXt" && ok && string(k) == key {
			out, found = string(v), true
			return false
		}
		return true
	})
	return out, found
}

// withText is png with a tEXt chunk key=value after its header chunk.
func withText(png []byte, key, value string) ([]byte, error) {
	ihdrEnd := -1
	if err := chunks(png, func(typ string, _ []byte, end int) bool {
		if typ == "IHDR" {
			ihdrEnd = end
		}
		return false
	}); err != nil || ihdrEnd < 0 {
		return nil, fmt.Errorf("no PNG header chunk: %v", err)
	}
	body := append([]byte("tEXt"+key+"\x00"), value...)
	chunk := binary.BigEndian.AppendUint32(nil, uint32(len(body)-4))
	chunk = append(chunk, body...)
	chunk = binary.BigEndian.AppendUint32(chunk, crc32.ChecksumIEEE(body))
	out := append(append(append([]byte(nil), png[:ihdrEnd]...), chunk...), png[ihdrEnd:]...)
	return out, nil
}
