package secure

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestParseJAAS(t *testing.T) {
	for _, tc := range []struct {
		in         string
		user, pass string
		err        string
	}{
		{`org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="s3cr=t;x";`, "alice", "s3cr=t;x", ""},
		{"org.apache.kafka.common.security.plain.PlainLoginModule required\n  username=alice\n  password=\"with \\\"quote\\\"\" ;", "alice", `with "quote"`, ""},
		{`PlainLoginModule optional password="p" username="u";`, "u", "p", ""},
		{`org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="x"`, "", "", "must end with ';'"},
		{`org.apache.kafka.common.security.plain.PlainLoginModule maybe username="alice" password="x";`, "", "", "flag"},
		{`org.apache.kafka.common.security.plain.PlainLoginModule required username="alice";`, "", "", "username and password"},
		{`org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="x`, "", "", "unterminated"},
		{`org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="x";`, "", "", "needs a PlainLoginModule"},
		{`a.PlainLoginModule required username="u" password="p"; b.PlainLoginModule required;`, "", "", "exactly one"},
	} {
		s := Settings{SecurityProtocol: "SASL_SSL", SASLMechanism: "PLAIN", SASLJAASConfig: tc.in}
		user, pass, err := s.credentials()
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.in, err, tc.err)
			}
			if err != nil && strings.Contains(err.Error(), `"x"`) {
				t.Errorf("%q: error shows the password: %v", tc.in, err)
			}
			continue
		}
		if err != nil || user != tc.user || pass != tc.pass {
			t.Errorf("%q: got %q %q %v", tc.in, user, pass, err)
		}
	}
}

func TestStringHidesSecrets(t *testing.T) {
	s := Settings{
		SecurityProtocol:               "SASL_SSL",
		SSLTruststorePassword:          "secret-1",
		SSLKeystorePassword:            "secret-2",
		SSLKeyPassword:                 "secret-3",
		SSLKeystoreKey:                 "secret-4",
		SASLJAASConfig:                 `x.PlainLoginModule required username="u" password="secret-5";`,
		SASLPassword:                   "secret-6",
		ZooKeeperAuth:                  "zk:secret-7",
		ZooKeeperSSLTruststorePassword: "secret-8",
		ZooKeeperSSLKeystorePassword:   "secret-9",
		SASLUsername:                   "visible-user",
	}
	for _, out := range []string{s.String(), fmt.Sprintf("%v", s), fmt.Sprintf("%+v", s), fmt.Sprintf("%#v", s), fmt.Sprint(&s)} {
		if strings.Contains(out, "secret-") {
			t.Errorf("output shows a secret: %s", out)
		}
		if !strings.Contains(out, "visible-user") || !strings.Contains(out, Hidden) {
			t.Errorf("output misses the user or the marker: %s", out)
		}
	}
}

func TestValidate(t *testing.T) {
	keys := func(s Settings) []string {
		var out []string
		for _, e := range s.Validate().(interface{ Unwrap() []error }).Unwrap() {
			var ke *KeyError
			if !errors.As(e, &ke) {
				t.Fatalf("not a KeyError: %v", e)
			}
			out = append(out, ke.Key)
		}
		return out
	}
	if err := (Settings{}).Validate(); err != nil {
		t.Fatalf("zero settings: %v", err)
	}
	got := keys(Settings{
		SecurityProtocol:                   "TLS",
		SSLTruststoreType:                  "JKS",
		SSLEndpointIdentificationAlgorithm: new("ldaps"),
		SSLCertificateLocation:             "c.pem",
		ZooKeeperSetACL:                    true,
	})
	want := []string{"security.protocol", "ssl.truststore.type", "ssl.certificate.location", "ssl.endpoint.identification.algorithm", "zookeeper.set.acl"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("keys %v, want %v", got, want)
	}
	got = keys(Settings{SecurityProtocol: "SASL_PLAINTEXT"})
	if strings.Join(got, ",") != "sasl.mechanism" {
		t.Errorf("GSSAPI default: %v", got)
	}
	got = keys(Settings{SecurityProtocol: "SASL_PLAINTEXT", SASLMechanism: "scram-sha-256"})
	if strings.Join(got, ",") != "sasl.jaas.config" {
		t.Errorf("no credentials: %v", got)
	}
	got = keys(Settings{SecurityProtocol: "SASL_SSL", SASLMechanism: "OAUTHBEARER"})
	if strings.Join(got, ",") != "sasl.mechanism" {
		t.Errorf("OAUTHBEARER without a provider: %v", got)
	}
}

func TestZooKeeperAuthFromEnvironment(t *testing.T) {
	t.Setenv(ZooKeeperAuthEnv, "bob:pw")
	s := Settings{ZooKeeperSetACL: true}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if a := ZooKeeperCredentials(s); len(a) != 1 || string(a[0].Secret) != "bob:pw" || a[0].Scheme != "digest" {
		t.Fatalf("credentials %v", a)
	}
	t.Setenv(ZooKeeperAuthEnv, "nocolon")
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), ZooKeeperAuthEnv) || strings.Contains(err.Error(), "nocolon") {
		t.Fatalf("bad env value: %v", err)
	}
}

func TestSetProperties(t *testing.T) {
	var s Settings
	err := s.SetProperties(map[string]string{
		"security.protocol":                            " SASL_SSL ",
		"ssl.ca.location":                              "/ca.pem",
		"sasl.mechanisms":                              "PLAIN",
		"sasl.username":                                "u",
		"sasl.password":                                "p",
		"ssl.endpoint.identification.algorithm":        "",
		"zookeeper.set.acl":                            "TRUE",
		"zookeeper.ssl.endpoint.identification.enable": "false",
	})
	if err != nil {
		t.Fatal(err)
	}
	if s.SecurityProtocol != "SASL_SSL" || s.SSLTruststoreLocation != "/ca.pem" || s.SASLMechanism != "PLAIN" ||
		s.SSLEndpointIdentificationAlgorithm == nil || *s.SSLEndpointIdentificationAlgorithm != "" || !s.ZooKeeperSetACL ||
		*s.ZooKeeperSSLEndpointIdentificationEnable {
		t.Fatalf("settings %v", s)
	}
	var back Settings
	if err := back.SetProperties(s.Properties()); err != nil || back.String() != s.String() || back.SASLPassword != "p" {
		t.Fatalf("round trip: %v %v", back, err)
	}
	err = new(Settings).SetProperties(map[string]string{"ssl.ca.location": "a", "ssl.truststore.location": "b", "zookeeper.set.acl": "yes", "zookeeper.auth": "u:p"})
	if err == nil || !strings.Contains(err.Error(), "ssl.ca.location") || !strings.Contains(err.Error(), "zookeeper.set.acl") {
		t.Fatalf("errors: %v", err)
	}
}

// TestEncryptedPEMKey reads keys that openssl encrypted, as Kafka's PEM key
// stores hold them.
func TestEncryptedPEMKey(t *testing.T) {
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("openssl not installed")
	}
	dir := t.TempDir()
	key, cert := filepath.Join(dir, "key.pem"), filepath.Join(dir, "cert.pem")
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("openssl", args...).CombinedOutput(); err != nil {
			t.Fatalf("openssl %v: %v\n%s", args, err, out)
		}
	}
	run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=client")
	for _, v := range []string{"aes256", "aes128"} {
		enc := filepath.Join(dir, "enc-"+v+".pem")
		run("pkcs8", "-topk8", "-v2", v, "-in", key, "-out", enc, "-passout", "pass:kpw")
		if _, err := readKeyPair(cert, enc, "kpw"); err != nil {
			t.Errorf("%s: %v", v, err)
		}
		if _, err := readKeyPair(cert, enc, "wrong"); err == nil || !strings.Contains(err.Error(), "ssl.key.password") {
			t.Errorf("%s with a wrong password: %v", v, err)
		}
		if _, err := readKeyPair(cert, enc, ""); err == nil || !strings.Contains(err.Error(), "ssl.key.password is not set") {
			t.Errorf("%s without a password: %v", v, err)
		}
	}
	if _, err := readKeyPair(cert, key, ""); err != nil {
		t.Errorf("plain key: %v", err)
	}
	if _, err := readKeyPair(cert, filepath.Join(dir, "none.pem"), ""); err == nil || !strings.Contains(err.Error(), "ssl.key.location") {
		t.Errorf("missing key: %v", err)
	}
	_ = os.Remove(key)
}

// TestStringListsEveryField: String, which names each field explicitly,
// prints every field of Settings, in the order of their declaration, and
// hides exactly the fields whose property is secret; a field added to
// Settings and not to String fails here. The expected text is built by
// reflection, field by field: one field set at a time, then all of them.
func TestStringListsEveryField(t *testing.T) {
	typ := reflect.TypeFor[Settings]()
	// set sets field i of s to a value that is not zero.
	set := func(s *Settings, i int) {
		f := reflect.ValueOf(s).Elem().Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString("v-" + typ.Field(i).Name)
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
		case reflect.Interface:
			f.Set(reflect.ValueOf(TokenProvider(fixedProvider{})))
		default:
			t.Fatalf("field %s: kind %s not handled by this test", typ.Field(i).Name, f.Kind())
		}
	}
	// want is how String shows field i, set by set.
	want := func(i int) string {
		var one Settings
		set(&one, i)
		f := reflect.ValueOf(one).Field(i)
		name := typ.Field(i).Name
		switch {
		case f.Kind() == reflect.String && secretField(t, one, f.String()):
			return name + ":" + Hidden
		case f.Kind() == reflect.String:
			return name + ":" + strconv.Quote(f.String())
		case f.Kind() == reflect.Bool:
			return name + ":true"
		case f.Kind() == reflect.Pointer && f.Elem().Kind() == reflect.String:
			return name + `:""`
		case f.Kind() == reflect.Pointer && f.Elem().Kind() == reflect.Bool:
			return name + ":false"
		default:
			return name + ":set"
		}
	}
	var all Settings
	var items []string
	for i := range typ.NumField() {
		var one Settings
		set(&one, i)
		if got := one.String(); got != "{"+want(i)+"}" {
			t.Errorf("String of %s alone = %s, want {%s}", typ.Field(i).Name, got, want(i))
		}
		set(&all, i)
		items = append(items, want(i))
	}
	if got, w := all.String(), "{"+strings.Join(items, " ")+"}"; got != w {
		t.Errorf("String of every field =\n%s\nwant\n%s", got, w)
	}
	if got := (Settings{}).String(); got != "{}" {
		t.Errorf("String of the zero Settings = %s, want {}", got)
	}
}

// secretField reports whether the property that s, with one string field
// set to v, writes v under is secret.
func secretField(t *testing.T, s Settings, v string) bool {
	t.Helper()
	for key, pv := range s.Properties() {
		if pv == v {
			return IsSecretKey(key)
		}
	}
	t.Fatalf("no property holds %q", v)
	return false
}

type fixedProvider struct{}

func (fixedProvider) Token() (*AccessToken, error) { return &AccessToken{Token: "t"}, nil }
