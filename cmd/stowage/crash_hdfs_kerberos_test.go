package main

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
)

// TestCrashSIGKILLOnKerberosHDFS is TestCrashSIGKILLOnHDFS on the
// kerberized MiniDFSCluster (testdata/hdfs/start.sh kerberos) with a real
// KDC (testdata/kdc): the member logs in with kerberosPrincipal and
// kerberosKeytabFilePath, krb5.conf comes from KRB5_CONFIG, and neither
// the keytab's bytes nor its hex or base64 form appear in the member's log
// or output.
func TestCrashSIGKILLOnKerberosHDFS(t *testing.T) {
	nn, krb5, kdcDir := os.Getenv("STOWAGE_TEST_HDFS_KRB"), os.Getenv("STOWAGE_TEST_KDC_KRB5CONF"), os.Getenv("STOWAGE_TEST_KDC_DIR")
	if nn == "" || krb5 == "" || kdcDir == "" {
		t.Skip(`STOWAGE_TEST_HDFS_KRB, STOWAGE_TEST_KDC_KRB5CONF or STOWAGE_TEST_KDC_DIR is not set: start the Kerberos fixture with eval "$(bash testdata/kdc/start.sh)"; eval "$(bash testdata/hdfs/start.sh kerberos)"`)
	}
	t.Setenv("KRB5_CONFIG", krb5)
	keytab := filepath.Join(kdcDir, "stowage.keytab")
	logs := crashOnHDFS(t, os.Getenv("STOWAGE_TEST_HDFS_KRB_CONF"), map[string]string{
		"storage.type":           "hdfs",
		"fs.defaultFS":           "hdfs://" + nn,
		"kerberosPrincipal":      "stowage/localhost@STOWAGE.TEST",
		"kerberosKeytabFilePath": keytab,
	})
	kt, err := os.ReadFile(keytab)
	if err != nil {
		t.Fatal(err)
	}
	// The keytab's key bytes sit after its header; any 16-byte window of
	// the file, in any of three encodings, is enough to find a leak.
	for i := 0; i+16 <= len(kt); i += 8 {
		w := kt[i : i+16]
		for _, form := range [][]byte{w, []byte(hex.EncodeToString(w)), []byte(base64.StdEncoding.EncodeToString(w))} {
			if bytes.Contains(logs, form) {
				t.Fatalf("bytes of %s at offset %d appear in the member's log or output", keytab, i)
			}
		}
	}
}
