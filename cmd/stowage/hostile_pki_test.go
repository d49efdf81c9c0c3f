package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// testCA writes PEM files of a certificate authority and of member
// certificates it issues for 127.0.0.1.
type testCA struct {
	dir, name string
	key       *ecdsa.PrivateKey
	cert      *x509.Certificate
	file      string
}

func newTestCA(t *testing.T, dir, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	ca := &testCA{dir: dir, name: name, key: key, cert: cert}
	ca.file = ca.write(t, name+"-ca.pem", "CERTIFICATE", der)
	return ca
}

func (ca *testCA) write(t *testing.T, name, typ string, der []byte) string {
	t.Helper()
	f := filepath.Join(ca.dir, name)
	if err := os.WriteFile(f, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// sslBlock is the network.ssl block of a member with a certificate from
// ca and the cluster secret in secretFile.
func (ca *testCA) sslBlock(t *testing.T, member, secretFile string) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: member},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:    []string{member}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, key.Public(), ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	cert := ca.write(t, ca.name+"-"+member+".pem", "CERTIFICATE", der)
	keyFile := ca.write(t, ca.name+"-"+member+"-key.pem", "PRIVATE KEY", kder)
	return "    ssl:\n      enabled: true\n      properties:\n" +
		"        keyCertChainFile: " + strconv.Quote(cert) + "\n" +
		"        keyFile: " + strconv.Quote(keyFile) + "\n" +
		"        trustCertCollectionFile: " + strconv.Quote(ca.file) + "\n" +
		"        cluster-secret-file: " + strconv.Quote(secretFile) + "\n"
}

// TestHostileMemberOtherCA: member processes with certificates from the
// cluster's CA; a process with the cluster secret (so memberlist takes it
// in) but a certificate from another CA is refused by the transports,
// gets no partition, and the cluster serves on.
func TestHostileMemberOtherCA(t *testing.T) {
	dir := t.TempDir()
	base, err := freeMemberPorts(10)
	if err != nil {
		t.Fatal(err)
	}
	secret := writeSecret(t, dir, "cluster.secret", "0f1e2d3c4b5a69788796a5b4c3d2e1f0-pki")
	ca, other := newTestCA(t, dir, "cluster"), newTestCA(t, dir, "other")
	type result struct {
		c   *child
		err error
	}
	started := make(chan result, 2)
	for i := range 2 {
		blk := ca.sslBlock(t, "m"+strconv.Itoa(i+1), secret)
		go func() {
			c, err := guardedMember(t, dir, "data", i+1, netSpec{Port: base, Ports: 10, MinSize: 2, SSL: blk})
			started <- result{c, err}
		}()
	}
	var ms []*child
	for range 2 {
		r := <-started
		if r.err != nil {
			t.Fatal(r.err)
		}
		ms = append(ms, r.c)
	}
	for _, m := range ms {
		if _, err := m.waitHealthy(context.Background(), 2*time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	if code, body := httpDo(t, http.MethodPut, "http://"+ms[0].addr+"/v1/maps/engine_jobs/entries/k1", "v1"); code != http.StatusNoContent {
		t.Fatalf("put: %d %s", code, body)
	}

	intruder, err := guardedMember(t, dir, "data", 3, netSpec{Port: base, Ports: 10, MinSize: 1, SSL: other.sslBlock(t, "m3", secret)})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Second) // the intruder joins the gossip, tables are made and published
	// It holds the gossip key: the membership view takes it in, which is
	// what this test is about.
	if got := clusterMembers(t, intruder); len(got) != 3 {
		t.Fatalf("the intruder sees %v; want the 3 processes (it holds the gossip key)", got)
	}
	for round := range 3 {
		for i, m := range ms {
			key := "k-" + strconv.Itoa(round) + "-" + strconv.Itoa(i)
			if code, body := httpDo(t, http.MethodPut, "http://"+m.addr+"/v1/maps/engine_jobs/entries/"+key, "v"); code != http.StatusNoContent {
				t.Errorf("put %s through member %d with the intruder about: %d %s", key, i+1, code, body)
			}
		}
	}
	for i, m := range ms {
		if code, body := httpDo(t, http.MethodGet, "http://"+m.addr+"/v1/maps/engine_jobs/entries/k1", ""); code != http.StatusOK || !strings.Contains(body, "v1") {
			t.Errorf("get through member %d: %d %s", i+1, code, body)
		}
		resp, err := http.Get("http://" + m.addr + "/v1/cluster")
		if err != nil {
			t.Fatal(err)
		}
		var info struct {
			PartitionsPerMember map[string]int `json:"partitions_per_member"`
		}
		decodeJSON(t, resp, &info)
		if len(info.PartitionsPerMember) != 2 {
			t.Errorf("member %d: partitions per member %v, want the 2 members only", i+1, info.PartitionsPerMember)
		}
	}
}

func decodeJSON(t *testing.T, resp *http.Response, v any) {
	t.Helper()
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}
