// What every console page shares: the API with its session and CSRF token, the signed-in
// operator in the header, sign-out, and one polite live region for what just happened.
// The session itself is an HttpOnly cookie: no script here can read it.

let session = null;

/** Calls the console's API; resolves to { status, body }. Changes carry the CSRF token. */
export async function api(method, path, body) {
  const headers = {};
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (method !== "GET" && session) headers["X-CSRF-Token"] = session.csrfToken;
  const reply = await fetch(path, {
    method, headers, credentials: "same-origin",
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await reply.text();
  let parsed = null;
  try { parsed = text ? JSON.parse(text) : null; } catch { parsed = null; }
  if (reply.status === 401 && path !== "/api/session") goToSignIn();
  return { status: reply.status, body: parsed };
}

/** The error's message from an API answer, in words. */
export function errorText(answer) {
  return answer.body?.error?.message ?? `The server answered ${answer.status}.`;
}

function goToSignIn() {
  const here = location.pathname.replace(/^\//, "") + location.search;
  location.assign(`/sign-in.html?next=${encodeURIComponent(here)}`);
}

/** The console's pages, in the order the navigation lists them. */
export const PAGES = [
  { path: "/index.html", title: "Overview" },
  { path: "/players.html", title: "Players" },
  { path: "/codes.html", title: "Codes" },
  { path: "/orders.html", title: "Orders" },
  { path: "/audit.html", title: "Audit log" },
];

/** Fills the page's header: the site's name, the navigation (this page marked) and a place
 * for who is signed in. One copy for every page. */
function fillHeader() {
  const header = document.querySelector("header.console");
  const here = location.pathname === "/" ? "/index.html" : location.pathname;
  const list = el("ul");
  for (const page of PAGES) {
    const link = el("a", { href: page.path }, page.title);
    if (page.path === here) link.setAttribute("aria-current", "page");
    list.append(el("li", {}, link));
  }
  const nav = el("nav", {}, list);
  nav.setAttribute("aria-label", "Console");
  const who = el("div", { className: "who" });
  who.dataset.part = "who";
  header.replaceChildren(el("p", { className: "site" }, "RetroRapid console"), nav, who);
}

/** Loads the session (or goes to sign-in), fills the header, wires sign-out. */
export async function signedIn() {
  const answer = await api("GET", "/api/session");
  if (answer.status !== 200) {
    goToSignIn();
    return new Promise(() => {});  // the page is leaving
  }
  session = answer.body;
  fillHeader();
  const who = document.querySelector("[data-part=who]");
  if (who) {
    const name = document.createElement("span");
    name.textContent = `Signed in as ${session.operator.name} (${session.operator.role})`;
    const out = document.createElement("button");
    out.type = "button";
    out.className = "secondary";
    out.textContent = "Sign out";
    out.addEventListener("click", async () => {
      await api("DELETE", "/api/session");
      location.assign("/sign-in.html");
    });
    who.replaceChildren(name, out);
  }
  for (const part of document.querySelectorAll("[data-needs=admin]")) part.hidden = !isAdmin();
  return session;
}

/** The players' site (`--public-base-url`), or null when the server was not told it. */
export function siteURL() {
  return session?.site ?? null;
}

export function isAdmin() {
  return session?.operator.role === "admin";
}

/** Says `text` in the page's live region (and shows it there). */
export function announce(text) {
  const region = document.getElementById("status");
  region.textContent = "";
  // A fresh text node, after the clear, so the same words said twice are heard twice.
  requestAnimationFrame(() => { region.textContent = text; });
}

/** Shows an error in `box` (role=alert) and moves focus there so it is read at once. */
export function showError(box, text) {
  box.textContent = text;
  box.hidden = false;
  box.focus();
}

export function clearError(box) {
  box.textContent = "";
  box.hidden = true;
}

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short", timeZone: "UTC" });

/** A stored time as an operator reads it, in UTC as the database keeps it. */
export function timeText(iso) {
  return iso ? `${dateFormat.format(new Date(iso))} UTC` : "—";
}

/** Builds an element: el("td", { className: "number" }, "12"). */
export function el(name, properties = {}, ...children) {
  const element = Object.assign(document.createElement(name), properties);
  element.append(...children.filter((child) => child !== null && child !== undefined));
  return element;
}

/** Fills `table`'s body with one row per item (`cells` gives each row's cells). */
export function fillTable(table, items, cells, emptyText) {
  const body = table.tBodies[0];
  if (items.length === 0) {
    const columns = table.tHead.rows[0].cells.length;
    body.replaceChildren(el("tr", {}, el("td", { colSpan: columns }, emptyText)));
    return;
  }
  body.replaceChildren(...items.map((item) => el("tr", {}, ...cells(item))));
}

/** Marks the page as loaded and filled (what the browser tests wait for). */
export function ready() {
  document.documentElement.dataset.ready = "true";
}
