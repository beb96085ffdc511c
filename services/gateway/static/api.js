// The gateway's HTTP API as the page uses it: JSON requests with the API key the
// person entered (kept in sessionStorage, so it leaves with the tab), and the job's
// server-sent events read with fetch(), because EventSource cannot send a header.

const KEY = "deepresearch.apiKey";

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

export function apiKey() {
  return sessionStorage.getItem(KEY) || "";
}

export function setApiKey(key) {
  if (key) sessionStorage.setItem(KEY, key);
  else sessionStorage.removeItem(KEY);
}

function headers(extra) {
  const h = { Accept: "application/json", ...extra };
  const key = apiKey();
  if (key) h.Authorization = "Bearer " + key;
  return h;
}

async function failure(response) {
  let message = response.status + " " + response.statusText;
  try {
    const body = await response.json();
    if (body && typeof body.message === "string") message = body.message;
  } catch (err) {
    console.warn("error body was not JSON", err);
  }
  const err = new ApiError(response.status, message);
  // 503 (NATS or PostgreSQL down, a store full) and 429 say when to try again.
  const retryAfter = Number(response.headers.get("Retry-After"));
  if (retryAfter > 0) err.retryAfter = retryAfter;
  return err;
}

export async function api(path, { method = "GET", body } = {}) {
  const init = { method, headers: headers(body === undefined ? {} : { "Content-Type": "application/json" }) };
  if (body !== undefined) init.body = JSON.stringify(body);
  let response;
  try {
    response = await fetch(path, init);
  } catch (err) {
    throw new ApiError(0, "the gateway did not answer (" + err.message + ")");
  }
  if (!response.ok) throw await failure(response);
  return response.json();
}

// A file the API answers (a report export) as a Blob, with the name the gateway gives it.
export async function apiFile(path) {
  let response;
  try {
    response = await fetch(path, { headers: headers({ Accept: "*/*" }) });
  } catch (err) {
    throw new ApiError(0, "the gateway did not answer (" + err.message + ")");
  }
  if (!response.ok) throw await failure(response);
  const disposition = response.headers.get("Content-Disposition") || "";
  const named = disposition.match(/filename="?([^";]+)"?/);
  return { blob: await response.blob(), filename: named ? named[1] : "report" };
}

// One SSE message block ("event:", "id:", "data:" lines) as {type, id, data}.
function parseBlock(block) {
  const out = { type: "message", id: null, data: "" };
  const data = [];
  for (const line of block.split("\n")) {
    if (!line || line.startsWith(":")) continue;
    const i = line.indexOf(":");
    const field = i < 0 ? line : line.slice(0, i);
    const value = i < 0 ? "" : line.slice(i + 1).replace(/^ /, "");
    if (field === "event") out.type = value;
    else if (field === "id") out.id = value;
    else if (field === "data") data.push(value);
  }
  out.data = data.join("\n");
  return data.length ? out : null;
}

// Reads the job's event stream until it ends; calls onEvent(event, id) for each event.
// Sends Last-Event-ID when resuming, so a gateway that supports it skips what was seen.
// onOpen(), if given, is called once the gateway has accepted the stream.
export async function streamEvents(jobId, { onEvent, onOpen, signal, lastEventId }) {
  const extra = { Accept: "text/event-stream" };
  if (lastEventId) extra["Last-Event-ID"] = lastEventId;
  const response = await fetch("/api/research/jobs/" + jobId + "/events", { headers: headers(extra), signal });
  if (!response.ok) throw await failure(response);
  if (onOpen) onOpen();
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, "\n");
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const message = parseBlock(buffer.slice(0, cut));
      buffer = buffer.slice(cut + 2);
      if (!message) continue;
      let event;
      try {
        event = JSON.parse(message.data);
      } catch (err) {
        console.warn("skipped an event that is not JSON", message.data, err);
        continue;
      }
      onEvent(event, message.id);
    }
  }
}
