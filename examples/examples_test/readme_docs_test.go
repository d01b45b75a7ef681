package examples_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zkconsumer/zkconsumer/connector"
	"github.com/zkconsumer/zkconsumer/internal/secure"
)

// repoRoot is the repository's top directory, two levels up.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// readPage reads a Markdown page of the repository.
func readPage(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// section returns the text of a Markdown page from the heading title (of
// any level, outside fenced blocks) to the next heading of the same or a
// higher level.
func section(t *testing.T, page, md, title string) string {
	t.Helper()
	var out strings.Builder
	level := 0
	fenced := false
	for line := range strings.SplitSeq(md, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		}
		if !fenced && strings.HasPrefix(line, "#") {
			l := len(line) - len(strings.TrimLeft(line, "#"))
			switch {
			case level == 0 && strings.TrimSpace(line[l:]) == title:
				level = l
				continue
			case level > 0 && l <= level:
				return out.String()
			}
		}
		if level > 0 {
			out.WriteString(line)
			out.WriteByte('\n')
		}
	}
	if level == 0 {
		t.Fatalf("%s has no heading %q", page, title)
	}
	return out.String()
}

// fencedBlocks returns the contents of the fenced blocks of md whose info
// string is lang ("" for blocks without one), in order.
func fencedBlocks(md, lang string) []string {
	var blocks []string
	var cur *strings.Builder
	in := false // inside a fenced block, of lang when cur != nil
	for line := range strings.SplitSeq(md, "\n") {
		switch {
		case !in && strings.HasPrefix(line, "```"):
			in = true
			if strings.TrimSpace(strings.TrimPrefix(line, "```")) == lang {
				cur = &strings.Builder{}
			}
		case in && strings.TrimSpace(line) == "```":
			if cur != nil {
				blocks = append(blocks, cur.String())
			}
			in, cur = false, nil
		case cur != nil:
			cur.WriteString(line)
			cur.WriteByte('\n')
		}
	}
	return blocks
}

// configRow is one row of a configuration table: a key and its default
// as the page writes it.
type configRow struct{ key, def string }

// configTable returns the rows of the first table in md whose header
// starts with "| key | default |".
func configTable(t *testing.T, page, md string) []configRow {
	t.Helper()
	var rows []configRow
	in := false
	for line := range strings.SplitSeq(md, "\n") {
		switch {
		case !in && strings.HasPrefix(line, "| key | default |"):
			in = true
		case in && strings.HasPrefix(line, "|---"):
		case in && strings.HasPrefix(line, "| "):
			cells := strings.Split(line, "|")
			if len(cells) < 4 {
				t.Fatalf("%s: a row of the configuration table has %d cells: %s", page, len(cells), line)
			}
			key := strings.Trim(strings.TrimSpace(cells[1]), "`")
			rows = append(rows, configRow{key: key, def: strings.TrimSpace(cells[2])})
		case in:
			return rows
		}
	}
	if len(rows) == 0 {
		t.Fatalf("%s has no configuration table", page)
	}
	return rows
}

// kafkaOnly reports whether key is one of Kafka mode's keys:
// ConfigFromProperties warns that it is ignored in ZooKeeper mode.
func kafkaOnly(t *testing.T, key, value string) bool {
	t.Helper()
	_, warnings, _ := connector.ConfigFromProperties(map[string]string{key: value})
	for _, w := range warnings {
		if strings.Contains(w, "property "+key+" only applies with") {
			return true
		}
	}
	return false
}

// checkConfigTable checks the rows of a page's configuration table
// against the connector: every key is one ConfigFromProperties knows, and
// a default written as a value (`...`) is the value DefaultConfig has in
// the key's mode and is accepted back.
func checkConfigTable(t *testing.T, page string, rows []configRow) {
	t.Helper()
	for _, r := range rows {
		value := strings.Trim(r.def, "`")
		literal := strings.HasPrefix(r.def, "`") && strings.HasSuffix(r.def, "`") && !strings.Contains(value, "`")
		if !literal {
			value = "x"
		}
		props := map[string]string{r.key: value}
		_, warnings, err := connector.ConfigFromProperties(props)
		for _, w := range warnings {
			if strings.Contains(w, "property "+r.key+" is not valid") {
				t.Errorf("%s: the configuration table lists %s, a key the connector does not know: %s", page, r.key, w)
			}
		}
		if !literal {
			if r.def != "(required)" && !strings.HasPrefix(r.def, "(required in") && !strings.HasPrefix(r.def, "(unset") {
				t.Errorf("%s: %s's default %q is neither a `value` nor (required)/(unset...)", page, r.key, r.def)
			}
			continue
		}
		if err != nil && strings.Contains(err.Error(), " "+r.key+" ") {
			t.Errorf("%s: %s=%s, the default the table gives, is refused: %v", page, r.key, value, err)
		}
		def := connector.DefaultConfig()
		if kafkaOnly(t, r.key, value) {
			def.GroupCoordination = connector.CoordinationKafka
		}
		got, ok := def.Properties()[r.key]
		switch {
		case ok && got != value:
			t.Errorf("%s: the table gives %s the default %s; DefaultConfig has %q", page, r.key, r.def, got)
		case !ok && r.key != "security.protocol":
			t.Errorf("%s: the table gives %s the default %s; DefaultConfig().Properties() has no such key", page, r.key, r.def)
		}
	}
}

// TestREADMEConfigurationTable: the README's table of the keys to look at
// first names keys the connector knows, with their defaults.
func TestREADMEConfigurationTable(t *testing.T) {
	md := section(t, "README.md", readPage(t, "README.md"), "Configuration")
	rows := configTable(t, "README.md", md)
	if len(rows) < 10 {
		t.Fatalf("the README's configuration table has %d rows", len(rows))
	}
	checkConfigTable(t, "README.md", rows)
}

// TestDocsConfigurationListsEveryKey: docs/configuration.md's table lists
// every key of the connector but the security keys (docs/security.md lists
// those), each with its default; and docs/security.md names every
// security key.
func TestDocsConfigurationListsEveryKey(t *testing.T) {
	md := readPage(t, "docs/configuration.md")
	rows := configTable(t, "docs/configuration.md", md)
	checkConfigTable(t, "docs/configuration.md", rows)
	var listed []string
	for _, r := range rows {
		listed = append(listed, r.key)
	}
	// Every key DefaultConfig writes in either mode, and those it leaves
	// out because their default follows another key.
	keys := []string{"consumer.id", "client.id", "zookeeper.connection.timeout.ms", "dual.commit.enabled", "group.instance.id", "group.remote.assignor"}
	for _, mode := range []connector.Coordination{connector.CoordinationZooKeeper, connector.CoordinationKafka} {
		c := connector.DefaultConfig()
		c.GroupCoordination = mode
		for k := range c.Properties() {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	security := secure.Keys()
	for _, k := range keys {
		if slices.Contains(security, k) {
			continue
		}
		if !slices.Contains(listed, k) {
			t.Errorf("docs/configuration.md does not list %s", k)
		}
	}
	sec := readPage(t, "docs/security.md")
	for _, k := range security {
		if !strings.Contains(sec, "`"+k+"`") && !strings.Contains(sec, k+"=") {
			// zookeeper.ssl.truststore.* and zookeeper.ssl.keystore.* name
			// their families.
			family := k[:strings.LastIndex(k, ".")] + ".*"
			if !strings.Contains(sec, "`"+family+"`") {
				t.Errorf("docs/security.md does not name %s", k)
			}
		}
	}
}

// TestDocsSecuredPropertiesIsTheTestedFile: the properties file that
// docs/security.md shows is connector/testdata/secured.properties, which
// the connector's tests run against a secured cluster.
func TestDocsSecuredPropertiesIsTheTestedFile(t *testing.T) {
	blocks := fencedBlocks(readPage(t, "docs/security.md"), "properties")
	if len(blocks) != 1 {
		t.Fatalf("docs/security.md has %d properties blocks, want 1", len(blocks))
	}
	tested := readPage(t, "connector/testdata/secured.properties")
	// The file starts with a comment of its own, for readers of testdata/.
	var body []string
	header := true
	for line := range strings.SplitSeq(tested, "\n") {
		if header && strings.HasPrefix(line, "#") {
			continue
		}
		header = false
		body = append(body, line)
	}
	if got, want := blocks[0], strings.Join(body, "\n"); got != want {
		t.Errorf("docs/security.md's properties block differs from connector/testdata/secured.properties:\n--- docs\n%s\n--- testdata\n%s", got, want)
	}
}
