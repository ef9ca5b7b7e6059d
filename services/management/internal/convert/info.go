package convert

// x-tyk-api-gateway.info: identity, state and versioning.

type xInfo struct {
	ID         string       `json:"id,omitempty"`
	DBID       string       `json:"dbId,omitempty"`
	OrgID      string       `json:"orgId,omitempty"`
	Name       string       `json:"name"`
	Expiration string       `json:"expiration,omitempty"`
	State      xState       `json:"state"`
	Versioning *xVersioning `json:"versioning,omitempty"`
}

type xState struct {
	Active   bool `json:"active"`
	Internal bool `json:"internal,omitempty"`
}

type xVersioning struct {
	Enabled              bool           `json:"enabled"`
	Name                 string         `json:"name,omitempty"`
	Default              string         `json:"default"`
	Location             string         `json:"location"`
	Key                  string         `json:"key,omitempty"`
	Versions             []xVersionToID `json:"versions,omitempty"`
	StripVersioningData  bool           `json:"stripVersioningData,omitempty"`
	FallbackToDefault    bool           `json:"fallbackToDefault,omitempty"`
	URLVersioningPattern string         `json:"urlVersioningPattern,omitempty"`
}

type xVersionToID struct {
	Name string `json:"name"`
	ID   string `json:"id"`
}

func (c *converter) info(t *target) xInfo {
	info := xInfo{
		ID:         t.apiID,
		OrgID:      c.api.OrgID,
		Name:       t.name,
		Expiration: t.expiration,
		State:      xState{Active: c.api.Active, Internal: t.internal},
		Versioning: t.versioning,
	}
	info.DBID = t.dbID // a child's only when Options.VersionDBID gave one
	return info
}
