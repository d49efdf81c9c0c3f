package hdfs

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	gohdfs "github.com/colinmarc/hdfs/v2"

	"github.com/stowage/stowage/fsbackend"
)

// shortTicket is how long the KDC of testdata/kdc lets tickets of
// short/localhost live (addprinc -maxlife 10s, not renewable).
const shortTicket = 10 * time.Second

// TestKerberosRealTicketRenewal logs in as a principal whose tickets live
// 10 seconds and keeps working past that: the same FS writes and reads,
// and the same logged-in client opens a new NameNode connection, which
// needs a valid TGT to get a service ticket. gokrb5 renews the TGT at 5/6
// of its life (a new AS exchange from the keytab when it is not
// renewable), and again on demand when it is about to expire.
func TestKerberosRealTicketRenewal(t *testing.T) {
	addr, conf, dir := os.Getenv("STOWAGE_TEST_HDFS_KRB"), os.Getenv("STOWAGE_TEST_KDC_KRB5CONF"), os.Getenv("STOWAGE_TEST_KDC_DIR")
	if addr == "" || conf == "" || dir == "" {
		t.Skip("STOWAGE_TEST_HDFS_KRB, STOWAGE_TEST_KDC_KRB5CONF or STOWAGE_TEST_KDC_DIR is not set: start the Kerberos fixture with eval \"$(bash testdata/kdc/start.sh)\"; eval \"$(bash testdata/hdfs/start.sh kerberos)\"")
	}
	p := fsbackend.Properties{
		"fs.defaultFS":           "hdfs://" + addr,
		"kerberosPrincipal":      "short/localhost@STOWAGE.TEST",
		"kerberosKeytabFilePath": filepath.Join(dir, "short.keytab"),
		KeyKrb5Path:              conf, // the key this time; the other tests use KRB5_CONFIG
		"seatunnel.hadoop.dfs.namenode.kerberos.principal": "hdfs/localhost@STOWAGE.TEST",
		"seatunnel.hadoop.dfs.data.transfer.protection":    "authentication",
		KeyDisableCache: "true",
	}
	ctx := context.Background()
	f, err := Open(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	base := "stowage-test/renewal-" + time.Now().Format("150405.000000000")
	if err := fsbackend.WriteFile(ctx, f, base+"/before", []byte("before")); err != nil {
		t.Fatal(err)
	}
	cfg, err := ParseProperties(p)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := cfg.Kerberos.kerberosClient()
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Destroy()

	time.Sleep(shortTicket + shortTicket/2) // past the first TGT's end

	if err := fsbackend.WriteFile(ctx, f, base+"/after", []byte("after")); err != nil {
		t.Fatalf("write after the first ticket expired: %v", err)
	}
	if got, err := fsbackend.ReadFile(ctx, f, base+"/before"); err != nil || !bytes.Equal(got, []byte("before")) {
		t.Fatalf("read after the first ticket expired: %q, %v", got, err)
	}
	co := cfg.ClientOptions()
	co.KerberosClient = kc
	c, err := gohdfs.NewClient(co)
	if err != nil {
		t.Fatalf("new NameNode connection with the client logged in %v ago: %v", shortTicket*3/2, err)
	}
	defer c.Close()
	if _, err := c.Stat("/" + base + "/after"); err != nil {
		t.Fatalf("Stat on a new NameNode connection after the first ticket expired: %v", err)
	}
}
