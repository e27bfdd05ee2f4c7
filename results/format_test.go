package results

import "testing"

func TestFormatNs(t *testing.T) {
	for _, c := range []struct {
		ns   int64
		want string
	}{
		{0, "-"}, {999, "1us"}, {540_000, "540us"}, {4_720_000, "4.72ms"}, {999_990_000, "999.99ms"},
		{6_509_560_000, "6.51s"}, {99_990_000_000, "99.99s"}, {600_000_000_000, "600.0s"},
	} {
		if got := FormatNs(c.ns); got != c.want {
			t.Errorf("FormatNs(%d) = %q, want %q", c.ns, got, c.want)
		}
	}
}
