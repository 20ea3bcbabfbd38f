// The players page: find a player, see what they have, and (an admin) look after them.
// Every change answers with the player as now stored, so the page shows what the server has.
import { announce, api, clearError, el, errorText, fillTable, isAdmin, ready, showError, signedIn, siteURL, timeText } from "./console.js";

const search = document.getElementById("search");
const searchError = document.getElementById("search-error");
const results = document.getElementById("results");
const playerSection = document.getElementById("player");
const playerError = document.getElementById("player-error");
let shown = null;  // the public id of the player shown

await signedIn();

search.addEventListener("submit", async (event) => {
  event.preventDefault();
  clearError(searchError);
  const query = search.elements.query.value.trim();
  if (!query) {
    showError(searchError, "Type a player id, a display name or a device number.");
    return;
  }
  const answer = await api("GET", `/api/players?query=${encodeURIComponent(query)}`);
  if (answer.status !== 200) {
    showError(searchError, errorText(answer));
    return;
  }
  const players = answer.body.players;
  if (players.length === 1) {
    results.hidden = true;
    await showPlayer(players[0].id);
    return;
  }
  fillTable(document.getElementById("results-table"), players, (player) => [
    el("td", {}, el("a", { href: `?id=${encodeURIComponent(player.id)}`, onclick: (click) => {
      click.preventDefault();
      showPlayer(player.id);
    } }, player.displayName)),
    el("td", {}, player.id),
    el("td", {}, timeText(player.createdAt)),
  ], "No player matches.");
  results.hidden = false;
  playerSection.hidden = true;
  document.getElementById("results-heading").textContent = players.length === 0 ? "No player found" : `${players.length} players found`;
  document.getElementById("results-heading").focus();
});

async function showPlayer(id) {
  const answer = await api("GET", `/api/players/${encodeURIComponent(id)}`);
  if (answer.status !== 200) {
    showError(searchError, errorText(answer));
    return;
  }
  render(answer.body);
  history.replaceState(null, "", `?id=${encodeURIComponent(id)}`);
  document.getElementById("player-heading").focus();
}

function render(detail) {
  shown = detail.player.id;
  clearError(playerError);
  document.getElementById("player-heading").textContent = `Player ${detail.player.displayName}`;
  const facts = [
    ["Id", detail.player.id],
    ["Display name", detail.player.displayName],
    ["Joined", timeText(detail.player.createdAt)],
    ["Free plays left today", detail.freePlaysLeftToday == null ? "not counted: unlimited play" : String(detail.freePlaysLeftToday)],
    ["Unlimited play", detail.unlimited ? `since ${timeText(detail.unlimited.grantedAt)} (${detail.unlimited.source}: ${detail.unlimited.reference})` : "no"],
    ["Running now", detail.runningGames.length ? gameLinks(detail.runningGames, "watch") : "no game"],
  ];
  document.getElementById("player-facts").replaceChildren(...facts.flatMap(([term, value]) => [el("dt", {}, term), el("dd", {}, value)]));
  fillTable(document.getElementById("devices-table"), detail.devices, (device) => {
    const name = `${device.id}${device.label ? ` (${device.label})` : ""}`;
    let action = el("td");
    if (!device.revokedAt && isAdmin()) {
      const button = el("button", { type: "button", className: "danger" }, "Revoke");
      button.setAttribute("aria-label", `Revoke device ${name}`);
      button.addEventListener("click", () => revoke(device.id, name));
      action = el("td", {}, button);
    }
    return [el("td", {}, name), el("td", {}, timeText(device.createdAt)), el("td", {}, timeText(device.lastSeenAt)),
            el("td", {}, device.revokedAt ? `revoked ${timeText(device.revokedAt)}` : "signed in"), action];
  }, "No device.");
  fillTable(document.getElementById("games-table"), detail.recentGames, (game) => [
    el("td", {}, gameLink(game.id, "replay"), game.practice ? " (practice)" : ""), el("td", {}, game.level),
    el("td", { className: "number" }, String(game.score)), el("td", {}, timeText(game.endedAt)),
  ], "No game stored yet.");
  fillTable(document.getElementById("orders-table"), detail.orders, (order) => [
    el("td", {}, order.id), el("td", {}, order.status), el("td", { className: "number" }, order.amount),
    el("td", {}, timeText(order.createdAt)), el("td", {}, timeText(order.paidAt)),
  ], "No order.");
  playerSection.hidden = false;
}

/** A game's id, linked to its watch or replay page on the players' site when the server
 * knows the site's address (games stored before ids were kept, "#ROW", have no page). */
function gameLink(id, page) {
  const site = siteURL();
  if (!site || id.startsWith("#")) return id;
  const verb = page === "watch" ? "Watch" : "Replay";
  const link = el("a", { href: `${site}/${page}.html?game=${encodeURIComponent(id)}` }, id);
  link.setAttribute("aria-label", `${verb} game ${id} on the players' site`);
  return link;
}

function gameLinks(ids, page) {
  const span = el("span");
  ids.forEach((id, index) => span.append(...(index ? [", "] : []), gameLink(id, page)));
  return span;
}

/** Sends a change; on success shows the player as stored and says what happened. */
async function change(path, body, said) {
  clearError(playerError);
  const answer = await api("POST", path, body);
  if (answer.status !== 200) {
    showError(playerError, errorText(answer));
    return false;
  }
  render(answer.body.player);
  announce(answer.body.changed ? said : "Nothing changed: it was already so.");
  return true;
}

async function revoke(deviceID, name) {
  if (!confirm(`Revoke device ${name}? Its token stops signing in and its open games disconnect.`)) return;
  if (await change(`/api/players/${encodeURIComponent(shown)}/devices/${deviceID}/revoke`, undefined, `Device ${name} revoked.`)) {
    document.getElementById("devices-heading").setAttribute("tabindex", "-1");
    document.getElementById("devices-heading").focus();
  }
}

document.getElementById("grant").addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = event.target;
  if (await change(`/api/players/${encodeURIComponent(shown)}/unlimited`, { reason: form.elements.reason.value }, "Unlimited play granted.")) form.reset();
});

document.getElementById("rename").addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = event.target;
  if (await change(`/api/players/${encodeURIComponent(shown)}/name`, { displayName: form.elements.displayName.value }, "Display name changed.")) form.reset();
});

const asked = new URLSearchParams(location.search).get("id");
if (asked) await showPlayer(asked);
ready();
