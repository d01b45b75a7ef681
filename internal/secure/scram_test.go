package secure

import (
	"crypto/sha256"
	"errors"
	"strings"
	"testing"
)

// TestSCRAMSHA256Vector runs the exchange of RFC 7677 section 3.
func TestSCRAMSHA256Vector(t *testing.T) {
	c := &scramClient{hash: sha256.New}
	if err := c.Begin("user", "pencil", ""); err != nil {
		t.Fatal(err)
	}
	c.nonce = "rOprNGfwEbeRWgbNEkqO"
	c.clientFirstBare = "n=user,r=" + c.nonce
	first, err := c.Step("")
	if err != nil || first != "n,,n=user,r=rOprNGfwEbeRWgbNEkqO" {
		t.Fatalf("client-first %q, %v", first, err)
	}
	final, err := c.Step("r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096")
	want := "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
	if err != nil || final != want {
		t.Fatalf("client-final %q, %v; want %q", final, err, want)
	}
	if c.Done() {
		t.Fatal("done before the server's signature")
	}
	if _, err := c.Step("v=AAAATRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="); err == nil {
		t.Fatal("accepted a wrong server signature")
	}
	c.step = 2
	if _, err := c.Step("v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="); err != nil || !c.Done() {
		t.Fatalf("server-final: %v, done %v", err, c.Done())
	}
}

func TestSCRAMRejectsForeignNonce(t *testing.T) {
	c := &scramClient{hash: sha256.New}
	_ = c.Begin("a=b,c", "pw", "")
	first, _ := c.Step("")
	if want := "n,,n=a=3Db=2Cc,r="; first[:len(want)] != want {
		t.Fatalf("user name not escaped: %q", first)
	}
	if _, err := c.Step("r=othernonce,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"); err == nil {
		t.Fatal("accepted a nonce that does not extend ours")
	}
}

// TestSCRAMRefusesFewIterations: a broker that asks for fewer than 4096
// iterations (RFC 7677's minimum) gets no proof, which would make a
// dictionary attack on the password cheap; 4096 itself is accepted.
func TestSCRAMRefusesFewIterations(t *testing.T) {
	for _, tc := range []struct {
		iter string
		ok   bool
	}{{"1", false}, {"4095", false}, {"4096", true}, {"10000", true}} {
		c := &scramClient{hash: sha256.New}
		if err := c.Begin("user", "pencil", ""); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Step(""); err != nil {
			t.Fatal(err)
		}
		final, err := c.Step("r=" + c.nonce + "server,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=" + tc.iter)
		switch {
		case !tc.ok && err != nil && !errors.Is(err, ErrAuthentication):
			t.Errorf("i=%s: not an authentication failure: %v", tc.iter, err)
		case tc.ok && err != nil:
			t.Errorf("i=%s: %v", tc.iter, err)
		case !tc.ok && err == nil:
			t.Errorf("i=%s: answered %q", tc.iter, final)
		case !tc.ok && !strings.Contains(err.Error(), tc.iter+" iterations") || !tc.ok && !strings.Contains(err.Error(), "minimum of 4096"):
			t.Errorf("i=%s: the error does not name the count and the minimum: %v", tc.iter, err)
		}
	}
}
