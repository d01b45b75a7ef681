// Package cmdhelp prints the help and the version of the module's
// commands (cmd/zkconsumer-groups, cmd/zkconsumer-console-consumer) in
// the layout of Kafka's command-line tools: an introduction, then every
// option in two columns, "Option" and "Description", in alphabetical
// order, the description wrapped at 80 columns and followed by the
// option's default, printed once.
package cmdhelp

import (
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
)

// Layout of the option table: descriptions start at column nameWidth and
// wrap at lineWidth, as in the help of Kafka's tools.
const (
	nameWidth = 40
	lineWidth = 80
)

// OptionalArg is a flag whose argument may be left out, as --state in
// "--list --state" and "--list --state Stable". It is a boolean flag to
// the flag package (IsBoolFlag returns true); the help shows it as
// "--name [<arg>]", taking arg from the usage's backquoted word.
type OptionalArg interface {
	flag.Value
	IsBoolFlag() bool
	// OptionalArg marks the flag as taking an optional argument.
	OptionalArg()
}

// Print writes intro, then a table of every option of fs. An option's
// argument is named by the backquoted word of its usage ("the `file` to
// read" shows as "--name <file>"). Its default, the flag's DefValue, is
// appended as "(default: X)" unless it is empty, false or 0, or the usage
// already says "(default": a usage that words its own default ("(default:
// no limit)" for a -1 that means none) is printed as it is, so that no
// default appears twice.
func Print(w io.Writer, intro string, fs *flag.FlagSet) error {
	ew := &errWriter{w: w}
	ew.printf("%s", intro)
	if intro != "" && !strings.HasSuffix(intro, "\n") {
		ew.printf("\n")
	}
	ew.printf("%-*s%s\n%-*s%s\n", nameWidth, "Option", "Description", nameWidth, "------", "-----------")
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := Entry(f)
		lines := wrap(usage, lineWidth-nameWidth)
		if len(name) >= nameWidth {
			ew.printf("%s\n", name)
			name = ""
		}
		for i, l := range lines {
			if i == 0 {
				ew.printf("%-*s%s\n", nameWidth, name, l)
			} else {
				ew.printf("%-*s%s\n", nameWidth, "", l)
			}
		}
	})
	return ew.err
}

// Entry returns the two columns of f's row in the help: "--name <arg>"
// (or "--name [<arg>]", or "--name" for a boolean flag) and the
// description with the default appended as Print says.
func Entry(f *flag.Flag) (name, description string) {
	arg, usage := flag.UnquoteUsage(f)
	name = "--" + f.Name
	_, optional := f.Value.(OptionalArg)
	_, isBool := f.Value.(interface{ IsBoolFlag() bool })
	switch {
	case optional && arg != "":
		name += " [<" + arg + ">]"
	case !isBool && arg != "":
		name += " <" + arg + ">"
	}
	if showDefault(f.DefValue) && !strings.Contains(usage, "(default") {
		usage += " (default: " + f.DefValue + ")"
	}
	return name, usage
}

// showDefault reports whether a flag's default is worth printing.
func showDefault(v string) bool {
	switch v {
	case "", "false", "0", "[]":
		return false
	}
	return true
}

// wrap splits s into lines of at most width characters at spaces (a
// longer word gets a line of its own).
func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		if line != "" && len(line)+1+len(word) > width {
			lines = append(lines, line)
			line = word
			continue
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	return append(lines, line)
}

// Version returns what --version prints: the tool's name and the version
// of the module it was built from, "(devel)" when the build recorded
// none. `go install module/cmd/tool@v0.1.0` records v0.1.0; a build in a
// checkout records a pseudo-version of its commit, or "(devel)" (with
// -buildvcs=false, or outside version control).
func Version(tool string) string {
	v := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		v = bi.Main.Version
	}
	if v == "" {
		v = "(devel)"
	}
	return tool + " " + v
}

// errWriter keeps the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

// Entries splits a help that Print wrote into its options: the first
// column of each row ("--name <arg>") mapped to its description, the
// wrapped lines joined by spaces. Lines above the table are left out.
func Entries(help string) map[string]string {
	out := map[string]string{}
	_, table, ok := strings.Cut(help, "\n------")
	if !ok {
		return out
	}
	current := ""
	for _, line := range strings.Split(table, "\n")[1:] {
		switch {
		case strings.HasPrefix(line, "--"):
			name, desc := line, ""
			if len(line) > nameWidth {
				if head := strings.TrimRight(line[:nameWidth], " "); len(head) < nameWidth {
					name, desc = head, strings.TrimSpace(line[nameWidth:])
				}
			} else {
				name = strings.TrimRight(line, " ")
			}
			current = name
			out[current] = desc
		case current != "" && strings.TrimSpace(line) != "":
			out[current] = strings.TrimSpace(out[current] + " " + strings.TrimSpace(line))
		}
	}
	return out
}

// Problems checks help, as a tool printed it for fs, against Print's
// rules and returns what breaks them: the table's header is missing, an
// option of fs is missing or one is listed that fs lacks, a default
// appears more than once, or a default worth printing appears nowhere.
// It returns the entries too, for a tool's own checks.
func Problems(help string, fs *flag.FlagSet) (entries map[string]string, problems []string) {
	if !strings.Contains(help, "\nOption"+strings.Repeat(" ", nameWidth-len("Option"))+"Description\n------") {
		problems = append(problems, "no Option/Description table header")
	}
	entries = Entries(help)
	n := 0
	fs.VisitAll(func(f *flag.Flag) {
		n++
		name, _ := Entry(f)
		text, ok := entries[name]
		_, usage := flag.UnquoteUsage(f)
		switch {
		case !ok:
			problems = append(problems, "help does not list "+name)
		case strings.Count(text, "(default") > 1:
			problems = append(problems, fmt.Sprintf("%s: a default twice: %q", name, text))
		case showDefault(f.DefValue) && !strings.Contains(usage, "(default") && !strings.Contains(text, "(default: "+f.DefValue+")"):
			problems = append(problems, fmt.Sprintf("%s: no default %q in %q", name, f.DefValue, text))
		}
	})
	if len(entries) != n {
		problems = append(problems, fmt.Sprintf("help lists %d options, the flag set has %d", len(entries), n))
	}
	return entries, problems
}
