package zksession

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// fullPath validates a path relative to the chroot and returns the path on
// the server. "/" is the chroot itself.
func (s *Session) fullPath(path string) (string, error) {
	if reason := pathProblem(path); reason != "" {
		return "", fmt.Errorf("%w: %s", ErrInvalidPath, reason)
	}
	if s.chroot == "" {
		return path, nil
	}
	if path == "/" {
		return s.chroot, nil
	}
	return s.chroot + path, nil
}

// stripChroot turns a server path into one relative to the chroot.
func (s *Session) stripChroot(path string) string {
	if s.chroot == "" {
		return path
	}
	if path == s.chroot {
		return "/"
	}
	if strings.HasPrefix(path, s.chroot+"/") {
		return path[len(s.chroot):]
	}
	return path
}

// pathProblem explains why p is not a valid absolute ZooKeeper path, or
// returns "" (the rules of ZooKeeper's PathUtils.validatePath).
func pathProblem(p string) string {
	switch {
	case p == "":
		return "empty path"
	case p[0] != '/':
		return fmt.Sprintf("%q does not start with '/'", p)
	case p == "/":
		return ""
	case strings.HasSuffix(p, "/"):
		return fmt.Sprintf("%q ends with '/'", p)
	case !utf8.ValidString(p):
		return fmt.Sprintf("%q is not valid UTF-8", p)
	}
	for _, seg := range strings.Split(p[1:], "/") {
		switch seg {
		case "":
			return fmt.Sprintf("%q has an empty segment", p)
		case ".", "..":
			return fmt.Sprintf("%q has a relative segment %q", p, seg)
		}
	}
	for _, r := range p {
		if r == 0 || (r > 0 && r <= 0x1f) || (r >= 0x7f && r <= 0x9f) ||
			(r >= 0xd800 && r <= 0xf8ff) || (r >= 0xfff0 && r <= 0xffff) {
			return fmt.Sprintf("%q contains the character %U", p, r)
		}
	}
	return ""
}

// parentPath returns the parent of an absolute path, "/" for a top-level
// node.
func parentPath(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}
