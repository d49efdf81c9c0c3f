package fsbackend

import (
	"regexp"
	"strings"
)

// Redacted is what a secret value is printed as.
const Redacted = "******"

// secretWords mark keys whose values must never be printed. They are
// matched against the key lower-cased with '.', '-' and '_' removed, so
// that every spelling is one word: "access.key", "access-key", "ACCESS_KEY"
// and "accessKey"; "account.key" (fs.azure.account.key.*) and
// "accountKey"; "api-key" and "apiKey". "pass" covers password and
// passphrase, "pwd" its short form, "encryptionkey" customer-supplied keys
// (fs.s3a.encryption.key, fs.gs.encryption.key, *encryption-key).
var secretWords = []string{
	"secret", "pass", "pwd", "token", "credential", "apikey", "accountkey", "accesskey",
	"keytab", "userinfo", "keyfile", "privatekey", "private", "encryptionkey",
}

// IsSecretKey reports whether values of key must be redacted: access keys,
// secret keys, tokens, passwords, credentials, API and account keys,
// keytabs, key files and encryption keys, in any case and with any of the
// separators '.', '-' and '_'.
func IsSecretKey(key string) bool {
	k := strings.Map(func(r rune) rune {
		switch r {
		case '.', '-', '_':
			return -1
		}
		return r
	}, strings.ToLower(key))
	for _, w := range secretWords {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

// uriUserInfo finds the user information of URIs in text:
// scheme://userinfo@ (s3a://id:secret@bucket, hdfs://user@host,
// https://user:password@proxy).
var uriUserInfo = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.\-]*://)([^/?#@\s"'<>]+)@`)

// RedactURIs returns s with the user information of every URI in it
// replaced by Redacted (s3a://******@bucket): a user name there is often
// an access key id, and a password a secret key. It is meant for anything
// printed: config dumps, errors, log lines.
func RedactURIs(s string) string {
	if !strings.Contains(s, "@") || !strings.Contains(s, "://") {
		return s
	}
	return uriUserInfo.ReplaceAllString(s, "${1}"+Redacted+"@")
}
