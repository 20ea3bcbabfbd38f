// The audit log page: newest first, a page of 100 at a time.
import { announce, api, el, errorText, ready, showError, signedIn, timeText } from "./console.js";

const table = document.getElementById("audit-table");
const older = document.getElementById("older");
const errorBox = document.getElementById("audit-error");
const pageSize = 100;
let oldestShown = null;

await signedIn();

function row(entry) {
  return el("tr", {}, el("td", {}, timeText(entry.at)), el("td", {}, entry.actor), el("td", {}, entry.action),
            el("td", {}, entry.subject), el("td", {}, entry.before ?? "—"), el("td", {}, entry.after ?? "—"));
}

async function load() {
  const query = oldestShown === null ? `limit=${pageSize}` : `limit=${pageSize}&before=${oldestShown}`;
  const answer = await api("GET", `/api/audit?${query}`);
  if (answer.status !== 200) {
    showError(errorBox, errorText(answer));
    return;
  }
  const entries = answer.body.entries;
  const body = table.tBodies[0];
  if (oldestShown === null && entries.length === 0) {
    body.replaceChildren(el("tr", {}, el("td", { colSpan: 6 }, "No change has been made yet.")));
  } else {
    body.append(...entries.map(row));
  }
  if (entries.length > 0) oldestShown = entries[entries.length - 1].id;
  older.hidden = entries.length < pageSize;
  return entries.length;
}

older.addEventListener("click", async () => {
  const count = await load();
  announce(`${count} older changes shown.`);
});

await load();
ready();
