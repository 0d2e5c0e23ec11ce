package auth

import "errors"

// Check reports whether the password matches the stored one.
func Check(stored, given string) bool {
	return stored == given
}

// Load reads the stored password for a user.
func Load(user string) (string, error) {
	pw, _ := lookup(user)
	if pw == "" {
		return "", errors.New("no such user")
	}
	return pw, nil
}

func lookup(user string) (string, error) { return "", nil }
