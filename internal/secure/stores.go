package secure

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"

	"software.sslmate.com/src/go-pkcs12"
)

// storeKeys names the properties of one trust or key store, for errors.
type storeKeys struct {
	location, typ, password string
}

var (
	truststoreKeys   = storeKeys{"ssl.truststore.location", "ssl.truststore.type", "ssl.truststore.password"}
	keystoreKeys     = storeKeys{"ssl.keystore.location", "ssl.keystore.type", "ssl.keystore.password"}
	zkTruststoreKeys = storeKeys{"zookeeper.ssl.truststore.location", "zookeeper.ssl.truststore.type", "zookeeper.ssl.truststore.password"}
	zkKeystoreKeys   = storeKeys{"zookeeper.ssl.keystore.location", "zookeeper.ssl.keystore.type", "zookeeper.ssl.keystore.password"}
)

// checkStoreType returns why typ is not a store type this package reads,
// or "".
func checkStoreType(typ string) string {
	switch strings.ToUpper(typ) {
	case "", StoreTypePEM, StoreTypePKCS12:
		return ""
	case StoreTypeJKS:
		return "JKS stores cannot be read; convert the store with keytool -importkeystore -deststoretype PKCS12, or export PEM files, and set PKCS12 or PEM"
	}
	return "must be PEM or PKCS12"
}

// readStore reads the file of a store and decides its type: the given one,
// or a guess from the contents (PEM text, else PKCS12).
func readStore(path, typ string, keys storeKeys) ([]byte, string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "", &KeyError{Key: keys.location, Value: path, Reason: "cannot read the file: " + errorReason(err)}
	}
	typ = strings.ToUpper(typ)
	if typ == "" {
		switch {
		case bytes.Contains(data, []byte("-----BEGIN ")):
			typ = StoreTypePEM
		case bytes.HasPrefix(data, []byte{0xFE, 0xED, 0xFE, 0xED}):
			return nil, "", &KeyError{Key: keys.typ, Value: "", Reason: "the file at " + path + " is a JKS store; " + checkStoreType(StoreTypeJKS)}
		default:
			typ = StoreTypePKCS12
		}
	}
	return data, typ, nil
}

// errorReason is the text of a file error without the path, which the
// KeyError already shows.
func errorReason(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// loadTrustStore returns the certificates of a trust store file.
func loadTrustStore(path, typ, password string, keys storeKeys) ([]*x509.Certificate, error) {
	data, typ, err := readStore(path, typ, keys)
	if err != nil {
		return nil, err
	}
	var certs []*x509.Certificate
	switch typ {
	case StoreTypePEM:
		certs, err = parsePEMCertificates(data)
	default:
		certs, err = pkcs12.DecodeTrustStore(data, password)
		if err != nil {
			// A store with a key entry (keytool's default for a CA
			// imported with its key) still carries certificates.
			if _, cert, cas, err2 := pkcs12.DecodeChain(data, password); err2 == nil {
				certs, err = append([]*x509.Certificate{cert}, cas...), nil
			}
		}
		if err != nil {
			return nil, &KeyError{Key: keys.location, Value: path, Reason: "not a PKCS12 trust store, or " + keys.password + " is wrong: " + err.Error()}
		}
	}
	if err != nil {
		return nil, &KeyError{Key: keys.location, Value: path, Reason: err.Error()}
	}
	if len(certs) == 0 {
		return nil, &KeyError{Key: keys.location, Value: path, Reason: "holds no certificate"}
	}
	return certs, nil
}

// parsePEMCertificates returns every CERTIFICATE block of data.
func parsePEMCertificates(data []byte) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			return certs, nil
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("bad certificate: %v", err)
		}
		certs = append(certs, c)
	}
}

// loadKeyStore returns the client certificate of a key store file.
func loadKeyStore(path, typ, password, keyPassword string, keys storeKeys) (tls.Certificate, error) {
	data, typ, err := readStore(path, typ, keys)
	if err != nil {
		return tls.Certificate{}, err
	}
	if typ == StoreTypePEM {
		cert, err := pemKeyPair(data, data, keyPassword)
		if err != nil {
			return tls.Certificate{}, &KeyError{Key: keys.location, Value: path, Reason: err.Error()}
		}
		return cert, nil
	}
	key, leaf, cas, err := pkcs12.DecodeChain(data, password)
	if err != nil {
		return tls.Certificate{}, &KeyError{Key: keys.location, Value: path, Reason: "not a PKCS12 key store, or " + keys.password + " is wrong: " + err.Error()}
	}
	cert := tls.Certificate{PrivateKey: key, Leaf: leaf, Certificate: [][]byte{leaf.Raw}}
	for _, ca := range cas {
		cert.Certificate = append(cert.Certificate, ca.Raw)
	}
	return cert, nil
}

// pemKeyPair builds a certificate from PEM certificates and a PEM private
// key, which may be encrypted with password (PKCS#8 with PBES2, as
// Kafka's PEM stores use, or the legacy OpenSSL format).
func pemKeyPair(certPEM, keyPEM []byte, password string) (tls.Certificate, error) {
	certs, err := parsePEMCertificates(certPEM)
	if err != nil {
		return tls.Certificate{}, err
	}
	if len(certs) == 0 {
		return tls.Certificate{}, errors.New("holds no certificate")
	}
	key, err := pemPrivateKey(keyPEM, password)
	if err != nil {
		return tls.Certificate{}, err
	}
	cert := tls.Certificate{PrivateKey: key, Leaf: certs[0]}
	for _, c := range certs {
		cert.Certificate = append(cert.Certificate, c.Raw)
	}
	if !publicKeysMatch(certs[0].PublicKey, key) {
		return tls.Certificate{}, errors.New("the private key does not belong to the first certificate")
	}
	return cert, nil
}

// pemPrivateKey returns the first private key of data.
func pemPrivateKey(data []byte, password string) (crypto.PrivateKey, error) {
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			return nil, errors.New("holds no private key")
		}
		switch block.Type {
		case "PRIVATE KEY":
			return x509.ParsePKCS8PrivateKey(block.Bytes)
		case "RSA PRIVATE KEY", "EC PRIVATE KEY":
			der := block.Bytes
			//nolint:staticcheck // legacy OpenSSL encryption, still found in the wild
			if x509.IsEncryptedPEMBlock(block) {
				if password == "" {
					return nil, errors.New("the private key is encrypted and ssl.key.password is not set")
				}
				var err error
				//nolint:staticcheck // see above
				if der, err = x509.DecryptPEMBlock(block, []byte(password)); err != nil {
					return nil, errors.New("cannot decrypt the private key: ssl.key.password is wrong")
				}
			}
			if block.Type == "EC PRIVATE KEY" {
				return x509.ParseECPrivateKey(der)
			}
			return x509.ParsePKCS1PrivateKey(der)
		case "ENCRYPTED PRIVATE KEY":
			if password == "" {
				return nil, errors.New("the private key is encrypted and ssl.key.password is not set")
			}
			der, err := decryptPKCS8(block.Bytes, []byte(password))
			if err != nil {
				return nil, err
			}
			key, err := x509.ParsePKCS8PrivateKey(der)
			if err != nil {
				// The padding matched by chance; the password is wrong.
				return nil, errKeyPassword
			}
			return key, nil
		}
	}
}

// publicKeysMatch reports whether key is the private half of pub.
func publicKeysMatch(pub any, key crypto.PrivateKey) bool {
	type equaler interface{ Equal(crypto.PublicKey) bool }
	switch k := key.(type) {
	case *rsa.PrivateKey:
		return k.PublicKey.Equal(pub)
	case *ecdsa.PrivateKey:
		return k.PublicKey.Equal(pub)
	case ed25519.PrivateKey:
		return k.Public().(equaler).Equal(pub)
	}
	return false
}
