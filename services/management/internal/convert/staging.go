package convert

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gatehouse/gatehouse/services/management/internal/rawjson"
)

// The staged copy of a classic API (Options.Staging) carries these prefixes;
// Unstage removes them again when the copy is promoted.
const (
	StagingIDPrefix         = "staging-"
	StagingNamePrefix       = "[staged] "
	StagingListenPathPrefix = "/tyk-staging"
)

// unstageExt is the root key of the gateway extension.
const unstageExt = "x-tyk-api-gateway"

// Unstage returns a staged document (base or child version) as its promoted
// self: the staging prefixes are removed from x-tyk-api-gateway.info.id and
// .name, info.title, server.listenPath.value and the IDs listed in
// info.versioning.versions. The document is edited as bytes: every other
// byte, edits made to the staged copy included, is kept as it is.
func Unstage(doc []byte) ([]byte, error) {
	edits := []struct {
		path   []string
		prefix string
	}{
		{[]string{unstageExt, "info", "id"}, StagingIDPrefix},
		{[]string{unstageExt, "info", "name"}, StagingNamePrefix},
		{[]string{"info", "title"}, StagingNamePrefix},
		{[]string{unstageExt, "server", "listenPath", "value"}, StagingListenPathPrefix},
	}
	var err error
	for _, e := range edits {
		if doc, err = trimString(doc, e.prefix, e.path...); err != nil {
			return nil, err
		}
	}
	versionsPath := []string{unstageExt, "info", "versioning", "versions"}
	raw, ok, err := rawjson.Lookup(doc, versionsPath...)
	if err != nil || !ok {
		return doc, err
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("%s: %w", strings.Join(versionsPath, "."), err)
	}
	out := []byte{'['}
	for i, item := range items {
		if item, err = trimString(item, StagingIDPrefix, "id"); err != nil {
			return nil, err
		}
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, item...)
	}
	return rawjson.Set(doc, append(out, ']'), versionsPath...)
}

// trimString removes prefix from the string at path, when both are there.
func trimString(doc []byte, prefix string, path ...string) ([]byte, error) {
	raw, ok, err := rawjson.Lookup(doc, path...)
	if err != nil || !ok {
		return doc, err
	}
	s, isString := rawjson.String(raw)
	if !isString || !strings.HasPrefix(s, prefix) {
		return doc, nil
	}
	return rawjson.Set(doc, rawjson.Quote(strings.TrimPrefix(s, prefix)), path...)
}
