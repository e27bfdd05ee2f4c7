package redisq

import (
	"strings"
	"testing"
)

func TestParseAddress(t *testing.T) {
	cases := []struct {
		in, addr, password string
		tls                bool
	}{
		{"127.0.0.1:6379", "127.0.0.1:6379", "", false},
		{"redis://:s3cret@127.0.0.1:6380/0", "127.0.0.1:6380", "s3cret", false},
		{"rediss://user:pw@127.0.0.1:6381", "127.0.0.1:6381", "pw", true},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			o, err := parseAddress(c.in)
			if err != nil {
				t.Fatal(err)
			}
			if o.Addr != c.addr || o.Password != c.password || (o.TLSConfig != nil) != c.tls {
				t.Fatalf("got addr %q password %q tls %v", o.Addr, o.Password, o.TLSConfig != nil)
			}
		})
	}
	// A bad URL's error must not repeat the password.
	_, err := parseAddress("redis://:s3cret@127.0.0.1:6380/notanumber")
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("error %v", err)
	}
}
