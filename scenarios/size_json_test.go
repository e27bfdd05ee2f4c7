package scenarios

import (
	"encoding/json"
	"reflect"
	"testing"
)

// A fixed size stays a plain number in result files (older results and their readers keep
// working); a distribution is an object; both read back as they were written.
func TestSizeJSON(t *testing.T) {
	for _, c := range []struct {
		size Size
		json string
	}{
		{Fixed(256), `256`},
		{Size{Dist: "uniform", Min: 64, Max: 1024}, `{"dist":"uniform","min":64,"max":1024}`},
	} {
		b, err := json.Marshal(c.size)
		if err != nil || string(b) != c.json {
			t.Fatalf("marshal %+v = %s, %v; want %s", c.size, b, err, c.json)
		}
		var back Size
		if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, c.size) {
			t.Fatalf("unmarshal %s = %+v, %v; want %+v", b, back, err, c.size)
		}
	}
}
