package keys

import (
	"encoding/json"
	"slices"
	"strconv"

	"github.com/gatehouse/gatehouse/pkg/jsonstrict"
)

// Shapes of a session (Tyk's user.SessionState): every member management
// or a gateway reads has one JSON type; unknown members are kept as sent.
var (
	str     = &jsonstrict.Shape{Type: jsonstrict.String}
	boolean = &jsonstrict.Shape{Type: jsonstrict.Bool}
	number  = &jsonstrict.Shape{Type: jsonstrict.Number}
	integer = &jsonstrict.Shape{Type: jsonstrict.Integer}
	strings = &jsonstrict.Shape{Type: jsonstrict.Array, Elem: str}
	free    = &jsonstrict.Shape{Type: jsonstrict.Object, FreeForm: true}
	object  = &jsonstrict.Shape{Type: jsonstrict.Object}
	array   = &jsonstrict.Shape{Type: jsonstrict.Array}

	limitShape = members(map[string]*jsonstrict.Shape{
		"rate": number, "per": number, "throttle_interval": number, "throttle_retry_limit": integer,
		"max_query_depth": integer, "quota_max": integer, "quota_renews": integer,
		"quota_remaining": integer, "quota_renewal_rate": integer, "set_by_policy": boolean,
	})
	accessShape = members(map[string]*jsonstrict.Shape{
		"api_id": str, "api_name": str, "versions": strings, "allowed_urls": array,
		"limit": limitShape, "allowance_scope": str, "disable_introspection": boolean,
		"restricted_types": array, "allowed_types": array, "field_access_rights": array,
	})
	sessionShape = members(map[string]*jsonstrict.Shape{
		"last_check": integer, "allowance": number, "rate": number, "per": number,
		"throttle_interval": number, "throttle_retry_limit": integer, "max_query_depth": integer,
		"date_created": str, "expires": integer, "quota_max": integer, "quota_renews": integer,
		"quota_remaining": integer, "quota_renewal_rate": integer,
		"access_rights": {Type: jsonstrict.Map, Elem: accessShape},
		"org_id":        str, "oauth_client_id": str, "oauth_keys": {Type: jsonstrict.Map, Elem: str},
		"certificate": str, "basic_auth_data": object, "jwt_data": object, "hmac_enabled": boolean,
		"enable_http_signature_validation": boolean, "hmac_string": str, "rsa_certificate_id": str,
		"is_inactive": boolean, "apply_policy_id": str, "apply_policies": strings,
		"data_expires": integer, "monitor": object, "enable_detail_recording": boolean,
		"enable_detailed_recording": boolean, "meta_data": free, "tags": strings, "alias": str,
		"last_updated": str, "id_extractor_deadline": integer, "session_lifetime": integer,
	})
)

// members is an object shape with the given members (others: any value).
func members(m map[string]*jsonstrict.Shape) *jsonstrict.Shape {
	i := 0
	fields := map[string]int{}
	for k := range m {
		i++
		fields[k] = i
	}
	return &jsonstrict.Shape{Type: jsonstrict.Object, Member: func(k string) (*jsonstrict.Shape, int) {
		return m[k], fields[k]
	}}
}

// session is what management reads of a session.
type session struct {
	AccessRights map[string]struct {
		APIID string `json:"api_id"`
	} `json:"access_rights"`
	ApplyPolicies []string `json:"apply_policies"`
	ApplyPolicyID string   `json:"apply_policy_id"`
	Alias         string   `json:"alias"`
	BasicAuth     *struct {
		Password string `json:"password"`
	} `json:"basic_auth_data"`
}

// parseSession checks body against the session's shape and reads it.
func parseSession(body []byte) (session, error) {
	if err := jsonstrict.Check(body, sessionShape); err != nil {
		return session{}, badRequest(jsonstrict.First(err).Error())
	}
	var s session
	if err := json.Unmarshal(body, &s); err != nil {
		return session{}, badRequest("the request body is not a session: " + err.Error())
	}
	for id, a := range s.AccessRights {
		if a.APIID != "" && a.APIID != id {
			return session{}, badRequest("access_rights." + id + ".api_id: " + strconv.Quote(a.APIID) + " is not the API it is listed under")
		}
	}
	return s, nil
}

// apis are the API IDs of the session's access_rights, sorted.
func (s session) apis() []string {
	out := make([]string, 0, len(s.AccessRights))
	for id := range s.AccessRights {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// policies are the policies the session applies, sorted, once each.
func (s session) policies() []string {
	out := slices.Clone(s.ApplyPolicies)
	if s.ApplyPolicyID != "" {
		out = append(out, s.ApplyPolicyID)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
