// The host page of a Pi session's MCP views (apps/page-server.ts serves it; apps/views.ts drives it). It only relays:
// each view's bridge runs in Pi (the official app bridge), and this page carries its messages between Pi (events in,
// posts out) and the view's sandbox frame, checking that each one comes from that frame and its origin.
const base = location.pathname.endsWith("/") ? location.pathname : `${location.pathname}/`;
const list = document.getElementById("views");
const session = document.getElementById("session");
/** id → { id, card, frame, origin, status } */
const views = new Map();
let pageId;
let over = false;

const events = new EventSource(`${base}events`);
events.onmessage = (event) => handle(JSON.parse(event.data));
events.onerror = () => {
  if (!over) session.textContent = "Disconnected from Pi: trying again…";
};

function handle(event) {
  if (event.type === "hello") {
    pageId = event.page;
    session.textContent = "Connected to Pi. Views opened from this session appear here.";
    applyTheme(event.theme);
    for (const view of views.values()) view.card.remove();
    views.clear();
  } else if (event.type === "view") addView(event);
  else if (event.type === "message") views.get(event.id)?.frame.contentWindow?.postMessage(event.message, views.get(event.id).origin);
  else if (event.type === "size") resize(views.get(event.id), event);
  else if (event.type === "status") setStatus(views.get(event.id), event.text, event.level);
  else if (event.type === "remove") removeView(event.id);
  else if (event.type === "theme") applyTheme(event.theme);
  else if (event.type === "end") end(event.text);
}

function addView({ id, title, url, allow, prefersBorder }) {
  const card = document.createElement("section");
  card.className = prefersBorder === false ? "view borderless" : "view";
  card.dataset.view = id;
  const heading = document.createElement("h2");
  heading.textContent = title;
  const status = document.createElement("p");
  status.className = "status";
  const frame = document.createElement("iframe");
  frame.setAttribute("sandbox", "allow-scripts allow-same-origin allow-forms");
  if (allow) frame.setAttribute("allow", allow);
  frame.title = title;
  frame.src = url;
  card.append(heading, status, frame);
  // A view opened again (a later call of the same tool, a page reload) takes the place of the one before.
  const previous = [...views.values()].find((view) => view.card.querySelector("h2").textContent === title);
  if (previous) {
    previous.card.replaceWith(card);
    views.delete(previous.id);
  } else list.prepend(card);
  views.set(id, { id, card, frame, origin: new URL(url).origin, status });
}

function removeView(id) {
  views.get(id)?.card.remove();
  views.delete(id);
}

function resize(view, { height }) {
  if (view && typeof height === "number" && height > 0) view.frame.style.height = `${Math.min(Math.ceil(height), 4000)}px`;
}

function setStatus(view, text, level = "info") {
  if (!view) return;
  view.status.textContent = text;
  view.status.dataset.level = level;
}

function applyTheme(theme) {
  document.documentElement.dataset.theme = theme === "light" ? "light" : "dark";
}

function end(text) {
  over = true;
  events.close();
  session.textContent = text;
  for (const view of views.values()) {
    view.card.classList.add("ended");
    view.frame.remove();
  }
}

// A view's messages reach Pi only from its own sandbox frame, from that frame's origin.
addEventListener("message", (event) => {
  const view = [...views.values()].find((candidate) => candidate.frame.contentWindow === event.source);
  if (!view) return refuseStray(event);
  if (event.origin !== view.origin) return setStatus(view, `Refused a message from ${event.origin}: not this view's origin.`, "warning");
  if (over || !pageId) return;
  fetch(`${base}message`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ page: pageId, view: view.id, message: event.data }),
  })
    .then((response) => {
      if (!response.ok && response.status !== 409)
        setStatus(view, `Pi refused a message of this view (HTTP ${response.status}).`, "warning");
    })
    .catch(() => setStatus(view, "Pi did not get a message of this view: the session may have ended.", "warning"));
});

/** A message from a frame that is no view's sandbox: a view posting past its sandbox, or another page. */
function refuseStray(event) {
  const view = [...views.values()].find((candidate) => isInside(event.source, candidate.frame.contentWindow));
  const text = `Refused a message from ${event.origin || "an unknown origin"}: it did not come through a view's sandbox.`;
  if (view) setStatus(view, text, "warning");
  else session.textContent = text;
}

function isInside(source, frameWindow) {
  try {
    for (let at = source; at && at !== window; at = at.parent) if (at === frameWindow) return true;
  } catch {
    // A window of another origin whose parent cannot be read is no view's.
  }
  return false;
}
