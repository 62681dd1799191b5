// Side-by-side line diff and a small syntax colourer, for the edits shown
// in transcripts. Both return data or DOM nodes built from text, never HTML.

// diffLines pairs the lines of a and b: [left, right] rows where a side is
// {n, text, kind} (kind same, del or add) or null. It is a longest common
// subsequence over lines, which is exact and fast enough for the edits a
// tool call makes (capped so a huge file cannot stall the page).
export function diffLines(a, b) {
  const A = a === "" ? [] : a.replace(/\n$/, "").split("\n");
  const B = b === "" ? [] : b.replace(/\n$/, "").split("\n");
  if (A.length * B.length > 4e6) {
    const rows = [];
    for (let i = 0; i < Math.max(A.length, B.length); i++) rows.push([i < A.length ? { n: i + 1, text: A[i], kind: "del" } : null, i < B.length ? { n: i + 1, text: B[i], kind: "add" } : null]);
    return rows;
  }
  const m = A.length, n = B.length;
  const L = Array.from({ length: m + 1 }, () => new Uint32Array(n + 1));
  for (let i = m - 1; i >= 0; i--) for (let j = n - 1; j >= 0; j--) L[i][j] = A[i] === B[j] ? L[i + 1][j + 1] + 1 : Math.max(L[i + 1][j], L[i][j + 1]);
  const rows = [];
  let i = 0, j = 0, dels = [], adds = [];
  const flush = () => {
    for (let k = 0; k < Math.max(dels.length, adds.length); k++) rows.push([dels[k] || null, adds[k] || null]);
    dels = []; adds = [];
  };
  while (i < m || j < n) {
    if (i < m && j < n && A[i] === B[j]) {
      flush();
      rows.push([{ n: i + 1, text: A[i], kind: "same" }, { n: j + 1, text: B[j], kind: "same" }]);
      i++; j++;
    } else if (j < n && (i >= m || L[i][j + 1] >= L[i + 1][j])) {
      adds.push({ n: j + 1, text: B[j], kind: "add" }); j++;
    } else {
      dels.push({ n: i + 1, text: A[i], kind: "del" }); i++;
    }
  }
  flush();
  return rows;
}

const KEYWORDS = {
  go: "break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var nil true false",
  js: "async await break case catch class const continue default delete do else export extends false finally for function if import in instanceof let new null return switch this throw true try typeof undefined var void while yield",
  py: "and as assert async await break class continue def del elif else except False finally for from global if import in is lambda None nonlocal not or pass raise return True try while with yield",
  c: "auto break case char const continue default do double else enum extern float for goto if int long register return short signed sizeof static struct switch typedef union unsigned void volatile while",
};
const LANG = { go: "go", js: "js", mjs: "js", ts: "js", tsx: "js", jsx: "js", py: "py", c: "c", h: "c", cc: "c", cpp: "c", rs: "c", java: "c" };

// highlight returns a fragment of spans for one line of the file's
// language: keywords, strings, comments and numbers.
export function highlight(line, file) {
  const ext = (file.split(".").pop() || "").toLowerCase();
  const lang = LANG[ext];
  const frag = document.createDocumentFragment();
  if (!lang) { frag.append(line); return frag; }
  const kw = new Set(KEYWORDS[lang].split(" "));
  const comment = lang === "py" ? "#.*" : "\\/\\/.*";
  const re = new RegExp(`(${comment})|("(?:[^"\\\\]|\\\\.)*"?|'(?:[^'\\\\]|\\\\.)*'?|\`[^\`]*\`?)|(\\b\\d[\\d_.xXa-fA-F]*\\b)|([A-Za-z_]\\w*)`, "g");
  let last = 0, m;
  const span = (cls, text) => { const s = document.createElement("span"); s.className = cls; s.textContent = text; return s; };
  while ((m = re.exec(line))) {
    if (m.index > last) frag.append(line.slice(last, m.index));
    if (m[1]) frag.append(span("tk-c", m[0]));
    else if (m[2]) frag.append(span("tk-s", m[0]));
    else if (m[3]) frag.append(span("tk-n", m[0]));
    else if (kw.has(m[4])) frag.append(span("tk-k", m[0]));
    else frag.append(m[0]);
    last = m.index + m[0].length;
  }
  if (last < line.length) frag.append(line.slice(last));
  return frag;
}
