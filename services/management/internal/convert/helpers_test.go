package convert

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/services/management/internal/oasdoc"
)

// sharedDir returns the project's shared reference folder: "shared" beside the repository root (the folder
// holding go.work). It skips the test when the folder is absent: only the optional cross-checks against the
// shared reference use it, never coverage of their own.
func sharedDir(t testing.TB) string {
	t.Helper()
	shared, err := findShared()
	if err != nil {
		t.Skipf("%v; skipping", err)
	}
	return shared
}

// findShared locates the shared folder beside the repository root.
func findShared() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.work")); err == nil {
			shared := filepath.Join(filepath.Dir(d), "shared")
			if _, err := os.Stat(filepath.Join(shared, "reference", "tyk")); err != nil {
				return "", fmt.Errorf("shared reference material not found at %s (it lives beside the repository root)", shared)
			}
			return shared, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.work above %s, so the shared reference folder cannot be located", dir)
		}
	}
}

// documentProblems checks a produced document against the project's one rule set for Tyk OAS documents
// (oasdoc.Check: the OpenAPI 3.0 rules and the x-tyk-api-gateway schema's constraints).
func documentProblems(t testing.TB, raw []byte) []string {
	t.Helper()
	return oasdoc.Check(context.Background(), raw)
}

// expectValidDocument fails the test when raw is not a valid Tyk OAS document.
func expectValidDocument(t testing.TB, what string, raw []byte) {
	t.Helper()
	if p := documentProblems(t, raw); len(p) > 0 {
		t.Errorf("%s is not a valid Tyk OAS document:\n  %s\n%s", what, strings.Join(p, "\n  "), raw)
	}
}

func mustMarshal(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// decodeJSON decodes with numbers kept as json.Number.
func decodeJSON(t testing.TB, raw []byte) any {
	t.Helper()
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decoding %s: %v", raw, err)
	}
	return v
}

// sameNumber compares two JSON numbers by value.
func sameNumber(a, b json.Number) bool {
	x, ok1 := new(big.Rat).SetString(string(a))
	y, ok2 := new(big.Rat).SetString(string(b))
	return ok1 && ok2 && x.Cmp(y) == 0
}
