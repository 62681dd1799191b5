// The two formatters the page needs for figures it adds up itself (the
// cost charts, call counts). They mirror internal/present's Cost and
// Plural, which word everything else the server sends (cost_text,
// gate_label, label, verdict, each event's line); format_test.go checks
// both agree on a table of values.

// money shows a cost: "cost unknown" when nothing was priced (never
// "$0.0000", which reads as free), "+ unknown" when only part was.
export const money = (c, unknown) => unknown ? (c ? "$" + c.toFixed(4) + " + unknown" : "cost unknown") : "$" + (c || 0).toFixed(4);

// plural is "1 call", "2 calls": never "call(s)".
export const plural = (n, noun) => `${n} ${noun}${n === 1 ? "" : "s"}`;

// lineText is an event's line (present.Line) without its mark: the words
// every front end shows for the event.
export const lineText = (line) => {
  const spans = (line && line.spans) || [];
  const text = spans.map((s) => s.text).join("");
  const mark = spans.length ? spans[0].text : "";
  return (spans.length > 1 && !/\w/.test(mark) ? text.slice(mark.length) : text).trim() + (line && line.whole ? " " + line.whole : "");
};

// relPath is path relative to root when it lies inside it ("." for root
// itself), as internal/present's RelPath shows it; a path outside root, a
// relative one, or any path when root is empty stays as it is: outside
// the project only the absolute path says where.
export const relPath = (root, path) => {
  if (!root || !path || !path.startsWith("/")) return path;
  const clean = (p) => {
    const out = [];
    for (const part of p.split("/")) {
      if (part === "" || part === ".") continue;
      if (part === "..") out.pop(); else out.push(part);
    }
    return "/" + out.join("/");
  };
  const r = clean(root), p = clean(path);
  if (p === r) return ".";
  const prefix = r === "/" ? "/" : r + "/";
  return p.startsWith(prefix) ? p.slice(prefix.length) : path;
};
