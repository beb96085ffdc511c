// Small DOM helpers. Text always goes in through textContent, never innerHTML.

export function $(selector) {
  return document.querySelector(selector);
}

export function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

export function show(node, visible) {
  node.hidden = !visible;
}

export function when(iso) {
  return iso ? new Date(iso).toLocaleString() : "–";
}

export function duration(seconds) {
  const s = Math.max(0, Math.floor(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const pad = (n) => String(n).padStart(2, "0");
  return (h ? h + ":" + pad(m) : String(m)) + ":" + pad(s % 60);
}

export function percent(x) {
  return x == null ? "–" : Math.round(x * 100) + "%";
}
