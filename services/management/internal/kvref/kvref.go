// Package kvref recognises the KV references a Tyk Gateway resolves when it loads an API definition, classic
// or Tyk OAS (gateway/api_definition.go replaceSecrets, api_loader.go kvStore): `env://NAME`,
// `secrets://NAME`, `consul://KEY`, `vault://KEY`. Such a value is not what the gateway will use, so the rules
// on a field's form (a listen path starts with /) do not apply to it; it is stored and converted unchanged.
package kvref

import "strings"

// Prefixes are the reference schemes the gateway resolves.
var Prefixes = []string{"env://", "secrets://", "consul://", "vault://"}

// Is tells whether s is a KV reference: one of the Prefixes followed by a name.
func Is(s string) bool {
	for _, p := range Prefixes {
		if name, ok := strings.CutPrefix(s, p); ok && name != "" {
			return true
		}
	}
	return false
}
