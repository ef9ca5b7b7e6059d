package convert

// The OAS → classic direction of authentication (security.go): server.authentication and the OpenAPI security
// schemes become the classic auth flags, auth_configs and each method's settings.

// authenticationToClassic fills the classic authentication. Without server.authentication the API is keyless.
func authenticationToClassic(api *classicAPI, a *xAuthentication, comps *components) {
	if a == nil {
		api.UseKeyless = true
		return
	}
	api.UseKeyless = !a.Enabled
	api.StripAuthData, api.BaseIdentityProvidedBy = a.StripAuthorizationData, a.BaseIdentityProvider
	if kl := a.CustomKeyLifetime; kl != nil {
		api.SessionLifetimeRespectsKeyExpiration = kl.RespectValidity
		if kl.Enabled {
			api.SessionLifetime = int64(durationSeconds(kl.Value))
		}
	}
	api.AuthConfigs = map[string]authConfig{}
	if ss := a.SecuritySchemes; ss != nil {
		tokenToClassic(api, ss.AuthToken)
		jwtToClassic(api, ss.JWT)
		basicToClassic(api, ss.Basic)
		oauthToClassic(api, ss.OAuth, comps)
		externalOAuthToClassic(api, ss.ExternalOAuth)
	}
	if h := a.HMAC; h != nil {
		api.EnableSignatureChecking, api.HmacAllowedAlgorithms, api.HmacAllowedClockSkew = h.Enabled, h.AllowedAlgorithms, h.AllowedClockSkew
		api.AuthConfigs[hmacType] = authConfigOf(hmacType, h.xAuthSources)
	}
	oidcToClassic(api, a.OIDC)
	customAuthToClassic(api, a.Custom)
}

// authConfigOf is the auth config that reads credentials from the sources: the header unless it is off, the
// query parameter and the cookie when they are on, each with its name.
func authConfigOf(name string, s xAuthSources) authConfig {
	ac := authConfig{Name: name, DisableHeader: true}
	if h := s.Header; h != nil {
		ac.DisableHeader, ac.AuthHeaderName = !h.Enabled, h.Name
	}
	if q := s.Query; q != nil {
		ac.UseParam, ac.ParamName = q.Enabled, q.Name
	}
	if c := s.Cookie; c != nil {
		ac.UseCookie, ac.CookieName = c.Enabled, c.Name
	}
	return ac
}

func tokenToClassic(api *classicAPI, t *xToken) {
	if t == nil {
		return
	}
	api.UseStandardAuth = t.Enabled
	ac := authConfigOf(authTokenType, t.xAuthSources)
	ac.UseCertificate = t.EnableClientCertificate
	if s := t.SignatureValidation; s != nil {
		ac.ValidateSignature = s.Enabled
		sig := &ac.Signature
		sig.Algorithm, sig.Header, sig.Secret, sig.AllowedClockSkew, sig.ErrorCode, sig.ErrorMessage =
			s.Algorithm, s.Header, s.Secret, s.AllowedClockSkew, s.ErrorCode, s.ErrorMessage
		if q := s.Query; q != nil {
			sig.UseParam, sig.ParamName = q.Enabled, q.Name
		}
	}
	api.AuthConfigs[authTokenType] = ac
}

func jwtToClassic(api *classicAPI, j *xJWT) {
	if j == nil {
		return
	}
	api.EnableJWT = j.Enabled
	api.AuthConfigs[jwtType] = authConfigOf(jwtType, j.xAuthSources)
	api.JWTSource, api.JWTSigningMethod, api.JWTIdentityBaseField, api.JWTSkipKid = j.Source, j.SigningMethod, j.IdentityBaseField, j.SkipKid
	api.JWTPolicyFieldName, api.JWTClientIDBaseField, api.JWTDefaultPolicies = j.PolicyFieldName, j.ClientBaseField, j.DefaultPolicies
	api.JWTIssuedAtValidationSkew, api.JWTNotBeforeValidationSkew, api.JWTExpiresAtValidationSkew =
		j.IssuedAtValidationSkew, j.NotBeforeValidationSkew, j.ExpiresAtValidationSkew
	api.IDPClientIDMappingDisabled = j.IDPClientIDMappingDisabled
	api.Scopes.JWT = scopesToClassic(j.Scopes)
}

func scopesToClassic(s *xScopes) scopeClaim {
	if s == nil {
		return scopeClaim{}
	}
	out := scopeClaim{ScopeClaimName: s.ClaimName}
	for _, m := range s.ScopeToPolicyMapping {
		if out.ScopeToPolicy == nil {
			out.ScopeToPolicy = map[string]string{}
		}
		out.ScopeToPolicy[m.Scope] = m.PolicyID
	}
	return out
}

func basicToClassic(api *classicAPI, b *xBasic) {
	if b == nil {
		return
	}
	api.UseBasicAuth = b.Enabled
	api.AuthConfigs[basicType] = authConfigOf(basicType, b.xAuthSources)
	ba := &api.BasicAuth
	ba.DisableCaching, ba.CacheTTL = b.DisableCaching, b.CacheTTL
	if e := b.ExtractCredentialsFromBody; e != nil {
		ba.ExtractFromBody, ba.BodyUserRegexp, ba.BodyPasswordRegexp = e.Enabled, e.UserRegexp, e.PasswordRegexp
	}
}

// oauthToClassic reads the allowed grants from the flows of the OpenAPI oauth2 scheme, as Tyk does.
func oauthToClassic(api *classicAPI, o *xOAuth, comps *components) {
	if o == nil {
		return
	}
	api.UseOauth2 = o.Enabled
	api.AuthConfigs[oauthType] = authConfigOf(oauthType, o.xAuthSources)
	m := &api.OauthMeta
	m.AllowedAuthorizeTypes, m.AuthorizeLoginRedirect = o.AllowedAuthorizeTypes, o.AuthLoginRedirect
	if comps != nil {
		if s := comps.SecuritySchemes[oauthType]; s != nil && s.Flows != nil {
			for _, f := range []struct {
				flow  *oauthFlow
				grant string
			}{{s.Flows.AuthorizationCode, "authorization_code"}, {s.Flows.ClientCredentials, "client_credentials"},
				{s.Flows.Password, "password"}, {s.Flows.Implicit, "implicit"}} {
				if f.flow != nil {
					m.AllowedAccessTypes = append(m.AllowedAccessTypes, f.grant)
				}
			}
		}
	}
	if o.RefreshToken {
		m.AllowedAccessTypes = append(m.AllowedAccessTypes, "refresh_token")
	}
	if n := o.Notifications; n != nil {
		api.Notifications = notifications{SharedSecret: n.SharedSecret, OAuthKeyChangeURL: n.OnKeyChangeURL}
	}
}

func externalOAuthToClassic(api *classicAPI, e *xExternalOAuth) {
	if e == nil {
		return
	}
	api.ExternalOAuth.Enabled = e.Enabled
	api.AuthConfigs[externalOAuthType] = authConfigOf(externalOAuthType, e.xAuthSources)
	api.ExternalOAuth.Providers = make([]externalOAuthProvider, len(e.Providers))
	for i, p := range e.Providers {
		out := &api.ExternalOAuth.Providers[i]
		if j := p.JWT; j != nil {
			out.JWT = jwtValidation{Enabled: j.Enabled, SigningMethod: j.SigningMethod, Source: j.Source, IdentityBaseField: j.IdentityBaseField,
				IssuedAtValidationSkew: j.IssuedAtValidationSkew, NotBeforeValidationSkew: j.NotBeforeValidationSkew, ExpiresAtValidationSkew: j.ExpiresAtValidationSkew}
		}
		if in := p.Introspection; in != nil {
			x := &out.Introspection
			x.Enabled, x.URL, x.ClientID, x.ClientSecret, x.IdentityBaseField = in.Enabled, in.URL, in.ClientID, in.ClientSecret, in.IdentityBaseField
			if c := in.Cache; c != nil {
				x.Cache.Enabled, x.Cache.Timeout = c.Enabled, c.Timeout
			}
		}
	}
}

func oidcToClassic(api *classicAPI, o *xOIDC) {
	if o == nil {
		return
	}
	api.UseOpenID = o.Enabled
	api.AuthConfigs[oidcType] = authConfigOf(oidcType, o.xAuthSources)
	api.OpenIDOptions.SegregateByClient = o.SegregateByClientID
	api.Scopes.OIDC = scopesToClassic(o.Scopes)
	api.OpenIDOptions.Providers = make([]openIDProvider, len(o.Providers))
	for i, p := range o.Providers {
		out := &api.OpenIDOptions.Providers[i]
		out.Issuer = p.Issuer
		for _, m := range p.ClientToPolicyMapping {
			if out.ClientIDs == nil {
				out.ClientIDs = map[string]string{}
			}
			out.ClientIDs[m.ClientID] = m.PolicyID
		}
	}
}

// customAuthToClassic: Tyk's gateway picks the Go plugin or the coprocess authentication by the plugin driver.
func customAuthToClassic(api *classicAPI, c *xCustomAuth) {
	if c == nil {
		return
	}
	api.CustomPluginAuthEnabled = c.Enabled
	mw := &api.CustomMiddleware
	api.UseGoPluginAuth = c.Enabled && mw.Driver == "goplugin"
	api.EnableCoprocessAuth = c.Enabled && mw.Driver != "goplugin" && mw.Driver != ""
	api.AuthConfigs[coprocessType] = authConfigOf(coprocessType, c.xAuthSources)
	if cfg := c.Config; cfg != nil {
		mw.AuthCheck = middlewareDefinition{Disabled: !cfg.Enabled, Name: cfg.FunctionName, Path: cfg.Path, RawBodyOnly: cfg.RawBodyOnly, RequireSession: cfg.RequireSession}
		if ex := cfg.IDExtractor; ex != nil {
			id := &mw.IDExtractor
			id.Disabled, id.ExtractFrom, id.ExtractWith = !ex.Enabled, ex.Source, ex.With
			id.ExtractorConfig = idExtractorConfig(ex.Config)
		}
	}
}

func idExtractorConfig(c xIDExtractorConfig) map[string]any {
	m := map[string]any{}
	for k, v := range map[string]string{"header_name": c.HeaderName, "param_name": c.FormParamName, "regex_expression": c.Regexp, "xpath_expression": c.XPathExp} {
		if v != "" {
			m[k] = v
		}
	}
	if c.RegexpMatchIndex != 0 {
		m["regex_match_index"] = float64(c.RegexpMatchIndex)
	}
	return m
}
