package cluster

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// writeCerts makes a CA and a certificate it signed for 127.0.0.1 (every
// node of the test uses it), and one signed by another CA; it returns
// their files.
func writeCerts(t *testing.T, dir string) (ca, cert, key, strangerCert, strangerKey string) {
	t.Helper()
	newCA := func(name string) (*x509.Certificate, *ecdsa.PrivateKey) {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
		if err != nil {
			t.Fatal(err)
		}
		c, _ := x509.ParseCertificate(der)
		return c, k
	}
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	leaf := func(ca *x509.Certificate, caKey *ecdsa.PrivateKey, name string) (string, string) {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: name},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
			KeyUsage:    x509.KeyUsageDigitalSignature}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kd, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return write(name+".pem", "CERTIFICATE", der), write(name+"-key.pem", "EC PRIVATE KEY", kd)
	}
	c, ck := newCA("odin test cluster CA")
	ca = write("ca.pem", "CERTIFICATE", c.Raw)
	cert, key = leaf(c, ck, "node")
	other, ok := newCA("another CA")
	strangerCert, strangerKey = leaf(other, ok, "stranger")
	return
}

// TestClusterTLS: a fleet whose wire is mutual TLS (every node with the
// cluster CA's certificate) places and runs sessions as a plaintext one
// does; a client with no certificate, or one from another CA, is refused
// by a worker's wire, and so is plaintext.
func TestClusterTLS(t *testing.T) {
	longCluster(t)
	if testing.Short() {
		t.Skip("starts three odin processes")
	}
	f := newFleet(t, helloScript(4), "")
	ca, cert, key, strangerCert, strangerKey := writeCerts(t, f.dir)
	f.nodeArgs = []string{"--cluster-tls-cert", cert, "--cluster-tls-key", key, "--cluster-ca", ca}
	w := f.worker("worker-1")
	fr := f.front()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	code, s, err := fr.call("POST", "/v1/sessions", map[string]string{"project": f.project})
	if err != nil || code != http.StatusCreated {
		t.Fatalf("create session: %d %v %v", code, s, err)
	}
	id := s["id"].(string)
	if st, ans, err := fr.turn(ctx, id, "hello"); err != nil || st != "done" || ans != "hi from the cluster" {
		t.Fatalf("turn over TLS: %s %q %v", st, ans, err)
	}
	if c := f.owners(ctx, []string{id})[id]; c.Owner != w.member {
		t.Fatalf("session on %s, want the worker %s", c.Owner, w.member)
	}

	pool := x509.NewCertPool()
	pem, _ := os.ReadFile(ca)
	pool.AppendCertsFromPEM(pem)
	stranger, err := tls.LoadX509KeyPair(strangerCert, strangerKey)
	if err != nil {
		t.Fatal(err)
	}
	for name, cfg := range map[string]*tls.Config{
		"no certificate":           {RootCAs: pool, NextProtos: []string{"h2"}},
		"another CA's certificate": {RootCAs: pool, NextProtos: []string{"h2"}, Certificates: []tls.Certificate{stranger}},
	} {
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", w.addr, cfg)
		if err == nil {
			// TLS 1.3: the server's verdict on the client's certificate
			// comes with the first read.
			_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
			_, err = conn.Write([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"))
			if err == nil {
				_, err = conn.Read(make([]byte, 64))
			}
			conn.Close()
		}
		if err == nil {
			t.Errorf("%s: the worker's wire accepted the connection", name)
		}
	}
	conn, err := net.DialTimeout("tcp", w.addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	_, _ = conn.Write([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00"))
	if n, err := conn.Read(make([]byte, 64)); err == nil && n > 0 {
		t.Errorf("the worker's wire answered plaintext HTTP/2 (%d bytes)", n)
	}
	conn.Close()
}
