package jsondoc

import "testing"

// The data files of hiera and json-file are json.dumps(v, indent=4,
// sort_keys=True, separators=(',', ': ')); the want was printed by Python.
func TestDumpsIndentSortedAsPython(t *testing.T) {
	v, err := Loads([]byte(`{"b": [1, {"z": null, "a": "é"}], "a": {}, "c": [], "B": true}`))
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n    \"B\": true,\n    \"a\": {},\n    \"b\": [\n        1,\n        {\n            \"a\": \"\\u00e9\",\n            \"z\": null\n        }\n    ],\n    \"c\": []\n}"
	if got := DumpsIndentSorted(v, 4); got != want {
		t.Errorf("DumpsIndentSorted\n got %q\nwant %q", got, want)
	}
}
