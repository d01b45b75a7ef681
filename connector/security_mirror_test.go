package connector

import (
	"errors"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/secure"
)

// TestSecurityConfigMirrorsSettings: SecurityConfig, which applications
// set, and internal/secure's Settings, which the connector hands on, have
// the same fields in the same order with the same types, the token
// provider's aside, and the endpoint identification options, whose typed
// values (the zero value the default) internal/secure keeps as optional
// values (nil the default); a field added to one and not the other fails
// here, and one added to both but not to the conversion (settings,
// setSettings) fails TestSecurityConfigCopiesEveryField.
func TestSecurityConfigMirrorsSettings(t *testing.T) {
	ours := reflect.TypeFor[SecurityConfig]()
	theirs := reflect.TypeFor[secure.Settings]()
	require.Equal(t, theirs.NumField(), ours.NumField())
	for i := range ours.NumField() {
		o, s := ours.Field(i), theirs.Field(i)
		require.Equal(t, s.Name, o.Name, "field %d", i)
		if o.Name == "TokenProvider" || converted[o.Name] {
			continue
		}
		require.Equal(t, s.Type, o.Type, o.Name)
	}
}

// TestSecurityConfigCopiesEveryField: every field set in a SecurityConfig
// arrives in the Settings the connector hands on, and back (the token
// provider stays the application's). The conversion names each field;
// this test finds them by reflection, so it sees a field the conversion
// forgets.
func TestSecurityConfigCopiesEveryField(t *testing.T) {
	var sc SecurityConfig
	v := reflect.ValueOf(&sc).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString("v-" + v.Type().Field(i).Name)
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
		}
	}
	sc.SSLEndpointIdentificationAlgorithm = EndpointIdentificationNone
	sc.ZooKeeperSSLEndpointIdentificationEnable = ZooKeeperEndpointIdentificationOff
	sc.TokenProvider = fixedToken{tok: &AccessToken{Token: "jwt", Extensions: map[string]string{"k": "v"}}}
	sc.TLS.ServerName = "broker"

	s := sc.settings()
	sv := reflect.ValueOf(s)
	for i := range v.NumField() {
		name := v.Type().Field(i).Name
		if name == "TokenProvider" || converted[name] {
			continue
		}
		require.False(t, sv.FieldByName(name).IsZero(), "%s was not copied", name)
		require.Equal(t, v.Field(i).Interface(), sv.FieldByName(name).Interface(), name)
	}
	require.Equal(t, new(""), s.SSLEndpointIdentificationAlgorithm)
	require.Equal(t, new(false), s.ZooKeeperSSLEndpointIdentificationEnable)
	require.Nil(t, SecurityConfig{}.settings().SSLEndpointIdentificationAlgorithm, "the default is nil")
	require.Nil(t, SecurityConfig{}.settings().ZooKeeperSSLEndpointIdentificationEnable, "the default is nil")
	tok, err := s.TokenProvider.Token()
	require.NoError(t, err)
	require.Equal(t, &secure.AccessToken{Token: "jwt", Extensions: map[string]string{"k": "v"}}, tok)

	var back SecurityConfig
	back.TokenProvider = sc.TokenProvider
	require.Empty(t, back.setSettings(s))
	require.Equal(t, sc, back)
	s.SSLEndpointIdentificationAlgorithm = new("HTTPS")
	require.Empty(t, back.setSettings(s))
	require.Equal(t, EndpointIdentificationHTTPS, back.SSLEndpointIdentificationAlgorithm)
	s.SSLEndpointIdentificationAlgorithm = new("http")
	errs := back.setSettings(s)
	require.Len(t, errs, 1)
	require.ErrorContains(t, errs[0], `invalid ssl.endpoint.identification.algorithm "http"`)

	failing := SecurityConfig{TokenProvider: fixedToken{err: errors.New("no token today")}}
	_, err = failing.settings().TokenProvider.Token()
	require.EqualError(t, err, "no token today")
}

type fixedToken struct {
	tok *AccessToken
	err error
}

func (f fixedToken) Token() (*AccessToken, error) { return f.tok, f.err }

// converted are the fields of SecurityConfig that settings and setSettings
// convert rather than copy.
var converted = map[string]bool{
	"SSLEndpointIdentificationAlgorithm":       true,
	"ZooKeeperSSLEndpointIdentificationEnable": true,
}
