package main

import (
	"bytes"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// qbenchVar is an environment variable of qbench's in Go source.
var qbenchVar = regexp.MustCompile(`QBENCH_[A-Z0-9_]*[A-Z0-9]`)

// repoRoot is the repository's top directory (this package is cmd/qbench).
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// diary is what a user's documentation does not say: when and where it was written. History
// belongs in CHANGELOG.md and commit messages; a figure that helps a user names the command
// that reproduces it and the kind of machine, not the day or the sitting it was taken in.
var diary = []struct {
	what string
	re   *regexp.Regexp
}{
	{"a development session", regexp.MustCompile(`(?i)\bsessions? [0-9]`)},
	{"a numbered development round", regexp.MustCompile(`(?i)\b(development |measurement )?round [0-9]+\b`)},
	{"a UTC time stamp", regexp.MustCompile(`\b[0-9]{1,2}:[0-9]{2}(:[0-9]{2})?( ?[-–] ?[0-9]{1,2}:[0-9]{2})? UTC\b`)},
	{"a date", regexp.MustCompile(`\b20[0-9]{2}-[01][0-9]-[0-3][0-9]\b($|[^T0-9])`)},
	{"the development machine", regexp.MustCompile(`(?i)\b(development (machine|vm|box|host)|(is|was|were) developed on)\b`)},
	{"a commit hash", regexp.MustCompile(`(?i)\bcommit [0-9a-f]{7,40}\b`)},
}

// findDiary returns a description of each diary entry in text, by line.
func findDiary(text string) []string {
	var out []string
	for i, line := range strings.Split(text, "\n") {
		for _, d := range diary {
			if m := d.re.FindString(line); m != "" {
				out = append(out, strings.TrimSpace(strings.Join([]string{itoa(i + 1), d.what, strings.TrimSpace(m)}, ": ")))
			}
		}
	}
	return out
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

// The README, every package's README and doc, and every comment in non-test Go code say how to
// use qbench, not when or where it was developed.
func TestDocsNameNoDevelopmentHistory(t *testing.T) {
	root := repoRoot(t)
	checked := 0
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if name == ".git" || name == "testdata" || (strings.HasPrefix(name, ".") && path != root) {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		var text string
		switch {
		case name == "README.md" || rel == "ARCHITECTURE.md":
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			text = string(data)
		case strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go"):
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments)
			if err != nil {
				return err
			}
			// Comments only, each kept on its own lines so that line numbers stay near.
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			masked := bytes.Repeat([]byte{' '}, len(data))
			for i, c := range data {
				if c == '\n' {
					masked[i] = '\n'
				}
			}
			fset := token.NewFileSet()
			if f, err = parser.ParseFile(fset, path, data, parser.ParseComments); err != nil {
				return err
			}
			for _, cg := range f.Comments {
				start, end := fset.Position(cg.Pos()).Offset, fset.Position(cg.End()).Offset
				copy(masked[start:end], data[start:end])
			}
			text = string(masked)
		default:
			return nil
		}
		checked++
		for _, hit := range findDiary(text) {
			t.Errorf("%s:%s", rel, hit)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Fatalf("checked only %d files: is the walk rooted at the repository?", checked)
	}
}

// The check itself: what it must find, and what it must let through.
func TestDocsDiaryPatterns(t *testing.T) {
	for _, c := range []struct {
		text string
		hit  bool
	}{
		{"measured in session 8, quiet", true},
		{"sessions 6-7 saw it", true},
		{"round 3 of the development", true},
		{"at 18:24 UTC, load average 1.4", true},
		{"(09:59-10:01 UTC)", true},
		{"Quiet, 2026-12-01, nothing else running", true},
		{"on the 2-core development machine", true},
		{"the VM this project is developed on", true},
		{"tracking (b, commit eef3f59) cost", true},
		{"RFC 3339 (2026-12-01T10:00:00Z) or unix milliseconds", false},
		{"3 rounds, alternated", false},
		{"per round, the ratio", false},
		{"times are in UTC", false},
		{"a quiet machine with 2 vCPUs", false},
	} {
		if got := len(findDiary(c.text)) > 0; got != c.hit {
			t.Errorf("%q: found %v, want %v", c.text, got, c.hit)
		}
	}
}

// README commands: every qbench command in a code block or an inline code span parses, flags
// and all (run with --help appended, so nothing executes).
func TestDocsReadmeCommandsParse(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	cmds := readmeCommands(string(data))
	if len(cmds) < 20 {
		t.Fatalf("found only %d qbench commands in README.md", len(cmds))
	}
	for _, line := range cmds {
		args, ok := shellWords(line)
		if !ok || len(args) == 0 {
			continue // a shape, not a command (placeholders such as [-o FILE] or A|B)
		}
		t.Run(line, func(t *testing.T) {
			root := newRoot()
			var out bytes.Buffer
			root.SetOut(&out)
			root.SetErr(&out)
			root.SetArgs(append(args, "--help"))
			if err := root.Execute(); err != nil {
				t.Errorf("%q does not parse: %v", line, err)
			}
			if !strings.Contains(out.String(), "Usage:") {
				t.Errorf("%q printed no usage: %s", line, out.String())
			}
		})
	}
}

var (
	fence      = regexp.MustCompile("(?s)```[a-z]*\n(.*?)```")
	inlineCode = regexp.MustCompile("`(qbench [^`]+)`")
)

// readmeCommands are the qbench command lines in markdown: code blocks' lines that call qbench
// (or go run ./cmd/qbench), and inline code spans that start with qbench.
func readmeCommands(md string) []string {
	var cmds []string
	for _, m := range fence.FindAllStringSubmatch(md, -1) {
		for _, line := range strings.Split(m[1], "\n") {
			line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "$ "))
			line = strings.Replace(line, "go run ./cmd/qbench", "qbench", 1)
			if strings.HasPrefix(line, "qbench ") {
				cmds = append(cmds, line)
			}
		}
	}
	outside := fence.ReplaceAllString(md, "")
	for _, m := range inlineCode.FindAllStringSubmatch(outside, -1) {
		cmds = append(cmds, m[1])
	}
	return cmds
}

// shellWords splits a command line as sh would, for the simple lines a README holds: quotes,
// a comment, and a pipe or redirection ending the command. ok is false for a usage shape
// (brackets, alternatives, ellipses) rather than a command.
func shellWords(line string) (args []string, ok bool) {
	if strings.ContainsAny(line, "[]") || strings.Contains(line, "...") || strings.Contains(line, `\|`) {
		return nil, false
	}
	var cur strings.Builder
	var quote rune
	inWord := false
	for _, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				args = append(args, cur.String())
				cur.Reset()
				inWord = false
			}
		case (r == '#' && !inWord) || r == '|' || r == '>':
			if inWord {
				args = append(args, cur.String())
			}
			return args[1:], true
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		args = append(args, cur.String())
	}
	return args[1:], true
}

// Every repository path the README names, in a link or in text, exists.
func TestDocsReadmePathsExist(t *testing.T) {
	root := repoRoot(t)
	data, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	paths := readmePaths(string(data))
	if len(paths) < 10 {
		t.Fatalf("found only %d paths in README.md", len(paths))
	}
	for _, p := range paths {
		if _, err := os.Stat(filepath.Join(root, p)); err != nil {
			t.Errorf("README.md names %s, which does not exist", p)
		}
	}
}

var (
	mdLink   = regexp.MustCompile(`\]\(([^)#\s]*)(#[^)]*)?\)`)
	repoPath = regexp.MustCompile(`(?:^|[\s(` + "`" + `])((?:\.ci|bench|cmd|engines|plots|results|scenarios)/[A-Za-z0-9_./*-]*)`)
)

// readmePaths are the relative link targets and the repository paths in the text.
func readmePaths(md string) []string {
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		p = strings.TrimRight(p, ".,:;")
		if p == "" || strings.Contains(p, "://") || strings.Contains(p, "*") || seen[p] {
			return
		}
		seen[p] = true
		out = append(out, p)
	}
	for _, m := range mdLink.FindAllStringSubmatch(md, -1) {
		add(m[1])
	}
	for _, m := range repoPath.FindAllStringSubmatch(md, -1) {
		add(m[1])
	}
	return out
}

// Every relative link in every README resolves, from the README's own directory (the reference
// moved between them: a link left behind would point nowhere).
func TestDocsReadmeLinksResolve(t *testing.T) {
	root := repoRoot(t)
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || (d.Name() != "README.md" && d.Name() != "ARCHITECTURE.md" && d.Name() != "CHANGELOG.md") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for _, m := range mdLink.FindAllStringSubmatch(string(data), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file := path
			if target != "" {
				file = filepath.Join(filepath.Dir(path), target)
			}
			if _, err := os.Stat(file); err != nil {
				t.Errorf("%s links to %s, which does not exist", rel, target)
				continue
			}
			if frag := strings.TrimPrefix(m[2], "#"); frag != "" && strings.HasSuffix(file, ".md") {
				if !headingAnchors(t, file)[frag] {
					t.Errorf("%s links to %s#%s: no such heading", rel, target, frag)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// headingAnchors are the anchors GitHub makes of a markdown file's headings: lower case, spaces
// to hyphens, punctuation other than hyphens and underscores dropped.
func headingAnchors(t *testing.T, file string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]bool{}
	inFence := false
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "```") {
			inFence = !inFence
		}
		if inFence || !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r > 127:
				b.WriteRune(r)
			}
		}
		anchors[b.String()] = true
	}
	return anchors
}
