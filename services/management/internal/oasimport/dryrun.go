package oasimport

import (
	"bytes"

	"github.com/gatehouse/gatehouse/services/management/internal/rawjson"
)

// DryRunDocument is the OpenAPI document a dry-run body carries, as a
// slice of body (no copy): {"oas": document}, or {"tyk_oas": document} when
// oas is missing or null; nil when neither is there. Keys match as
// encoding/json matches a struct's fields (case-insensitively, the last
// match winning), so the document is the one a decode into
// struct{ OAS, TykOAS json.RawMessage } gives, without copying it. body is
// valid JSON (as oasdoc.Parse leaves it); one that is not an object
// carries nothing.
func DryRunDocument(body []byte) ([]byte, error) {
	var oas, tykOAS []byte
	err := rawjson.Each(body, func(key, value []byte) error {
		switch {
		case bytes.EqualFold(key, []byte("oas")):
			oas = value
		case bytes.EqualFold(key, []byte("tyk_oas")):
			tykOAS = value
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(oas) == 0 || string(oas) == "null" {
		oas = tykOAS
	}
	if len(oas) == 0 || string(oas) == "null" {
		return nil, nil
	}
	return oas, nil
}
