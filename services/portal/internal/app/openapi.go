package app

import (
	"encoding/json"
	"fmt"

	"github.com/gatehouse/gatehouse/gen/openapi"
)

// openAPI is the generated description with the one change the REST
// decoder makes to the wire format: an IdList (Categories, Tags) is written
// as a plain array of ID strings, not as {"ids": [...]}.
func openAPI() ([]byte, error) {
	var doc map[string]any
	if err := json.Unmarshal(openapi.Portal, &doc); err != nil {
		return nil, fmt.Errorf("read the OpenAPI description: %w", err)
	}
	defs, ok := doc["definitions"].(map[string]any)
	if !ok || defs["v1IdList"] == nil {
		return nil, fmt.Errorf("the OpenAPI description has no v1IdList definition")
	}
	defs["v1IdList"] = map[string]any{
		"type":        "array",
		"items":       map[string]any{"type": "string", "pattern": "^[0-9]+$"},
		"description": "IDs of existing records, written as strings; the list replaces the page's list.",
		"example":     []string{"1", "2"},
	}
	return json.Marshal(doc)
}
