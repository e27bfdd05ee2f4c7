package results

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"
)

// Finite replaces every NaN or infinite float reachable from v (a pointer) with 0, in place, and
// returns the JSON paths of those it replaced. encoding/json refuses such values outright, so
// one of them would lose a whole finished run at the moment its result is written; Write calls
// this when encoding fails that way, and says so in the result's warnings.
func Finite(v any) []string {
	var fixed []string
	finite(reflect.ValueOf(v), "", &fixed, 0)
	sort.Strings(fixed) // map order is random
	return fixed
}

// NonFiniteWarning is the warning a result carries when Finite replaced values in it.
func NonFiniteWarning(paths []string) string {
	return fmt.Sprintf("%s held a value JSON cannot hold (NaN or infinite), written as 0: treat it as unknown", strings.Join(paths, ", "))
}

func finite(v reflect.Value, path string, fixed *[]string, depth int) {
	if depth > 64 || !v.IsValid() {
		return
	}
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		if f := v.Float(); (math.IsNaN(f) || math.IsInf(f, 0)) && v.CanSet() {
			v.SetFloat(0)
			*fixed = append(*fixed, strings.TrimPrefix(path, "."))
		}
	case reflect.Pointer:
		if !v.IsNil() {
			finite(v.Elem(), path, fixed, depth+1)
		}
	case reflect.Interface:
		if v.IsNil() {
			return
		}
		// An interface's value cannot be set in place: fix a copy and put it back.
		c := reflect.New(v.Elem().Type()).Elem()
		c.Set(v.Elem())
		n := len(*fixed)
		finite(c, path, fixed, depth+1)
		if len(*fixed) > n && v.CanSet() {
			v.Set(c)
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name := strings.Split(f.Tag.Get("json"), ",")[0]
			if name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			finite(v.Field(i), path+"."+name, fixed, depth+1)
		}
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			return // bytes (json.RawMessage): already encoded
		}
		for i := 0; i < v.Len(); i++ {
			finite(v.Index(i), fmt.Sprintf("%s[%d]", path, i), fixed, depth+1)
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			c := reflect.New(iter.Value().Type()).Elem()
			c.Set(iter.Value())
			n := len(*fixed)
			finite(c, fmt.Sprintf("%s.%v", path, iter.Key().Interface()), fixed, depth+1)
			if len(*fixed) > n {
				v.SetMapIndex(iter.Key(), c)
			}
		}
	}
}
