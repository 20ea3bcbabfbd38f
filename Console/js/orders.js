// The orders page: the latest orders by state, one with the provider's events, mark paid.
import { announce, api, clearError, el, errorText, fillTable, isAdmin, ready, showError, signedIn, timeText } from "./console.js";

const errorBox = document.getElementById("orders-error");
const orderError = document.getElementById("order-error");
const filter = document.getElementById("filter");
let shown = null;

await signedIn();

async function load() {
  const status = filter.elements.status.value;
  const answer = await api("GET", `/api/orders${status ? `?status=${status}` : ""}`);
  if (answer.status !== 200) {
    showError(errorBox, errorText(answer));
    return false;
  }
  clearError(errorBox);
  fillTable(document.getElementById("orders-table"), answer.body.orders, (order) => [
    el("td", {}, el("a", { href: `?order=${encodeURIComponent(order.id)}`, onclick: (click) => {
      click.preventDefault();
      showOrder(order.id);
    } }, order.id)),
    el("td", {}, order.playerID
      ? el("a", { href: `/players.html?id=${encodeURIComponent(order.playerID)}` }, `${order.playerName} (${order.playerID})`)
      : "—"),
    el("td", {}, order.status), el("td", { className: "number" }, order.amount),
    el("td", {}, timeText(order.createdAt)), el("td", {}, timeText(order.paidAt)),
  ], "No order.");
  return true;
}

function render(detail) {
  const order = detail.order;
  shown = order.id;
  document.getElementById("order-heading").textContent = `Order ${order.id}`;
  const facts = [["Player", `${order.playerName} (${order.playerID})`], ["State", order.status], ["Amount", order.amount],
    ["Discount code", order.discountCode ?? "none"], ["Made", timeText(order.createdAt)], ["Paid", timeText(order.paidAt)],
    ["Paid by", order.paidBy ?? "—"]];
  document.getElementById("order-facts").replaceChildren(...facts.flatMap(([term, value]) => [el("dt", {}, term), el("dd", {}, value)]));
  fillTable(document.getElementById("events-table"), detail.events, (event) => [
    el("td", {}, event.id), el("td", {}, event.type), el("td", {}, timeText(event.receivedAt)),
  ], "No event from the provider names this order.");
  // Only an admin may, and only while it is unpaid.
  document.querySelector("#order [data-needs=admin]").hidden = !isAdmin() || order.status === "paid";
  document.getElementById("order").hidden = false;
}

async function showOrder(id) {
  clearError(orderError);
  const answer = await api("GET", `/api/orders/${encodeURIComponent(id)}`);
  if (answer.status !== 200) {
    showError(errorBox, errorText(answer));
    return;
  }
  render(answer.body);
  history.replaceState(null, "", `?order=${encodeURIComponent(id)}`);
  document.getElementById("order-heading").focus();
}

filter.addEventListener("submit", async (event) => {
  event.preventDefault();
  if (await load()) {
    document.getElementById("list-heading").focus();
    announce("Orders shown.");
  }
});

document.getElementById("mark-paid").addEventListener("submit", async (event) => {
  event.preventDefault();
  clearError(orderError);
  const answer = await api("POST", `/api/orders/${encodeURIComponent(shown)}/mark-paid`, { reason: event.target.elements.reason.value });
  if (answer.status !== 200) {
    showError(orderError, errorText(answer));
    return;
  }
  event.target.reset();
  render(answer.body.order);
  await load();
  announce(answer.body.changed ? `Order ${shown} marked paid.` : `Order ${shown} was already paid.`);
});

await load();
const asked = new URLSearchParams(location.search).get("order");
if (asked) await showOrder(asked);
ready();
