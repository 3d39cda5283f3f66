package chat

import (
	"encoding/json"
	"fmt"
	"reflect"
)

// value carries a template variable to the render child keeping what JSON
// loses and templates show: an int prints as 1, a float as 1.0 (tojson).
type value struct {
	Null  bool              `json:"n,omitempty"`
	Bool  *bool             `json:"b,omitempty"`
	Int   *int64            `json:"i,omitempty"`
	Float *float64          `json:"f,omitempty"`
	Str   *string           `json:"s,omitempty"`
	List  []*value          `json:"l,omitempty"`
	IsMap bool              `json:"im,omitempty"`
	Map   map[string]*value `json:"m,omitempty"`
	// IsList tells an empty list from null.
	IsList bool `json:"il,omitempty"`
}

func encodeVars(vars map[string]any) (*value, error) {
	if vars == nil {
		return nil, nil
	}
	return encodeValue(reflect.ValueOf(vars), 0)
}

func encodeValue(v reflect.Value, depth int) (*value, error) {
	if depth > 100 {
		return nil, fmt.Errorf("nested too deeply")
	}
	for v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return &value{Null: true}, nil
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.Invalid:
		return &value{Null: true}, nil
	case reflect.Bool:
		b := v.Bool()
		return &value{Bool: &b}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		i := v.Int()
		return &value{Int: &i}, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		i := int64(v.Uint())
		return &value{Int: &i}, nil
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		return &value{Float: &f}, nil
	case reflect.String:
		s := v.String()
		return &value{Str: &s}, nil
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			return &value{Null: true}, nil
		}
		out := &value{IsList: true, List: make([]*value, v.Len())}
		for i := range v.Len() {
			e, err := encodeValue(v.Index(i), depth+1)
			if err != nil {
				return nil, err
			}
			out.List[i] = e
		}
		return out, nil
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			break
		}
		out := &value{IsMap: true, Map: map[string]*value{}}
		for it := v.MapRange(); it.Next(); {
			e, err := encodeValue(it.Value(), depth+1)
			if err != nil {
				return nil, err
			}
			out.Map[it.Key().String()] = e
		}
		return out, nil
	}
	// Anything else (structs, ...) goes as its JSON form.
	b, err := json.Marshal(v.Interface())
	if err != nil {
		return nil, err
	}
	var a any
	if err := json.Unmarshal(b, &a); err != nil {
		return nil, err
	}
	return encodeValue(reflect.ValueOf(&a), depth+1)
}

func (v *value) decode() any {
	switch {
	case v == nil || v.Null:
		return nil
	case v.Bool != nil:
		return *v.Bool
	case v.Int != nil:
		return int(*v.Int)
	case v.Float != nil:
		return *v.Float
	case v.Str != nil:
		return *v.Str
	case v.IsList:
		l := make([]any, len(v.List))
		for i, e := range v.List {
			l[i] = e.decode()
		}
		return l
	case v.IsMap:
		m := make(map[string]any, len(v.Map))
		for k, e := range v.Map {
			m[k] = e.decode()
		}
		return m
	}
	return nil
}
