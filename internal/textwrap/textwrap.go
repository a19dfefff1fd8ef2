// Package textwrap breaks words into the lines of a help page, as
// Python's textwrap does for argparse: at spaces, a word longer than the
// width alone on its line.
package textwrap

// Words joins words with single spaces into lines of at most width
// columns; no words, no lines.
func Words(words []string, width int) []string {
	var lines []string
	line := ""
	for _, w := range words {
		switch {
		case line == "":
			line = w
		case len(line)+1+len(w) <= width:
			line += " " + w
		default:
			lines = append(lines, line)
			line = w
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}
