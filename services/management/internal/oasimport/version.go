package oasimport

import "encoding/json"

// Version is an import as a new version of an existing Tyk OAS API, the
// base (the Dashboard's base_api_id, base_api_version_name,
// new_version_name and set_default).
type Version struct {
	// BaseName, when set, names the base's own version.
	BaseName string
	// Name is the new version's name.
	Name string
	// SetDefault makes the new version the default one.
	SetDefault bool
}

// AddVersion returns the base's document with the new version id listed
// in x-tyk-api-gateway.info.versioning, as Tyk's ConfigureVersionDefinition
// changes a base API: versioning enabled, its name BaseName when given, the
// version listed under v.Name, the
// default v.Name with SetDefault, and what is unset given Tyk's defaults:
// key x-api-version, location header, default self. A name the base
// already lists is refused (Tyk's gateway would list the new API in place
// of the one listed, which stays stored, out of every list).
func AddVersion(base []byte, v Version, id string) ([]byte, error) {
	root, err := decodeRoot(base)
	if err != nil {
		return nil, err
	}
	x, ok := root.get(extension).(map[string]any)
	if !ok {
		return nil, refuse("base_api_id: the base API has no %s", extension)
	}
	vs := child(child(x, "info"), "versioning")
	vs["enabled"] = true
	if v.BaseName != "" {
		vs["name"] = v.BaseName
	}
	if v.SetDefault {
		vs["default"] = v.Name
	}
	for name, def := range map[string]string{"key": "x-api-version", "location": "header", "default": "self"} {
		if s, _ := vs[name].(string); s == "" {
			vs[name] = def
		}
	}
	listed, _ := vs["versions"].([]any)
	for _, e := range listed {
		if m, _ := e.(map[string]any); m["name"] == v.Name {
			return nil, refuse("new_version_name: the base API already lists a version %q", v.Name)
		}
	}
	listed = append(listed, map[string]any{"name": v.Name, "id": id})
	vs["versions"] = listed
	return encodeObject(root)
}

// VersionName is the base's own version name (info.versioning.name), ""
// when it has none.
func VersionName(base []byte) string {
	var d struct {
		X struct {
			Info struct {
				Versioning struct {
					Name string `json:"name"`
				} `json:"versioning"`
			} `json:"info"`
		} `json:"x-tyk-api-gateway"`
	}
	json.Unmarshal(base, &d)
	return d.X.Info.Versioning.Name
}
