// A small Markdown renderer for reports: it builds DOM nodes and sets only textContent,
// never innerHTML, so nothing in a report (which quotes untrusted sources) can become
// markup or script. It covers what reports use: headings, paragraphs, lists (nested,
// with quotes inside items), block quotes, fenced code, tables, rules, and inline code,
// emphasis, links (http, https and mailto only) and citation markers such as [3] or
// [1, 2], which become buttons that call onCitation(n). A dagger right after a citation
// (the report's mark for a sentence checked by code only) is shown as a marked span
// that says so on hover.

const HEADING = /^(#{1,6})\s+(.*?)\s*#*\s*$/;
const RULE = /^ {0,3}([-*_])(\s*\1){2,}\s*$/;
const FENCE = /^\s*(```|~~~)/;
const ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const TABLE_RULE = /^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/;
const INLINE = /(`+)([\s\S]*?)\1|\*\*([\s\S]+?)\*\*|\*(?=\S)([\s\S]*?\S)\*|\[(\d+(?:\s*[,;]\s*\d+)*)\](?!\()(\u2020?)|\[([^\]\n]+)\]\(([^)\s]+)\)/g;
const CODE_ONLY = "Checked by code only: it passed the deterministic checks, but no verifier model judged it";
const SAFE_URL = /^(https?:|mailto:)/i;

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

export function renderInline(text, parent, onCitation) {
  let last = 0;
  for (const m of text.matchAll(INLINE)) {
    if (m.index > last) parent.append(text.slice(last, m.index));
    last = m.index + m[0].length;
    if (m[1] !== undefined) parent.append(el("code", null, m[2].trim()));
    else if (m[3] !== undefined) renderInline(m[3], parent.appendChild(el("strong")), onCitation);
    else if (m[4] !== undefined) renderInline(m[4], parent.appendChild(el("em")), onCitation);
    else if (m[5] !== undefined) {
      citations(m[5], parent, onCitation);
      if (m[6]) {
        const mark = el("span", "level-mark", m[6]);
        mark.title = CODE_ONLY;
        parent.append(mark);
      }
    } else if (SAFE_URL.test(m[8])) {
      const a = el("a", null, m[7]);
      a.href = m[8];
      a.rel = "noopener noreferrer";
      a.target = "_blank";
      parent.append(a);
    } else parent.append(m[7]);
  }
  if (last < text.length) parent.append(text.slice(last));
}

function citations(list, parent, onCitation) {
  for (const part of list.split(/\s*[,;]\s*/)) {
    const n = Number(part);
    const button = el("button", "cite", "[" + n + "]");
    button.type = "button";
    button.dataset.n = String(n);
    button.title = "Show the passages of source " + n;
    if (onCitation) button.addEventListener("click", () => onCitation(n));
    parent.append(button);
  }
}

function startsBlock(line) {
  return HEADING.test(line) || RULE.test(line) || FENCE.test(line) || ITEM.test(line) || /^\s*>/.test(line);
}

function indentOf(line) {
  return line.length - line.trimStart().length;
}

// Each block reader takes (lines, i) and returns [node, next index].
function readFence(lines, i) {
  const marker = lines[i].trim().slice(0, 3);
  const body = [];
  let j = i + 1;
  while (j < lines.length && !lines[j].trim().startsWith(marker)) body.push(lines[j++]);
  const pre = el("pre");
  pre.append(el("code", null, body.join("\n")));
  return [pre, j + 1];
}

function readQuote(lines, i, onCitation) {
  const body = [];
  let j = i;
  while (j < lines.length && /^\s*>/.test(lines[j])) body.push(lines[j++].replace(/^\s*> ?/, ""));
  const quote = el("blockquote");
  quote.append(renderBlocks(body, onCitation));
  return [quote, j];
}

function readList(lines, i, onCitation) {
  const first = lines[i].match(ITEM);
  const base = first[1].length;
  const ordered = /\d/.test(first[2]);
  const list = el(ordered ? "ol" : "ul");
  if (ordered && parseInt(first[2], 10) !== 1) list.start = parseInt(first[2], 10);
  let j = i;
  while (j < lines.length) {
    const m = lines[j].match(ITEM);
    if (!m || m[1].length !== base || /\d/.test(m[2]) !== ordered) break;
    const body = [m[3]];
    const inner = base + m[2].length + 1;
    j++;
    while (j < lines.length) {
      const line = lines[j];
      const blankThenIndented = !line.trim() && j + 1 < lines.length && indentOf(lines[j + 1]) > base && lines[j + 1].trim();
      if (line.trim() && indentOf(line) > base) body.push(line.slice(Math.min(inner, indentOf(line))));
      else if (blankThenIndented) body.push("");
      else if (line.trim() && !startsBlock(line) && body[body.length - 1] !== "") body.push(line);
      else break;
      j++;
    }
    const item = el("li");
    item.append(renderBlocks(body, onCitation, true));
    list.append(item);
    while (j < lines.length && !lines[j].trim() && j + 1 < lines.length && ITEM.test(lines[j + 1]) &&
           lines[j + 1].match(ITEM)[1].length === base) j++;
  }
  return [list, j];
}

function cells(line) {
  return line.trim().replace(/^\|/, "").replace(/\|$/, "").split("|").map((c) => c.trim());
}

function readTable(lines, i, onCitation) {
  const table = el("table");
  const head = table.appendChild(el("thead")).appendChild(el("tr"));
  for (const c of cells(lines[i])) renderInline(c, head.appendChild(el("th")), onCitation);
  const body = table.appendChild(el("tbody"));
  let j = i + 2;
  while (j < lines.length && lines[j].includes("|") && lines[j].trim()) {
    const row = body.appendChild(el("tr"));
    for (const c of cells(lines[j++])) renderInline(c, row.appendChild(el("td")), onCitation);
  }
  return [table, j];
}

function readParagraph(lines, i, onCitation, tight) {
  const text = [];
  let j = i;
  while (j < lines.length && lines[j].trim() && (j === i || !startsBlock(lines[j]))) text.push(lines[j++].trim());
  const p = el(tight ? "span" : "p");
  renderInline(text.join("\n"), p, onCitation);
  return [p, j];
}

function readBlock(lines, i, onCitation, tight) {
  const line = lines[i];
  const heading = line.match(HEADING);
  if (heading) {
    const h = el("h" + heading[1].length);
    renderInline(heading[2], h, onCitation);
    return [h, i + 1];
  }
  if (RULE.test(line)) return [el("hr"), i + 1];
  if (FENCE.test(line)) return readFence(lines, i);
  if (/^\s*>/.test(line)) return readQuote(lines, i, onCitation);
  if (ITEM.test(line)) return readList(lines, i, onCitation);
  if (line.includes("|") && i + 1 < lines.length && TABLE_RULE.test(lines[i + 1])) return readTable(lines, i, onCitation);
  return readParagraph(lines, i, onCitation, tight);
}

// A list item's first paragraph stays inline (tight) unless the item holds blank lines.
function renderBlocks(lines, onCitation, inItem = false) {
  const out = document.createDocumentFragment();
  const tight = inItem && !lines.some((l) => !l.trim());
  let i = 0;
  while (i < lines.length) {
    if (!lines[i].trim()) {
      i++;
      continue;
    }
    const [node, next] = readBlock(lines, i, onCitation, tight && i === 0);
    out.append(node);
    i = Math.max(next, i + 1);
  }
  return out;
}

export function renderMarkdown(text, onCitation) {
  return renderBlocks(String(text).replace(/\r\n?/g, "\n").split("\n"), onCitation);
}
