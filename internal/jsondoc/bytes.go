package jsondoc

import (
	"errors"

	"github.com/tripleo-go/agent/internal/pyutf8"
)

// LoadsBytes is Python's json.loads of bytes: a document that is not UTF-8
// or not JSON is an error worded as Python words it (UnicodeDecodeError,
// then JSONDecodeError).
func LoadsBytes(data []byte) (Value, error) {
	return loadsBytes(data, Loads)
}

// LoadsBytesOwned is LoadsBytes for a caller that hands data over (see
// LoadsOwned): data must never be modified afterwards.
func LoadsBytesOwned(data []byte) (Value, error) {
	return loadsBytes(data, LoadsOwned)
}

func loadsBytes(data []byte, loads func([]byte) (Value, error)) (Value, error) {
	if msg, bad := pyutf8.DecodeError(data); bad {
		return nil, errors.New(msg)
	}
	v, err := loads(data)
	if err != nil {
		return nil, errors.New(PythonError(err))
	}
	return v, nil
}
