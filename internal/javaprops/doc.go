// Package javaprops reads Java .properties text with the rules of
// java.util.Properties.load (Java 9 and later): comments, escapes, line
// continuations, the separators ('=', ':' or white space) and repeated
// keys, character for character. connector.ParseProperties is its public face and documents the
// rules; a malformed \uXXXX escape is the only input it refuses.
package javaprops
